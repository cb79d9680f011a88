"""The hub's audit stream (gpuportal_adapters.audit): audit-hub.jsonl in the folder the config
names.

gpuportal_spawner.audit.configure(state / "audit")   # in jupyterhub_config.py

One record per stop: the session's `stop` record says why the job ended and, for a stop the
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


def note_stop_request(who: Any, owner: str, server: str) -> None:
    _asked[(owner, server)] = requester(who, owner)


def stop_requested_by(owner: str, server: str) -> dict[str, str]:
    """The note for this server's stop, taken ({} when the stop came from elsewhere)."""
    return _asked.pop((owner, server), {})
