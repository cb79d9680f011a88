"""The ID token of a single sign-on, checked as an OpenID Connect relying party must (OpenID
Connect Core 1.0, 3.1.3.7): signed by one of the provider's published keys with an algorithm
it announces, issued by the issuer the hub is set up for, for this hub's client id, not
expired and not issued in the future, and carrying the nonce this browser's sign-in sent.

OAuthenticator decodes the token without checking its signature and sends no nonce; the hub
(gpuportal_spawner.sso_authenticator) checks it with PyJWT before it believes who signed in.
The keys come from the provider's jwks_uri over the verified TLS connection the other calls
use, are kept, and are fetched again when a token names a key id not seen yet (the provider
rotated its keys), at most once a minute.

    checker = IdTokenChecker(issuer, client_id, fetch_keys)   # fetch_keys: async () -> JWKS dict
    claims = await checker.check(id_token, nonce)             # or IdTokenRefused(why)
    claims = await checker.check_logout(logout_token)         # a back-channel logout's token
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import jwt

from gpuportal_adapters.whole_file import replace_whole

# Asymmetric algorithms only: an HMAC-signed token would be checked with the client secret,
# which the hub shares with the provider; "none" is never accepted.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
# Clocks of the hub and the provider may differ by this much (seconds).
LEEWAY = 60
REFETCH_AFTER = 60.0


# PyJWT's refusals, in words (the first that matches), of "the ID token" or "the logout token".
_REFUSALS: tuple[tuple[type[jwt.InvalidTokenError], str], ...] = (
    (jwt.InvalidSignatureError, "{what}'s signature does not match the provider's key"),
    (jwt.ExpiredSignatureError, "{what} has expired"),
    (jwt.ImmatureSignatureError, "{what} was issued in the future (the clocks differ)"),
    (jwt.InvalidAudienceError, "{what} is for another client than this hub"),
    (jwt.InvalidIssuerError, "another issuer made {what}"),
)
# OpenID Connect Back-Channel Logout 1.0, 2.4: the event a logout token carries.
BACKCHANNEL_LOGOUT = "http://schemas.openid.net/event/backchannel-logout"
# A logout token is good for minutes; one good for longer than this is refused, so that its
# jti, kept against a replay until its exp, is kept a day at most.
LOGOUT_LIFE_MAX_SECONDS = 86400.0


class IdTokenRefused(Exception):
    """The ID token fails a check: why, a sentence's clause for the page and the log."""


