"""Every request the hub answers: JupyterHub's log line, then what the portal notes of it,
the person's last request (gpuportal_spawner.login_limits) and an admin let into another user's
server (gpuportal_spawner.admin_entry).

Tornado calls the application's `log_function` after each request with its handler; JupyterHub
sets its own there (jupyterhub.log.log_request), which this one calls first:

    c.JupyterHub.tornado_settings["log_function"] = request_log.log_request
"""

from __future__ import annotations

import time
from typing import Any

from jupyterhub.log import log_request as jupyterhub_log_request

from gpuportal_spawner import admin_entry
from gpuportal_spawner.login_limits import by_the_person, idle_logins


def requesting_user(handler: Any) -> Any:
    """The hub user the request was made as, or None (a service, nobody, or a handler that
    never looked: JupyterHub's raises until its async lookup ran)."""
    try:
        user = handler.current_user
    except RuntimeError:
        return None
    return user if type(user).__name__ == "User" else None


def log_request(handler: Any) -> None:
    jupyterhub_log_request(handler)
    user = requesting_user(handler)
    if user is None:
        return
    if by_the_person(handler):
        idle_logins(user).note(user.name, time.monotonic())
    admin_entry.audit_entry(handler, user)
