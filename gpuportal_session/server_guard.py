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


def keep_the_servers_own_signal_handling() -> None:
    """jupyter-server-proxy's process supervisor (simpervisor) takes SIGTERM and SIGINT over
    when it starts its first tool (TensorBoard's page, VS Code, the desktop), to end its
    processes and then `sys.exit(0)` from inside the handler. In a session that exit got lost:
    the Jupyter server went on after scancel's TERM until Slurm's KILL, so it never shut its
    kernels down or removed its private folders. Slurm sends TERM to every process of the job,
    tools included, so the server's own handler (a clean shutdown) is all that is needed."""
    try:
        from simpervisor import atexitasync
    except ImportError:
        return
    atexitasync.signal_handler_set = True  # simpervisor then leaves the handlers as they are


def _load_jupyter_server_extension(serverapp: Any) -> None:
    keep_the_servers_own_signal_handling()
    close_generic_proxy(serverapp.web_app)
    serverapp.log.info("gpuportal: /proxy/<port>/ is closed; named tools only")
