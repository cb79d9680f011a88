"""The hub application: JupyterHub, with two of its routes served by the portal's handlers.

Two paths that JupyterHub (or batchspawner, when imported) already serves need the portal's
own handler at the same path:

- `/api/batchspawner`, where a starting job reports its port. batchspawner's handler sets any
  attribute the job posts on its server's spawner; here that spawner is the wrapper, whose
  `child_class` and `child_config` decide what the hub itself runs on the next start. The
  portal's handler takes exactly `{"port": N}` (gpuportal_spawner.port_handler).
- the DELETE of a server (`/api/users/NAME/server`, `.../servers/NAME`), whose handler gives a
  pending spawn one second to end after cancelling it (gpuportal_spawner.stop_handler).

JupyterHub has no setting for this: `extra_handlers` are routed after its own handlers, so one
at a path it already serves is never reached. `init_handlers` is the method that composes the
routes; this subclass puts the portal's two first (tornado takes the first route that matches)
and leaves JupyterHub's and batchspawner's lists as they are.

Its log handlers redact secrets in every line (gpuportal_core.log_secrets). It keeps a SQLite
database in write-ahead-log mode (gpuportal_spawner.hub_db), and at its start makes the
changes of JupyterHub's and certipy's own code that gpuportal_spawner.compat keeps, each while
its library is the one it was written for: each request's user found by one id query
(gpuportal_spawner.user_lookup), internal TLS keys EC P-256 rather than RSA-2048
(gpuportal_spawner.internal_keys).
"""

from __future__ import annotations

from typing import Any

from jupyterhub.apihandlers import default_handlers
from jupyterhub.apihandlers.users import UserServerAPIHandler
from jupyterhub.app import JupyterHub

from gpuportal_core import log_secrets
from gpuportal_spawner import compat
from gpuportal_spawner.hub_db import use_wal
from gpuportal_spawner.port_handler import CALLBACK_PATH, PortCallbackHandler
from gpuportal_spawner.stop_handler import StopAfterSpawnHandler


def own_routes() -> list[tuple[str, Any]]:
    """The portal's handlers, at the paths of the handlers they take the place of."""
    server_paths = [entry[0] for entry in default_handlers if entry[1] is UserServerAPIHandler]
    compat.routes_taken_over(server_paths)
    return [(CALLBACK_PATH, PortCallbackHandler)] + [
        (path, StopAfterSpawnHandler) for path in server_paths
    ]


class GpuPortalHub(JupyterHub):
    """JupyterHub with the portal's port callback and server stop, its users found by id,
    SQLite in WAL mode and EC keys for internal TLS (see the module's text)."""

    def init_logging(self) -> None:
        super().init_logging()
        # Tornado's and the services' lines pass through the hub's handlers too: no sign-in
        # code, state or token is written out (gpuportal_core.log_secrets).
        log_secrets.install(self.log)
        # First thing once the log is set up: before the hub makes its certificates (certipy's
        # keys) and serves a request (JupyterHub's user lookups).
        compat.install(self.log, internal_ssl=self.internal_ssl)

    def init_db(self) -> None:
        super().init_db()
        if use_wal(self.db.get_bind()):
            self.log.info("The hub's SQLite database: write-ahead log, synchronous=NORMAL")

    def init_handlers(self) -> None:
        super().init_handlers()
        self.handlers[:0] = self.add_url_prefix(self.hub_prefix, own_routes())


def plain_jupyterhub() -> bool:
    """Whether a JupyterHub runs in this process without the portal's routes: started as
    `jupyterhub -f`, not `gpuportal-hub -f` (False where no hub runs, as in unit tests)."""
    return bool(JupyterHub.initialized()) and not isinstance(JupyterHub.instance(), GpuPortalHub)
