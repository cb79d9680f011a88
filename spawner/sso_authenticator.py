"""Single sign-on: the hub signs users in through the site's OpenID Connect provider.

OAuthenticator's GenericOAuthenticator does the protocol (authorization code with PKCE, the
state cookie, the token and userinfo calls); this adds what a cluster needs around it:

- The ID token is checked (signature, issuer, audience, expiry, this sign-in's nonce:
  gpuportal_spawner.id_token), and the userinfo answer must be about its subject.

- The provider says who signed in; the cluster's LDAP says whether that is a cluster user and
  which groups they are in (admins, who may log in, which profiles they see), as for the
  password form (gpuportal_spawner.cluster_directory). A name LDAP does not have is refused
  with a page that says so. A site whose provider sends groups can use them instead
  (`groups_claim`); the user must still be in LDAP, whose uid the jobs run as.
- The provider's endpoints come from its discovery document, looked at before each sign-in:
  a provider that does not answer gets a page saying so within `provider_timeout` seconds,
  not a browser's connection error on the provider's address.
- Logout ends the hub's session, then the provider's (its end-session endpoint, with the ID
  token as hint), and the page the provider sends the user back to says both ended; when the
  provider does not answer, the page says its session may still be open.
- Sign-ins and refusals go to the audit stream and the login-failure counter, as the form's do;
  so do the passwords and second factors the provider refused, read from its log
  (`provider_log`, gpuportal_spawner.provider_log). Codes refused too often lock the user's
  sign-ins at the hub for a while (`code_failures_allowed`), whatever the provider's own guard.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from oauthenticator.generic import GenericOAuthenticator
from oauthenticator.oauth2 import guess_callback_uri
from tornado import web
from tornado.httpclient import HTTPClientError
from tornado.ioloop import PeriodicCallback
from traitlets import Bool, Dict, Float, Integer, Unicode, default

from gpuportal_adapters.directory import DirectoryUnavailable, DirectoryUser, lookup_user
from gpuportal_core.sbatch import USERNAME_RE
from gpuportal_core.throttle import CodeLock
from gpuportal_spawner.audit import audit
from gpuportal_spawner.cluster_directory import ClusterDirectory
from gpuportal_spawner.id_token import IdTokenChecker, IdTokenRefused
from gpuportal_spawner.metrics import LOGIN_FAILURES
from gpuportal_spawner.provider_log import (
    LEMONLDAP_REFUSALS,
    ProviderLogFollower,
    ProviderRefusals,
)
from gpuportal_spawner.sso_handlers import (
    BACKCHANNEL_PATH,
    SIGNED_OUT_PATH,
    BackChannelLogoutHandler,
    SignedOutHandler,
    SignInRefused,
    SSOCallbackHandler,
    SSOLoginHandler,
    SSOLogoutHandler,
)

# Where get_token_info leaves the checked ID token's claims for token_to_user.
ID_CLAIMS = "gpuportal_id_claims"


class ClusterOIDCAuthenticator(ClusterDirectory, GenericOAuthenticator):
    """OpenID Connect sign-in (PKCE, the provider's certificate checked); LDAP is the directory."""

    login_handler = SSOLoginHandler
    callback_handler = SSOCallbackHandler
    logout_handler = SSOLogoutHandler

    issuer = Unicode(
        "",
        config=True,
        help="The provider's issuer URL, e.g. https://login.example.org/realms/hpc. Its "
        "discovery document (/.well-known/openid-configuration) gives the endpoints that are "
        "not set here.",
    )
    ca_file = Unicode(
        "",
        config=True,
        help="CA certificate(s) the provider's certificate must chain to, e.g. "
        "/etc/ssl/certs/site-ca.pem; empty: the system's CAs. The host name is always checked.",
    )
    groups_claim = Unicode(
        "",
        config=True,
        help="The userinfo claim with the user's groups, e.g. groups; empty: the groups are "
        "read from LDAP, as for the password form.",
    )
    end_session_url = Unicode(
        "",
        config=True,
        help="The provider's end-session endpoint; empty: from its discovery document.",
    )
    logout_state_dir = Unicode(
        "",
        config=True,
        help="A folder of the hub's own (its state) where the ids of back-channel logout tokens "
        "already used are kept until they expire, so that a restart does not take one again; "
        "empty: kept in memory only.",
    )
    provider_log = Unicode(
        "",
        config=True,
        help="The provider's log as shipped to the hub host, e.g. /var/log/sso/portal.log: its "
        "refused passwords and second factors go to the audit stream as failed logins. Empty: "
        "not followed.",
    )
    provider_log_patterns = Dict(
        LEMONLDAP_REFUSALS,
        config=True,
        help="What a refusal looks like in provider_log: {why: regular expression with a group "
        "named user}; the default is LemonLDAP::NG's lines for a wrong code and a wrong "
        "password.",
    )
    code_failures_allowed = Integer(
        5,
        config=True,
        help="Second factors the provider may refuse a user (read from provider_log) within "
        "code_lock_seconds before the hub refuses that user's sign-ins, e.g. 5; 0: never.",
    )
    code_lock_seconds = Float(
        900.0, config=True, help="How long they count, and the lock lasts, in seconds, e.g. 900."
    )
    tls_in_front = Bool(
        False,
        config=True,
        help="TLS ends in front of the hub (nginx; PORTAL_TLS_IN_FRONT): the addresses the hub "
        "gives the provider and the browser are https ones. Behind nginx and "
        "configurable-http-proxy a request says http (the proxy's X-Forwarded-Proto comes last), "
        "and the provider refused the http callback.",
    )
    provider_timeout = Float(
        4.0,
        config=True,
        help="Seconds a call to the provider may take before the user is told it is not "
        "answering, e.g. 4.0.",
    )

    @default("login_service")
    def _login_service_default(self) -> str:
        return "single sign-on"

    def public_protocol(self, handler: Any) -> str:
        """The scheme browsers reach the hub by: https behind a TLS front, else the request's."""
        return "https" if self.tls_in_front else str(handler.request.protocol)

    def get_callback_url(self, handler: Any = None) -> str:
        """OAuthenticator's guess from the request, with the scheme browsers use."""
        if self.oauth_callback_url or handler is None:
            return str(super().get_callback_url(handler))
        return str(
            guess_callback_uri(
                self.public_protocol(handler), handler.request.host, handler.hub.server.base_url
            )
        )

    @default("username_claim")
    def _username_claim_default(self) -> str:
        return "preferred_username"

    @default("scope")
    def _scope_default(self) -> list[str]:
        return ["openid", "profile", "email"]

    @default("http_request_kwargs")
    def _http_request_kwargs_default(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "connect_timeout": self.provider_timeout,
            "request_timeout": self.provider_timeout,
        }
        if self.ca_file:
            kwargs["ca_certs"] = self.ca_file
        return kwargs

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._id_tokens: IdTokenChecker | None = None  # made from the discovery document
        follower = None
        if self.provider_log:
            follower = ProviderLogFollower(self.provider_log, self.provider_log_patterns)
        lock = CodeLock(self.code_failures_allowed, self.code_lock_seconds, self.code_lock_seconds)
        self._refusals = ProviderRefusals(follower, lock, self.log)
        if follower is not None:
            PeriodicCallback(self._refusals.read, 2000).start()

    def get_handlers(self, app: Any) -> list[tuple[str, Any]]:
        return [
            *super().get_handlers(app),
            (f"/{SIGNED_OUT_PATH}", SignedOutHandler),
            (f"/{BACKCHANNEL_PATH}", BackChannelLogoutHandler),
        ]

    async def back_channel_logout(self, logout_token: str) -> str:
        """The user a valid logout token names (IdTokenRefused when it is not valid)."""
        checker = await self._checker()
        return checker.logged_out(await checker.check_logout(logout_token))

    # -- the provider --------------------------------------------------------------------

    async def discover(self) -> dict[str, Any]:
        """The provider's discovery document, fetched now (a sign-in's first step tells at once
        whether the provider answers); endpoints not configured are taken from it."""
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        try:
            document = await self.httpfetch(url, "Reading the provider's discovery document")
        except Exception as error:
            self.log.error("Single sign-on provider %s not answering: %s", self.issuer, error)
            raise _provider_error(self.issuer, "is not answering") from None
        if not isinstance(document, dict) or document.get("issuer", "").rstrip(
            "/"
        ) != self.issuer.rstrip("/"):
            self.log.error("Discovery document of %s names another issuer: %r", url, document)
            raise _provider_error(self.issuer, "answers as another issuer (the hub's settings)")
        jwks_uri = str(document.get("jwks_uri") or "")
        if self._id_tokens is None or self._id_tokens.keys_from != jwks_uri:
            keys = partial(self._provider_keys, jwks_uri)
            jtis = (
                Path(self.logout_state_dir) / "logout-jtis.json" if self.logout_state_dir else None
            )
            self._id_tokens = IdTokenChecker.for_provider(document, self.client_id, keys, jtis)
        for trait, key in (
            ("authorize_url", "authorization_endpoint"),
            ("token_url", "token_endpoint"),
            ("userdata_url", "userinfo_endpoint"),
            ("end_session_url", "end_session_endpoint"),
        ):
            if not getattr(self, trait) and document.get(key):
                setattr(self, trait, document[key])
        return document

    async def _provider_keys(self, jwks_uri: str) -> dict[str, Any]:
        if not jwks_uri:
            return {"keys": []}
        try:
            keys = await self.httpfetch(jwks_uri, "Reading the provider's signing keys")
        except (HTTPClientError, OSError):
            raise _provider_error(self.issuer, "is not answering") from None
        return dict(keys)

    async def _checker(self) -> IdTokenChecker:
        if self._id_tokens is None:  # the hub started again since this sign-in's first step
            await self.discover()
        assert self._id_tokens is not None
        return self._id_tokens

    async def _checked_id_token(self, handler: Any, token_info: dict[str, Any]) -> dict[str, Any]:
        """The ID token's claims once every check passed (gpuportal_spawner.id_token)."""
        id_token, checker = str(token_info.get("id_token") or ""), await self._checker()
        try:
            return await checker.check(id_token, handler.sign_in_nonce())
        except IdTokenRefused as refused:
            self.log.warning("Sign-in refused: %s", refused)
            raise SignInRefused.unverified(refused) from None

    async def get_token_info(self, handler: Any, params: dict[str, Any]) -> dict[str, Any]:
        try:
            token_info = dict(await super().get_token_info(handler, params))
        except HTTPClientError as error:
            if error.code < 500:
                # The code was used, expired, or the PKCE verifier did not match.
                raise web.HTTPError(
                    403,
                    "The single sign-on service did not accept this sign-in's code (it may "
                    "have expired). Go back to the login page and sign in again.",
                ) from None
            raise _provider_error(self.issuer, "is not answering") from None
        except OSError:
            raise _provider_error(self.issuer, "is not answering") from None
        token_info[ID_CLAIMS] = await self._checked_id_token(handler, token_info)
        return token_info

    async def token_to_user(self, token_info: dict[str, Any]) -> dict[str, Any]:
        try:
            user = dict(await super().token_to_user(token_info))
        except (HTTPClientError, OSError):
            raise _provider_error(self.issuer, "is not answering") from None
        # OpenID Connect Core 5.3.2: the userinfo answer is about the ID token's subject.
        if str(user.get("sub", "")) != str(token_info[ID_CLAIMS]["sub"]):
            raise SignInRefused.unverified("its userinfo is about another person than the ID token")
        return user

    async def end_session_redirect(self, id_token: str, back: str) -> str:
        """The provider's end-session URL for this browser, or "" when the provider does not
        answer (the hub's session has ended either way)."""
        try:
            await self.discover()
        except web.HTTPError:
            return ""
        if not self.end_session_url:
            return ""
        query = {"client_id": self.client_id, "post_logout_redirect_uri": back}
        if id_token:
            query["id_token_hint"] = id_token
        return f"{self.end_session_url}?{urlencode(query)}"

    # -- the directory -------------------------------------------------------------------

    async def authenticate(self, handler: Any, data: Any = None, **kwargs: Any) -> Any:
        address = handler.request.remote_ip if handler is not None else ""
        started = time.monotonic()
        try:
            model = await super().authenticate(handler, data, **kwargs)
        except SignInRefused as refused:
            audit("login_failed", user=refused.user, address=address, why=refused.why)
            LOGIN_FAILURES.labels(refused.why).inc()
            raise
        state = model.get("auth_state") or {}
        if handler is not None:
            handler.id_token = state.get("id_token")
        # Whom a back-channel logout may name: the token's subject and provider session.
        claims = (state.get("token_response") or {}).get(ID_CLAIMS) or {}
        (await self._checker()).remember(model["name"], claims)
        audit(
            "login",
            user=model["name"],
            address=address,
            groups=model.get("groups", []),
            via="sso",
        )
        self.log.info(
            "Signed in %s through %s (%.2f s)",
            model["name"],
            self.issuer,
            time.monotonic() - started,
        )
        return model

    async def update_auth_model(self, auth_model: dict[str, Any]) -> dict[str, Any]:
        """The provider's user as the cluster knows them: refused unless LDAP has them (and
        they are in an allowed group); groups and admin from LDAP or the groups claim."""
        name = auth_model["name"]
        if not USERNAME_RE.fullmatch(name):
            raise SignInRefused(
                name,
                "not a user name",
                f"You signed in as {json.dumps(name)[1:-1][:64]}, which is not a cluster user "
                "name. Ask the cluster team to link your single sign-on account to your "
                "cluster account.",
            )
        self._refusals.refuse_if_locked(name)
        type(self)._waiting += 1
        try:
            found: DirectoryUser | None = await self._in_directory(
                lookup_user, name, timeout=self.timeout
            )
        except (DirectoryUnavailable, TimeoutError) as error:
            self.log.error("LDAP unavailable for sign-in of %s: %s", name, error or "timed out")
            raise web.HTTPError(
                503,
                "The cluster's user directory (LDAP) is not answering, so your sign-in cannot "
                "be finished right now. Please try again in a minute.",
            ) from None
        finally:
            type(self)._waiting -= 1
        if found is None:
            raise SignInRefused(
                name,
                "not in the directory",
                f"You signed in as {name}, but the cluster has no user {name}: this portal is "
                "for the cluster's users. If you should have an account, ask the cluster team.",
            )
        groups = found.groups
        if self.groups_claim:
            claimed = (auth_model["auth_state"] or {}).get(self.user_auth_state_key, {})
            groups = frozenset(str(g) for g in claimed.get(self.groups_claim) or [])
        if not self._in_allowed_group(groups):
            raise SignInRefused(
                name,
                "in no allowed group",
                f"{name} is in none of the groups that may use this portal. Ask the cluster "
                "team to add you to your team's group.",
            )
        model = self._directory_model(found.login, groups)
        auth_model["auth_state"]["groups"] = model["groups"]
        auth_model["admin"] = model["admin"]
        return auth_model

    async def get_user_groups(self, auth_state: dict[str, Any]) -> set[str]:
        # Set by update_auth_model, from LDAP or the groups claim.
        return set(auth_state.get("groups") or [])

    async def refresh_user(self, user: Any, handler: Any = None, **kwargs: Any) -> Any:
        """Groups and admin from LDAP every auth_refresh_age (the provider's tokens are not
        kept); with a groups claim, the groups stay as the provider sent them at sign-in and
        only the user's presence in LDAP is checked."""
        refreshed = await self._refresh_from_directory(user, handler)
        if self.groups_claim and isinstance(refreshed, dict):
            return True
        return refreshed

    async def check_allowed(self, username: str, auth_model: Any = None) -> bool:
        # update_auth_model has applied LDAP and the allowed groups to every sign-in.
        if auth_model is not None:
            return True
        return bool(await super().check_allowed(username, auth_model))


def _provider_error(issuer: str, what: str) -> web.HTTPError:
    return web.HTTPError(
        503,
        f"The single sign-on service ({issuer}) {what}, so you cannot sign in right now. "
        "Please try again in a minute; if it lasts, tell the cluster team.",
    )
