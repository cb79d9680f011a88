"""Named servers whose spawn page was opened but that were never started, removed.

JupyterHub makes a named server's record as soon as `/hub/spawn/USER/NAME` is viewed
(SpawnHandler.get creates the spawner before it shows the form), and keeps it when the user
goes elsewhere: the hub's API and admin page then list a server NAME that never ran. The home
page hides such records (GpuProfilesSpawner.ever_started); this sweep, run by the hub-managed
spawn-resumer service, removes them through the hub's REST API as any admin tool would (DELETE
with `remove`), so that no route of JupyterHub's needs replacing. A user still on that form
loses nothing: its Start makes the record again (SpawnHandler.post).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from gpuportal_adapters.token_calls import CallFailed
from gpuportal_core.boards import is_board
from gpuportal_spawner.hub_users import Call, each_user

# What a server's state keeps when a record that never ran still means something: why its
# last start ended (the home page's card), a queued job to take back after a hub restart
# (gpuportal_spawner.profiles_spawner).
KEPT = ("last_note", "resume_job_id")


def never_started(name: str, server: dict[str, Any]) -> bool:
    """A named server's model (with its state) that was never started: no start asked for
    (JupyterHub keeps a start's options), none under way, nothing kept in its state."""
    state = server.get("state") or {}
    return bool(
        name
        and not is_board(name)
        and not server.get("ready")
        and not server.get("pending")
        and not server.get("started")
        and not server.get("user_options")
        and not any(state.get(key) for key in KEPT)
    )


async def sweep(call: Call, seen: set[tuple[str, str]]) -> list[str]:
    """Remove every named server found never started by this look and the one before (seen:
    what the last look found; updated), so that a form opened a moment ago is left alone;
    "user/name" of each one removed.

    Each one's model is asked for again just before: a DELETE with `remove` stops a server
    that runs, so one started since the list is kept. A refused DELETE (the hub answers 400
    for a start under way) is left for the next look.
    """
    found: set[tuple[str, str]] = set()
    async for listed in each_user(call, "include_stopped_servers=1"):
        for name, server in (listed.get("servers") or {}).items():
            if never_started(name, server or {}):
                found.add((listed["name"], name))
    due = sorted(found & seen)
    seen.clear()
    seen.update(found - set(due))
    removed = []
    for user, name in due:
        path = f"/users/{quote(user)}/servers/{quote(name)}"
        model = await call("GET", f"/users/{quote(user)}?include_stopped_servers=1", None)
        if not never_started(name, (model.get("servers") or {}).get(name) or {}):
            continue
        try:
            await call("DELETE", path, {"remove": True})
        except CallFailed:
            seen.add((user, name))
            continue
        removed.append(f"{user}/{name}")
    return removed
