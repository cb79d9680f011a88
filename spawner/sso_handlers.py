"""The hub's pages of single sign-on (gpuportal_spawner.sso_authenticator uses them): the
login redirect once the provider answers, the provider's redirect back (the ID token kept for
logout), logout of both sessions, the page the provider sends the browser back to, and the
provider's back-channel logout."""

from __future__ import annotations

import re
import secrets
from typing import Any

from jupyterhub.handlers import BaseHandler
from jupyterhub.utils import url_path_join
from oauthenticator.oauth2 import (
    STATE_COOKIE_NAME,
    OAuthCallbackHandler,
    OAuthLoginHandler,
    OAuthLogoutHandler,
)
from tornado import web

from gpuportal_spawner.audit import audit
from gpuportal_spawner.id_token import IdTokenRefused
from gpuportal_spawner.login_limits import end_logins
from gpuportal_spawner.metrics import LOGIN_FAILURES

# The ID token of the sign-in, kept (signed, HTTPS only) for the provider's logout: the hint
# that lets it end the session without asking the user to confirm.
ID_TOKEN_COOKIE = "gpuportal-sso-id"
# The nonce of a sign-in under way (gpuportal_spawner.id_token checks the token carries it).
NONCE_COOKIE = "gpuportal-sso-nonce"
NONCE_MINUTES = 15  # a sign-in left longer at the provider starts again
SIGNED_OUT_PATH = "signed-out"
BACKCHANNEL_PATH = "backchannel-logout"


class SignInRefused(web.HTTPError):
    """A sign-in the hub refuses after the provider accepted it: a page saying why (403)."""

    def __init__(self, user: str, why: str, message: str) -> None:
        super().__init__(403, message)
        self.user = user
        self.why = why

    @classmethod
    def unverified(cls, why: object) -> SignInRefused:
        """The provider's answer fails a check (gpuportal_spawner.id_token)."""
        return cls(
            "",
            "ID token refused",
            f"The single sign-on service's answer could not be verified: {why}. You are not "
            "signed in. Go back to the login page and sign in again; if this happens again, "
            "tell the cluster team.",
        )


class SSOLoginHandler(OAuthLoginHandler):
    """Sends the browser to the provider, once the provider has been seen to answer, with a
    nonce the ID token must carry back (kept signed in this browser until the callback)."""

    async def get(self) -> None:
        await self.authenticator.discover()
        super().get()

    def authorize_redirect(self, *args: Any, extra_params: dict[str, Any], **kwargs: Any) -> None:
        nonce = secrets.token_urlsafe(32)
        self.set_secure_cookie(
            NONCE_COOKIE,
            nonce,
            expires_days=None,
            path=self.hub.base_url,
            httponly=True,
            secure=self.authenticator.public_protocol(self) == "https",
            samesite="Lax",  # sent on the provider's top-level redirect back
        )
        super().authorize_redirect(*args, extra_params={**extra_params, "nonce": nonce}, **kwargs)


class SSOCallbackHandler(OAuthCallbackHandler):
    """The provider's redirect back: the hub's session, and the ID token kept for logout."""

    def check_error(self) -> None:
        error = self.get_argument("error", "")
        if error:
            # The provider's words come through the browser's URL: shown cut short (the page
            # escapes them), and the audit keeps the error code as a URL's word, 64 characters.
            detail = self.get_argument("error_description", error)[:200]
            code = re.sub(r"[^\x21-\x7e]", "?", error[:64])
            audit(
                "login_failed",
                user="",
                address=self.request.remote_ip,
                why="refused by the provider",
                error=code,
            )
            LOGIN_FAILURES.labels("refused by the provider").inc()
            raise web.HTTPError(
                403,
                f"The single sign-on service did not sign you in ({detail}). "
                "Go back to the login page to try again.",
            )

    def sign_in_nonce(self) -> str:
        """The nonce this browser's sign-in sent ("" when none: the check then refuses)."""
        kept = self.get_secure_cookie(NONCE_COOKIE, max_age_days=NONCE_MINUTES / 1440)
        return (kept or b"").decode()

    async def get(self) -> None:
        self.check_arguments()
        self.clear_cookie(NONCE_COOKIE, path=self.hub.base_url)  # one use, whatever follows
        user = await self.login_user()
        if user is None:
            raise web.HTTPError(403, self.authenticator.custom_403_message)
        id_token = getattr(self, "id_token", None)
        if id_token:
            self.set_secure_cookie(
                ID_TOKEN_COOKIE,
                id_token,
                expires_days=1,
                path=self.hub.base_url,
                httponly=True,
                secure=self.authenticator.public_protocol(self) == "https",
                samesite="Lax",
            )
        self.redirect(self.get_next_url(user))


class SSOLogoutHandler(OAuthLogoutHandler):
    """The hub's logout, then the provider's; the audit stream says who logged out."""

    async def handle_logout(self) -> None:
        self.clear_cookie(STATE_COOKIE_NAME)

    async def default_handle_logout(self) -> None:
        user = self.current_user
        if user is not None:
            audit("logout", user=user.name, address=self.request.remote_ip)
        await super().default_handle_logout()

    async def render_logout_page(self) -> None:
        id_token = (self.get_secure_cookie(ID_TOKEN_COOKIE) or b"").decode()
        self.clear_cookie(ID_TOKEN_COOKIE, path=self.hub.base_url)
        back = f"{self.authenticator.public_protocol(self)}://{self.request.host}" + url_path_join(
            self.hub.base_url, SIGNED_OUT_PATH
        )
        end_session = await self.authenticator.end_session_redirect(id_token, back)
        if end_session:
            self.redirect(end_session)
            return
        html = await self.render_template(
            "signed_out.html",
            provider_ended=False,
            provider=self.authenticator.login_service,
        )
        self.finish(html)


class SignedOutHandler(BaseHandler):
    """Where the provider sends the browser back after ending its own session."""

    async def get(self) -> None:
        html = await self.render_template(
            "signed_out.html", provider_ended=True, provider=self.authenticator.login_service
        )
        self.finish(html)


class BackChannelLogoutHandler(BaseHandler):
    """The provider ends a user's sign-in from its side (OpenID Connect Back-Channel Logout 1.0:
    an admin disabled the person, or they logged out at the provider): with a signed logout
    token, posted by the provider's server. Every hub login of the user ends (a new cookie
    id), and so do the tokens their browsers were given for their servers and the portal;
    the servers keep running, and tokens made on the token page keep their own expiry."""

    def check_xsrf_cookie(self) -> None:
        """No browser posts here: the provider's signature on the token is what is checked."""

    async def post(self) -> None:
        self.set_header("Cache-Control", "no-store")
        try:
            name = await self.authenticator.back_channel_logout(
                self.get_body_argument("logout_token", "")
            )
        except IdTokenRefused as refused:
            self.log.warning("Back-channel logout refused: %s", refused)
            self.set_status(400)
            self.finish({"error": "invalid_request", "error_description": str(refused)})
            return
        user = self.find_user(name) if name else None
        if user is not None:
            tokens = end_logins(self.db, user)
            self.log.info("The provider ended %s's sign-in (%d browser tokens)", name, tokens)
            audit("logout", user=name, address=self.request.remote_ip, via="back-channel")
        self.finish()
