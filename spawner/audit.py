"""The hub's audit stream (gpuportal_adapters.audit): audit-hub.jsonl in the folder the config
names.

gpuportal_spawner.audit.configure(state / "audit")   # in jupyterhub_config.py

A spawn's record names who started the server and as what (`started_by`). One record per
stop: the session's `stop` record says why the job ended and, for a stop the
hub's API was asked for, who asked and as what (the owner, an admin, or a service such as the
idle culler). The API's stop handler (gpuportal_spawner.stop_handler) notes the requester just
before JupyterHub stops the server; the session's stop takes the note. (A request record of
its own, beside the stop's, showed every stop twice on the audit page.)
"""

from __future__ import annotations

from typing import Any

from gpuportal_adapters.audit import AuditStream

_stream = AuditStream("hub")
configure = _stream.configure
audit = _stream.write

# Who asked for each stop under way, by (owner, server name): noted by the stop handler, taken
# by the session's stop record. At most one per server: a later request replaces it.
_asked: dict[tuple[str, str], dict[str, str]] = {}


def requester(who: Any, owner: str) -> dict[str, str]:
    """Who asks (a user or a service) for a stop of owner's server, and as what."""
    name = str(getattr(who, "name", "") or "")
    if type(who).__name__ == "Service":  # JupyterHub's own class
        role = "service"
    elif name == owner:
        role = "owner"
    else:
        role = "admin"
    return {"by": name, "role": role}


def started_by(handler: Any, owner: str) -> dict[str, str]:
    """Who asked for a start of owner's server, and as what (the owner, an admin, a service
    such as the spawn-resumer), from the request's handler JupyterHub gives the spawner while
    it starts; the hub itself where no request asked (a server resumed at its start)."""
    try:
        who = handler.current_user if handler is not None else None
    except RuntimeError:  # a handler whose user was never looked up
        who = None
    if who is None:
        return {"by": "hub", "role": "hub"}
    return requester(who, owner)


def note_stop_request(who: Any, owner: str, server: str) -> None:
    _asked[(owner, server)] = requester(who, owner)


def stop_requested_by(owner: str, server: str) -> dict[str, str]:
    """The note for this server's stop, taken ({} when the stop came from elsewhere)."""
    return _asked.pop((owner, server), {})
