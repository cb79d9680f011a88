"""How long a hub login lasts: `PORTAL_SESSION_HOURS` from the login (JupyterHub's
`cookie_max_age_days`, set by the config), and until `PORTAL_SESSION_IDLE_HOURS` without a
request of the person's own.

The person's requests are those their browser makes (gpuportal_spawner.request_log notes each):
with the hub's login cookie, or with a token the browser was given at a login (its OAuth
`session_id`) that a server or the portal checks with the hub (`/hub/api/user`, at most every
few minutes while the browser uses them). A session's own calls (its activity, GPU readings,
the lab's notebook jobs) and tokens from the Token page are not the person and keep no login
alive: before, a running session kept its user's login open for good.

The check is the authenticators' `refresh_user`, which JupyterHub calls before it serves a
request once the user's last refresh is `auth_refresh_age` old (5 minutes in the demo): a user
idle for hours is always checked at their next request. Past the limit, the user's hub logins
end (`end_logins`), every browser's (JupyterHub finds a login by the user's cookie id: a new
one), with the tokens those logins gave the portal and the user's servers, and the request is
sent to the login page. Their running servers keep running, and so do the tokens made on the
token page.

A hub that starts again counts its users as seen at their first request. The record is the
hub's (gpuportal_spawner.hub_state), as every hub in a process keeps its own.
"""

from __future__ import annotations

import time
from typing import Any

from jupyterhub import orm
from jupyterhub.utils import new_token

from gpuportal_spawner.hub_state import hub_state

# Where a server or the portal asks the hub who a browser's token belongs to.
IDENTIFY_PATH = "/hub/api/user"


def end_logins(db: Any, user: Any) -> int:
    """End every hub login of the user, in every browser (a new cookie id), and the tokens
    those logins gave the portal and the user's servers (their OAuth session_id); tokens made
    on the Token page keep their own expiry. The count of tokens ended."""
    user.cookie_id = new_token()
    ended = db.query(orm.APIToken).filter(
        orm.APIToken.user_id == user.id, orm.APIToken.session_id.isnot(None)
    )
    count: int = ended.delete(synchronize_session=False)
    db.commit()
    return count


def by_the_person(handler: Any) -> bool:
    """Whether the request came from the person's browser: the hub's login cookie, or a token
    of one of their logins checked by a server or the portal."""
    if not getattr(handler, "_token_authenticated", False):
        return True
    if handler.request.path.rstrip("/") != IDENTIFY_PATH:
        return False  # a session's own call, a script's: not the person
    token = handler.get_token()  # only here: one lookup a browser's few minutes
    return token is not None and bool(token.session_id)


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
        tokens = end_logins(handler.db, user)
        handler.log.info("%s: %d token(s) of those logins ended", user.name, tokens)
        self._seen.pop(user.name, None)
        return True


def idle_logins(user: Any) -> IdleLogins:
    """The hub's record, reached through one of its users."""
    state = hub_state(user)
    if state.idle_logins is None:
        state.idle_logins = IdleLogins()
    return state.idle_logins
