"""The hub's audit stream (gpuportal_adapters.audit): audit-hub.jsonl in the folder the config
names.

gpuportal_spawner.audit.configure(state / "audit")   # in jupyterhub_config.py

The spawner's own `stop` record says why a job ended but not who asked: the hub's stop reaches
it with no requester. So the hub's request log (its tornado log_function) also writes a
`stop_request` record for each accepted DELETE of a server: by whom, and as what (the owner,
an admin, or a service such as the idle culler).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from jupyterhub.log import log_request

from gpuportal_adapters.audit import AuditStream

_stream = AuditStream("hub")
configure = _stream.configure
audit = _stream.write

# DELETE /hub/api/users/NAME/server  or  .../servers/NAME (a named one)
_STOP = re.compile(r"/api/users/(?P<user>[^/]+)/server(?:s/(?P<server>[^/]+))?/?$")


def stop_request(handler: Any) -> dict[str, str] | None:
    """The audit fields of a request that stopped a server (whose, by whom, as what); None for
    any other request."""
    request = handler.request
    match = _STOP.search(request.path)
    if request.method != "DELETE" or match is None or handler.get_status() not in (202, 204):
        return None
    owner = unquote(match["user"])
    who = getattr(handler, "_jupyterhub_user", None) or handler.current_user
    name = str(getattr(who, "name", "") or "")
    if type(who).__name__ == "Service":
        role = "service"
    elif name == owner:
        role = "owner"
    else:
        role = "admin"
    return {"user": owner, "server": unquote(match["server"] or ""), "by": name, "role": role}


def log_request_and_stops(handler: Any) -> None:
    """JupyterHub's own request log, then the audit record of a stop (see above)."""
    log_request(handler)
    fields = stop_request(handler)
    if fields is not None:
        audit("stop_request", **fields)
