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


def generic_proxy_closed(web_app: web.Application) -> Rule:
    """The route of a 404 for /proxy/..., which gpuportal_session.compat puts ahead of every
    other route, jupyter-server-proxy's included."""
    pattern = url_path_join(web_app.settings["base_url"], r"/proxy/.*")
    return web_app.default_router.process_rule(Rule(PathMatches(pattern), GenericProxyClosed))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gpuportal_session.server_guard"}]


def tools_then_server_handler(atexitasync: Any, serverapp: Any) -> Any:
    """jupyter-server-proxy's process supervisor (simpervisor) takes SIGTERM and SIGINT over
    when it starts its first tool (TensorBoard's page, VS Code, the desktop): its handler sends
    TERM to each tool, then calls `sys.exit(0)` from inside the handler. In a session that exit
    got lost: the Jupyter server went on after scancel's TERM until Slurm's KILL, so it never
    shut its kernels down or removed its private folders. This handler, in its place
    (gpuportal_session.compat), once it has told the tools, stops the server the server's own
    way (a clean shutdown) instead."""

    def tools_then_server(signum: int, frame: Any = None) -> None:
        for handler in list(atexitasync._handlers):
            handler(signum)
        serverapp._signal_stop(signum, frame)

    tools_then_server.gpuportal = True  # type: ignore[attr-defined]
    return tools_then_server


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from gpuportal_session.compat import guard_server

    guard_server(serverapp, generic_proxy_closed(serverapp.web_app))
    serverapp.log.info("gpuportal: /proxy/<port>/ is closed; named tools only")
