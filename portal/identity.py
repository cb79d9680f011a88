"""Who a request comes from, as the hub says (HubOAuth); the portal has no login of its own.

Three kinds of callers: a browser with the portal's cookie (set after the hub's OAuth), a script
with a hub API token in the Authorization header, and the hub itself (the spawner reading
profiles), which presents the token the hub gave this service.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from jupyterhub.services.auth import HubOAuth, check_scopes

from gpuportal_portal.settings import PortalSettings

COOKIE_NAME = "gpuportal-token"
STATE_COOKIE_NAME = "gpuportal-oauth-state"

# Returns the hub's user model for a token, or None when the hub does not know it.
TokenCheck = Callable[[str], Awaitable[dict[str, Any] | None]]


class MissingScope(Exception):
    """A token the hub knows, without the scope that lets it use this service."""

    def __init__(self, scope: str) -> None:
        super().__init__(
            f"This token may not use the portal: it needs the scope '{scope}'. "
            "Make a token on the hub's Token page without narrowing its scopes, or with that one."
        )


@dataclass(frozen=True)
class Caller:
    name: str
    # A service (Prometheus) may only read the metrics: deps.api_caller refuses it elsewhere.
    kind: Literal["user", "hub", "service"]
    groups: frozenset[str] = field(default_factory=frozenset)
    is_admin: bool = False  # may edit profiles: a hub admin or in an admin group
    is_hub_admin: bool = False  # may manage the hub's users
    # How the request proved who it is: only a cookie can be sent by another site's page.
    via: Literal["header", "cookie"] = "header"
    reads_metrics: bool = False  # holds the hub's read:metrics scope


class HubIdentity:
    """Turns tokens into callers, and runs the OAuth dance with the hub for browsers."""

    def __init__(self, settings: PortalSettings, *, check_token: TokenCheck | None = None) -> None:
        self._settings = settings
        self._admin_groups = frozenset(settings.admin_groups)
        self._oauth: HubOAuth | None = None
        self._check_token = check_token or self._check_with_hub
        self._csrf_key = settings.hub_api_token.encode() or secrets.token_bytes(32)
        # What a token must hold to be used here, as the hub's own services check it: a
        # JupyterLab server's token, or one narrowed to other scopes, is refused.
        self.access_scope = f"access:services!service={settings.service_name}"

    @property
    def oauth(self) -> HubOAuth:
        # Built on first use: it needs the hub's variables, which unit tests do not set.
        if self._oauth is None:
            s = self._settings
            self._oauth = HubOAuth(
                api_token=s.hub_api_token,
                api_url=s.hub_api_url,
                oauth_client_id=s.oauth_client_id,
                oauth_redirect_uri=s.oauth_callback_url,
                base_url=s.service_prefix,
                hub_prefix=s.hub_prefix,
                hub_host=s.hub_host,
                keyfile=s.hub_ssl_keyfile,
                certfile=s.hub_ssl_certfile,
                client_ca=s.hub_ssl_client_ca,
                cache_max_age=30,
            )
        return self._oauth

    async def _check_with_hub(self, token: str) -> dict[str, Any] | None:
        model: dict[str, Any] | None = await self.oauth.user_for_token(token, sync=False)
        return model

    def is_hub_token(self, token: str) -> bool:
        secret = self._settings.hub_api_token
        return bool(secret) and hmac.compare_digest(token.encode(), secret.encode())

    async def caller_for_token(self, token: str) -> Caller | None:
        if self.is_hub_token(token):
            return Caller(name="(hub)", kind="hub")
        model = await self._check_token(token)
        kind = model.get("kind", "user") if model else None
        if not model or kind not in ("user", "service") or not model.get("name"):
            return None
        scopes = set(model.get("scopes") or ())
        if not check_scopes({self.access_scope}, scopes):
            raise MissingScope(self.access_scope)
        reads_metrics = check_scopes({"read:metrics"}, scopes)
        if kind == "service":
            return Caller(name=str(model["name"]), kind="service", reads_metrics=reads_metrics)
        groups = frozenset(str(group) for group in model.get("groups") or ())
        name = str(model["name"])
        # An admin's rights come with a token that carries the admin's own: the browser's
        # login here (read:users!user, the service's OAuth scope) or a Token-page token. One
        # narrowed to the portal alone (the hub's relay of a session's notebook jobs, or a user
        # who narrowed it so) identifies its user with their groups all the same, and was an
        # admin here: code in an admin's job could read and cancel anyone's jobs.
        full = bool(check_scopes({f"read:users!user={name}"}, scopes))
        is_admin = full and (bool(model.get("admin")) or not groups.isdisjoint(self._admin_groups))
        return Caller(
            name=name,
            kind="user",
            groups=groups,
            is_admin=is_admin,
            # The hub's admin page is for the same groups (their role, cluster-admin: the hub's
            # config gives both the one list), and for JupyterHub admins.
            is_hub_admin=is_admin,
            reads_metrics=reads_metrics,
        )

    def login_url(self, next_url: str) -> tuple[str, str]:
        """Where to send a browser to log in through the hub, and the state to keep in a cookie."""
        verifier, challenge, method = self.oauth.generate_pkce_code_challenge()
        state = self.oauth.generate_state(next_url, code_verifier=verifier)
        url = (
            f"{self.oauth.login_url}&state={state}"
            f"&code_challenge={challenge}&code_challenge_method={method}"
        )
        return url, state

    async def finish_login(self, code: str, state: str) -> tuple[str, str]:
        """The user's token for the OAuth code, and the page they were going to."""
        verifier = self.oauth.get_code_verifier(state)
        token: str = await self.oauth.token_for_code(code, code_verifier=verifier, sync=False)
        next_url = self.oauth.get_next_url(state)
        self.oauth.clear_oauth_state(state)
        return token, next_url

    def csrf_token(self, session_token: str) -> str:
        """The form token for a browser session: only pages this portal served can post."""
        return hmac.new(self._csrf_key, session_token.encode(), hashlib.sha256).hexdigest()[:40]