class IdTokenChecker:
    def __init__(
        self,
        issuer: str,
        client_id: str,
        fetch_keys: Callable[[], Awaitable[dict[str, Any]]],
        algorithms: tuple[str, ...] = ALGORITHMS,
        jti_file: Path | None = None,
    ) -> None:
        self.issuer = issuer
        self.client_id = client_id
        self.fetch_keys = fetch_keys
        self.algorithms = algorithms
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched = float("-inf")
        # Logout tokens' ids seen, to their exp (epoch seconds): in jti_file, the hub's state,
        # so that a restart of the hub does not make a logout token good again.
        self.jti_file = jti_file
        self._jtis: dict[str, float] = self._read_jtis()
        self.keys_from = ""  # the provider's jwks_uri, where fetch_keys reads them
        self._signed_in: dict[str, str] = {}  # "sub:X" and "sid:Y" of sign-ins, to user names

    @classmethod
    def for_provider(
        cls,
        document: dict[str, Any],
        client_id: str,
        fetch_keys: Callable[[], Awaitable[Any]],
        jti_file: Path | None = None,
    ) -> IdTokenChecker:
        """A checker of the provider its discovery document describes."""
        announced = document.get("id_token_signing_alg_values_supported") or ALGORITHMS
        made = cls(
            str(document["issuer"]),
            client_id,
            fetch_keys,
            tuple(alg for alg in ALGORITHMS if alg in announced),
            jti_file,
        )
        made.keys_from = str(document.get("jwks_uri") or "")
        return made

    def remember(self, name: str, claims: dict[str, Any]) -> None:
        """Who signed in under the ID token's subject and provider session."""
        for key in ("sub", "sid"):
            if claims.get(key):
                self._signed_in[f"{key}:{claims[key]}"] = name

    def logged_out(self, claims: dict[str, Any]) -> str:
        """The user a logout token names: by a sign-in's sid or sub seen here, else its sub as
        a user name (LemonLDAP::NG's sub is the uid; a hub started since saw no sign-in)."""
        sid, sub = str(claims.get("sid") or ""), str(claims.get("sub") or "")
        return self._signed_in.get(f"sid:{sid}") or self._signed_in.get(f"sub:{sub}") or sub

    async def _key(self, kid: str | None, what: str) -> jwt.PyJWK:
        if kid not in self._keys and time.monotonic() - self._fetched >= REFETCH_AFTER:
            self._fetched = time.monotonic()
            try:
                keys = jwt.PyJWKSet.from_dict(await self.fetch_keys()).keys
            except jwt.PyJWKSetError:
                raise IdTokenRefused("the provider publishes no key the hub can use") from None
            self._keys = {str(key.key_id): key for key in keys if key.public_key_use != "enc"}
            if kid is None and len(self._keys) == 1:
                # A provider with one key may leave the kid out of the token's header.
                self._keys[""] = next(iter(self._keys.values()))
        key = self._keys.get(kid or "")
        if key is None:
            raise IdTokenRefused(
                f"{what} is signed with a key the provider does not publish ({kid})"
            )
        return key

    async def _decode(self, token: str, what: str, require: list[str]) -> dict[str, Any]:
        """The claims of a token the provider signed for this hub, its times checked."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise IdTokenRefused(f"{what} is not a signed token") from None
        if header.get("alg") not in self.algorithms:
            raise IdTokenRefused(f"{what}'s algorithm {header.get('alg')!r} is not accepted")
        key = await self._key(header.get("kid"), what)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=list(self.algorithms),
                audience=self.client_id,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": require},
            )
        except jwt.MissingRequiredClaimError as missing:
            raise IdTokenRefused(f"{what} lacks its {missing.claim!r} claim") from None
        except jwt.InvalidTokenError as error:
            why = next((why for kind, why in _REFUSALS if isinstance(error, kind)), None)
            why = why or "{what} does not check out (" + str(error).replace("{", "(") + ")"
            raise IdTokenRefused(why.format(what=what)) from None
        audience = claims["aud"]
        if isinstance(audience, list) and len(audience) > 1 and claims.get("azp") != self.client_id:
            raise IdTokenRefused(f"{what} is for several clients, not made out to this hub")
        return claims

    async def check(self, id_token: str, nonce: str) -> dict[str, Any]:
        """The ID token's claims, once every check passed."""
        if not id_token:
            raise IdTokenRefused("the provider sent no ID token")
        what = "the ID token"
        claims = await self._decode(id_token, what, ["iss", "sub", "aud", "exp", "iat", "nonce"])
        if not nonce or not hmac.compare_digest(str(claims["nonce"]), nonce):
            raise IdTokenRefused("the ID token's nonce is not this sign-in's")
        return claims

    async def check_logout(self, logout_token: str) -> dict[str, Any]:
        """A back-channel logout token's claims (Back-Channel Logout 1.0, 2.6), once every
        check passed: signed, issuer, audience, iat, exp, the logout event, a sub or a sid,
        no nonce, and a jti not seen before."""
        what = "the logout token"
        # exp is required (Back-Channel Logout 1.0, 2.4): one without was good for ever, and
        # its jti is remembered for an hour only.
        required = ["iss", "aud", "iat", "exp", "jti", "events"]
        claims = await self._decode(logout_token, what, required)
        events = claims["events"]
        if not isinstance(events, dict) or not isinstance(events.get(BACKCHANNEL_LOGOUT), dict):
            raise IdTokenRefused("the logout token carries no back-channel logout event")
        if "nonce" in claims:
            raise IdTokenRefused("the logout token has a nonce, as an ID token would")
        if not claims.get("sub") and not claims.get("sid"):
            raise IdTokenRefused("the logout token names no subject and no session")
        now, expires = time.time(), float(claims["exp"])
        if expires - now > LOGOUT_LIFE_MAX_SECONDS:
            raise IdTokenRefused("the logout token is good for over a day (its exp)")
        self._jtis = {jti: until for jti, until in self._jtis.items() if until > now}
        jti = str(claims["jti"])[:256]
        if jti in self._jtis:
            raise IdTokenRefused("the logout token was sent before (its jti)")
        self._jtis[jti] = expires
        self._write_jtis()
        return claims

    def _read_jtis(self) -> dict[str, float]:
        if self.jti_file is None:
            return {}
        try:
            kept = json.loads(self.jti_file.read_text()[:10_000_000])
        except (OSError, ValueError):
            return {}  # none yet, or half a file of an older version: start afresh
        if not isinstance(kept, dict):
            return {}
        return {str(j): float(t) for j, t in kept.items() if isinstance(t, int | float)}

    def _write_jtis(self) -> None:
        if self.jti_file is not None:
            replace_whole(self.jti_file, json.dumps(self._jtis))
