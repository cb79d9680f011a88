"""A Jupyter server extension of the session: what the server must not offer.

jupyter-server-proxy serves any local port at /proxy/<port>/ (and other hosts at
/proxy/<host>:<port>/) and has no setting to turn that off. Through it a session reached the
hub's API and the portal's own ports. Here those routes answer 404, and only named tools
(TensorBoard) are proxied. singleuser.run_singleuser enables this extension.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.utils import url_path_join
from tornado import web
from tornado.routing import PathMatches, Rule

CLOSED_MESSAGE = (
    "This cluster does not serve a session's ports at /proxy/<port>/: anything listening "
    "there would be reachable through your server. Open TensorBoard from the launcher instead."
)


class GenericProxyClosed(web.RequestHandler):
    def prepare(self) -> None:
        self.set_status(404)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(CLOSED_MESSAGE)


def close_generic_proxy(web_app: web.Application) -> None:
    """Put a 404 for /proxy/... ahead of every other route, jupyter-server-proxy's included."""
    pattern = url_path_join(web_app.settings["base_url"], r"/proxy/.*")
    router = web_app.default_router
    router.rules.insert(0, router.process_rule(Rule(PathMatches(pattern), GenericProxyClosed)))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gpuportal_session.server_guard"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    close_generic_proxy(serverapp.web_app)
    serverapp.log.info("gpuportal: /proxy/<port>/ is closed; named tools only")
