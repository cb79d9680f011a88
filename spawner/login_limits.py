"""How long a hub login lasts: `PORTAL_SESSION_HOURS` from the login (JupyterHub's
`cookie_max_age_days`, set by the config), and until `PORTAL_SESSION_IDLE_HOURS` without a
page or API call of the user's.

Each request the hub answers notes its user (gpuportal_spawner.request_log). The check is the
authenticators' `refresh_user`, which JupyterHub calls before it serves a request once the
user's last refresh is `auth_refresh_age` old (5 minutes in the demo): a user idle for hours is
always checked at their next request. Past the limit, the user's hub logins end, every browser's
(JupyterHub finds a login by the user's cookie id: a new one), and the request is sent to the
login page. Their running servers keep running, and so do the tokens made on the token page
and the servers' own cookies, which last as long as a login may (`oauth_token_expires_in`).

A hub that starts again counts its users as seen at their first request. The record is the
hub's (gpuportal_spawner.hub_state), as every hub in a process keeps its own.
"""

from __future__ import annotations

import time
from typing import Any

from jupyterhub.utils import new_token

from gpuportal_spawner.hub_state import hub_state


class IdleLogins:
    """When each user of the hub last made a call."""

    def __init__(self) -> None:
        self._seen: dict[str, float] = {}

    def note(self, name: str, now: float) -> None:
        self._seen[name] = now

    def idle_for(self, name: str, now: float) -> float:
        return now - self._seen.setdefault(name, now)

    def ended(self, user: Any, handler: Any, idle_seconds: float) -> bool:
        """Whether the user has been idle past idle_seconds (0: no limit); if so, their hub
        logins end now."""
        if not idle_seconds or handler is None:
            return False
        idle = self.idle_for(user.name, time.monotonic())
        if idle <= idle_seconds:
            return False
        handler.log.info(
            "%s made no page or API call for %.0f minutes: their hub logins end",
            user.name,
            idle / 60,
        )
        user.cookie_id = new_token()
        handler.db.commit()
        self._seen.pop(user.name, None)
        return True


def idle_logins(user: Any) -> IdleLogins:
    """The hub's record, reached through one of its users."""
    state = hub_state(user)
    if state.idle_logins is None:
        state.idle_logins = IdleLogins()
    return state.idle_logins
