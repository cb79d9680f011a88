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


def stop_the_server_after_the_tools(serverapp: Any) -> None:
    """jupyter-server-proxy's process supervisor (simpervisor) takes SIGTERM and SIGINT over
    when it starts its first tool (TensorBoard's page, VS Code, the desktop): its handler sends
    TERM to each tool, then calls `sys.exit(0)` from inside the handler. In a session that exit
    got lost: the Jupyter server went on after scancel's TERM until Slurm's KILL, so it never
    shut its kernels down or removed its private folders. Here the handler, once it has told
    the tools, stops the server the server's own way (a clean shutdown) instead."""
    try:
        from simpervisor import atexitasync
    except ImportError:
        return

    def tools_then_server(signum: int, frame: Any = None) -> None:
        for handler in list(atexitasync._handlers):
            handler(signum)
        serverapp._signal_stop(signum, frame)

    atexitasync._handle_signal = tools_then_server  # installed by the first tool's start


def _load_jupyter_server_extension(serverapp: Any) -> None:
    stop_the_server_after_the_tools(serverapp)
    close_generic_proxy(serverapp.web_app)
    serverapp.log.info("gpuportal: /proxy/<port>/ is closed; named tools only")
