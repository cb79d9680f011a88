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
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable
from typing import Any

import jwt

# Asymmetric algorithms only: an HMAC-signed token would be checked with the client secret,
# which the hub shares with the provider; "none" is never accepted.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
# Clocks of the hub and the provider may differ by this much (seconds).
LEEWAY = 60
REFETCH_AFTER = 60.0


# PyJWT's refusals, in words (the first that matches).
_REFUSALS: tuple[tuple[type[jwt.InvalidTokenError], str], ...] = (
    (jwt.InvalidSignatureError, "the ID token's signature does not match the provider's key"),
    (jwt.ExpiredSignatureError, "the ID token has expired"),
    (jwt.ImmatureSignatureError, "the ID token was issued in the future (the clocks differ)"),
    (jwt.InvalidAudienceError, "the ID token is for another client than this hub"),
    (jwt.InvalidIssuerError, "another issuer made the ID token"),
)


class IdTokenRefused(Exception):
    """The ID token fails a check: why, a sentence's clause for the page and the log."""


class IdTokenChecker:
    def __init__(
        self,
        issuer: str,
        client_id: str,
        fetch_keys: Callable[[], Awaitable[dict[str, Any]]],
        algorithms: tuple[str, ...] = ALGORITHMS,
    ) -> None:
        self.issuer = issuer
        self.client_id = client_id
        self.fetch_keys = fetch_keys
        self.algorithms = algorithms
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched = float("-inf")

    async def _key(self, kid: str | None) -> jwt.PyJWK:
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
                f"the ID token is signed with a key the provider does not publish ({kid})"
            )
        return key

    async def check(self, id_token: str, nonce: str) -> dict[str, Any]:
        """The token's claims, once every check passed."""
        if not id_token:
            raise IdTokenRefused("the provider sent no ID token")
        try:
            header = jwt.get_unverified_header(id_token)
        except jwt.InvalidTokenError:
            raise IdTokenRefused("the ID token is not a signed token") from None
        if header.get("alg") not in self.algorithms:
            raise IdTokenRefused(f"the ID token's algorithm {header.get('alg')!r} is not accepted")
        key = await self._key(header.get("kid"))
        try:
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key=key,
                algorithms=list(self.algorithms),
                audience=self.client_id,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["iss", "sub", "aud", "exp", "iat", "nonce"]},
            )
        except jwt.MissingRequiredClaimError as missing:
            raise IdTokenRefused(f"the ID token lacks its {missing.claim!r} claim") from None
        except jwt.InvalidTokenError as error:
            why = next((why for kind, why in _REFUSALS if isinstance(error, kind)), None)
            raise IdTokenRefused(why or f"the ID token does not check out ({error})") from None
        audience = claims["aud"]
        if isinstance(audience, list) and len(audience) > 1 and claims.get("azp") != self.client_id:
            raise IdTokenRefused("the ID token is for several clients, not made out to this hub")
        if not nonce or not hmac.compare_digest(str(claims["nonce"]), nonce):
            raise IdTokenRefused("the ID token's nonce is not this sign-in's")
        return claims
