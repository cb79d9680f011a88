"""Nothing of a session's Dask listens on an open TCP port of a node (issue 33, 4).

Dask's scheduler and each worker start an HTTP server on TCP (the dashboard; a worker's own
pages, metrics and health), and any user with a job on the node could read it, at 127.0.0.1 as
well. This module is a Dask preload (Dask's own hook: `distributed.scheduler.preload` and
`distributed.worker.preload`, set by gpuportal_session.dask_setup), run in each as it starts,
after its HTTP server: the scheduler's dashboard moves to a 0600 unix socket in the session's
0700 folder on the node, named by the port Dask picked (so the dashboard link keeps its number),
which the session's own server proxies (gpuportal_session.dask_dashboard); a worker's HTTP
server stops listening (nothing of the session reads it).

Between Dask's start of its server and this preload, the scheduler listens at 127.0.0.1 on a
port it picked a moment before, for the few milliseconds until its start returns to the notebook.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SOCKETS_ENV = "GPUPORTAL_DASK_SOCKETS"


def socket_path(folder: Path, port: int) -> Path:
    return folder / f"dashboard-{port}.sock"


def sockets_folder() -> Path | None:
    """The session's folder for dashboard sockets (dask_setup makes it), if this is a session."""
    folder = os.environ.get(SOCKETS_ENV, "")
    return Path(folder) if folder else None


def dask_setup(server: Any) -> None:
    """Dask calls this in each scheduler and worker of the session as it starts."""
    # Here, not at the top: gpuportal-singleuser imports this module's names before Dask (or
    # tornado) is needed at all, and a session environment may carry neither.
    from distributed import Scheduler
    from tornado.netutil import bind_unix_socket

    http = getattr(server, "http_server", None)
    if http is None:
        return
    port = int(getattr(http, "port", 0) or 0)
    http.stop()  # its TCP listeners closed; the server object stays, for a socket of its own
    folder = sockets_folder()
    if isinstance(server, Scheduler) and folder is not None and port:
        path = socket_path(folder, port)
        http.add_socket(bind_unix_socket(str(path), mode=0o600))


def dask_teardown(server: Any) -> None:
    folder = sockets_folder()
    port = int(getattr(getattr(server, "http_server", None), "port", 0) or 0)
    if folder is not None and port:
        socket_path(folder, port).unlink(missing_ok=True)
