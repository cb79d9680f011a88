"""dask-dashboard/<port>/: the Dask dashboard of one of the user's clusters, through the hub.

The generic /proxy/<port>/ is closed (gpuportal_session.server_guard): it reached any port of the
node. A Dask scheduler started in a notebook (gpuportal_session.dask_setup) serves its dashboard
on 127.0.0.1 at a port of its own choosing, so this route proxies a port only while a process of
this user listens on it at 127.0.0.1: another user's server, the hub or the portal are never
reached through it. jupyter-server-proxy's handler carries the requests (the dashboard's
websockets too), and the Jupyter server checks the user on every one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_server.utils import url_path_join
from jupyter_server_proxy.handlers import AddSlashHandler, ProxyHandler
from tornado import web

ROUTE = "dask-dashboard"
NOT_YOURS = (
    "No Dask dashboard of yours listens on this port (is the cluster closed?). Its link is "
    "cluster.dashboard_link in the notebook that started it."
)
LISTEN = "0A"  # the TCP state "listening" in /proc/net/tcp
LOOPBACK = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it
LOOPBACK_HOST = "127.0.0.1"


def own_loopback_listeners(uid: int, table: Path = Path("/proc/net/tcp")) -> set[int]:
    """Ports listened on at 127.0.0.1 by processes of uid (the kernel's own table)."""
    ports = set()
    for line in table.read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8 or fields[3] != LISTEN or int(fields[7]) != uid:
            continue
        address, port = fields[1].split(":")
        if address == LOOPBACK:
            ports.add(int(port, 16))
    return ports


class DashboardProxyHandler(ProxyHandler):  # type: ignore[misc]
    """jupyter-server-proxy's handler, to 127.0.0.1 only, for pages and websockets alike."""

    def _only_own(self, port: str) -> None:
        if int(port) not in own_loopback_listeners(os.getuid()):
            raise web.HTTPError(404, NOT_YOURS)
        # Where the dashboard is, for the redirects it sends (to status/, and so on).
        self.proxy_base = url_path_join(ROUTE, port)

    def proxy(self, port: str, proxied_path: str) -> Any:
        self._only_own(port)
        return super().proxy(LOOPBACK_HOST, port, proxied_path)

    async def open(self, port: str, proxied_path: str) -> Any:
        self._only_own(port)
        return await self.proxy_open(LOOPBACK_HOST, port, proxied_path)

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
