"""dask-dashboard/<port>/: the Dask dashboard of one of the user's clusters, through the hub.

The generic /proxy/<port>/ is closed (gpuportal_session.server_guard): it reached any port of the
node. A Dask scheduler started in a notebook serves its dashboard on a 0600 unix socket in the
session's 0700 folder on the node, named by its port (gpuportal_session.dask_private), never on
an open TCP port: this route proxies a port only to such a socket of this user's, so another
user's server, the hub or the portal are never reached through it, and no other user of the
node reaches the dashboard around it. jupyter-server-proxy's handler carries the requests (the
dashboard's websockets too), and the Jupyter server checks the user on every one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from jupyter_server.utils import url_path_join
from jupyter_server_proxy.handlers import AddSlashHandler, ProxyHandler
from tornado import web

from gpuportal_session.dask_private import socket_path, sockets_folder

ROUTE = "dask-dashboard"
NOT_YOURS = (
    "No Dask dashboard of yours listens on this port (is the cluster closed?). Its link is "
    "cluster.dashboard_link in the notebook that started it."
)
# jupyter-server-proxy asks for this host name with a unix socket.
SOCKET_HOST = "localhost"


def own_socket(port: int, folder: Path | None) -> str | None:
    """The dashboard socket of this port, if it is there and this user's own."""
    if folder is None:
        return None
    path = socket_path(folder, port)
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        return None
    return str(path)


class DashboardProxyHandler(ProxyHandler):
    """jupyter-server-proxy's handler, to the user's own dashboard sockets only, for pages and
    websockets alike."""

    def _only_own(self, port: str) -> None:
        path = own_socket(int(port), sockets_folder())
        if path is None:
            raise web.HTTPError(404, NOT_YOURS)
        self.unix_socket = path
        # Where the dashboard is, for the redirects it sends (to status/, and so on).
        self.proxy_base = url_path_join(ROUTE, port)

    def proxy(self, port: str, proxied_path: str) -> Any:
        self._only_own(port)
        return super().proxy(SOCKET_HOST, port, proxied_path)

    async def open(self, port: str, proxied_path: str) -> Any:
        self._only_own(port)
        return await self.proxy_open(SOCKET_HOST, port, proxied_path)

    async def http_get(self, port: str, proxied_path: str) -> Any:
        return await self.proxy(port, proxied_path)

    def post(self, port: str, proxied_path: str) -> Any:
        return self.proxy(port, proxied_path)

    def head(self, port: str, proxied_path: str) -> Any:
        return self.proxy(port, proxied_path)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gpuportal_session.dask_dashboard"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    base = url_path_join(serverapp.web_app.settings["base_url"], ROUTE)
    serverapp.web_app.add_handlers(
        ".*",
        [
            (base + r"/(\d+)", AddSlashHandler, {}),
            (base + r"/(\d+)/(.*)", DashboardProxyHandler, {"absolute_url": False}),
        ],
    )
