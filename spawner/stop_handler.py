"""Stop of a server whose spawn is still under way: the spawn ended first, then the stop.

JupyterHub's DELETE of a server (UserServerAPIHandler.delete) interrupts a pending spawn by
cancelling it, sleeping one second, and then stopping the server; if the cancelled spawn has
not ended within that second, the stop raises "pending spawn" and the DELETE answers 500. On a
busy hub (its event loop late by a second or more) that happens, and it does more harm than the
error: the cancelled spawn skips JupyterHub's clean-up (a cancellation is not an Exception), so
the server record stays, pointing at no JupyterLab, and the job runs on for nobody. Found by
bench/scale.py stopping 40 sessions at once while queued ones were starting.

Here the cancelled spawn is awaited (up to SPAWN_END_WAIT_S) before JupyterHub's own delete
runs, which then finds a server it can stop, or one already gone: the job ends, the answer is
202 or 204. The hub routes the two paths of JupyterHub's handler here (gpuportal_spawner.hub_app).
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyterhub.apihandlers.users import UserServerAPIHandler
from jupyterhub.scopes import needs_scope

from gpuportal_spawner.audit import note_stop_request

# Long enough for a cancelled spawn's clean-up (a Slurm command is ended, then reaped) on a
# busy hub; short enough for the request.
SPAWN_END_WAIT_S = 15.0


async def end_pending_spawn(spawner: Any, log: Any, wait_s: float = SPAWN_END_WAIT_S) -> None:
    """Cancel the spawner's spawn if one is under way, and wait until it has ended."""
    future = getattr(spawner, "_spawn_future", None)
    if spawner.pending != "spawn" or future is None or future.done():
        return
    log.warning("Interrupting the spawn of %s, to stop it", spawner._log_name)
    future.cancel()
    await asyncio.wait([future], timeout=wait_s)


class StopAfterSpawnHandler(UserServerAPIHandler):
    @needs_scope("delete:servers")  # type: ignore[untyped-decorator]
    async def delete(self, user_name: str, server_name: str = "") -> None:
        user = self.find_user(user_name)
        # Only a spawner that exists: looking one up by name would make it.
        spawner = user.spawners.get(server_name) if user is not None else None
        if spawner is not None:
            await end_pending_spawn(spawner, self.log)
            # Who asks goes into the session's `stop` record (gpuportal_spawner.audit).
            note_stop_request(self.current_user, user_name, server_name)
        await super().delete(user_name, server_name)
