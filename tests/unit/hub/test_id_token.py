"""The ID token is checked before the hub believes who signed in (gpuportal_spawner.id_token):
tokens signed here with a key of the test's own, as the provider would sign them, and each
way one can be wrong."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from gpuportal_spawner.id_token import BACKCHANNEL_LOGOUT, IdTokenChecker, IdTokenRefused

ISSUER = "https://sso.example.org"
CLIENT = "gpuportal-hub"
NONCE = "n-0S6_WzA2Mj"


def new_key() -> Any:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


PROVIDER_KEY = new_key()
OTHER_KEY = new_key()


def jwks(*keys: tuple[Any, str]) -> dict[str, Any]:
    published = []
    for key, kid in keys:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
        published.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
    return {"keys": published}


def token(key: Any = PROVIDER_KEY, kid: str = "k1", alg: str = "RS256", **claims: Any) -> str:
    now = int(time.time())
    body = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": CLIENT,
        "iat": now,
        "exp": now + 300,
        "nonce": NONCE,
        **claims,
    }
    body = {name: value for name, value in body.items() if value is not None}
    return jwt.encode(body, key, algorithm=alg, headers={"kid": kid})


class Provider:
    """Its published keys, and how often the hub asked for them."""

    def __init__(self, *keys: tuple[Any, str]) -> None:
        self.published = jwks(*keys)
        self.asked = 0

    async def keys(self) -> dict[str, Any]:
        self.asked += 1
        return self.published


def checker(provider: Provider) -> IdTokenChecker:
    return IdTokenChecker(ISSUER, CLIENT, provider.keys)


async def refused(id_token: str, nonce: str = NONCE) -> str:
    with pytest.raises(IdTokenRefused) as why:
        await checker(Provider((PROVIDER_KEY, "k1"))).check(id_token, nonce)
    return str(why.value)


async def test_a_token_the_provider_signed_for_this_sign_in_passes() -> None:
    provider = Provider((PROVIDER_KEY, "k1"))
    made = checker(provider)
    assert (await made.check(token(), NONCE))["sub"] == "alice"
    assert (await made.check(token(sub="bob"), NONCE))["sub"] == "bob"
    assert provider.asked == 1  # the keys are kept


async def test_each_wrong_token_is_refused_saying_why() -> None:
    assert "signature does not match" in await refused(token(key=OTHER_KEY))
    assert "for another client" in await refused(token(aud="another-client"))
    assert "another issuer" in await refused(token(iss="https://evil.example.org"))
    assert "expired" in await refused(token(exp=int(time.time()) - 600))
    assert "issued in the future" in await refused(token(iat=int(time.time()) + 600))
    assert "nonce is not this sign-in's" in await refused(token(), nonce="another")
    assert "nonce is not this sign-in's" in await refused(token(), nonce="")
    assert "lacks its 'nonce'" in await refused(token(nonce=None))
    assert "lacks its 'exp'" in await refused(token(exp=None))
    assert "not made out to this hub" in await refused(token(aud=[CLIENT, "other"]))
    assert "key the provider does not publish" in await refused(token(kid="k9"))
    assert "the provider sent no ID token" in await refused("")
    assert "not a signed token" in await refused("not.a.token")


async def test_alg_none_and_hmac_with_a_public_value_are_refused() -> None:
    unsigned = jwt.encode({"iss": ISSUER, "sub": "alice"}, None, algorithm="none")
    assert "algorithm 'none' is not accepted" in await refused(unsigned)
    hmac_signed = jwt.encode({"sub": "alice"}, "the-client-secret", algorithm="HS256")
    assert "algorithm 'HS256' is not accepted" in await refused(hmac_signed)


async def test_a_rotated_key_is_fetched_again_once_a_minute_at_most() -> None:
    provider = Provider((PROVIDER_KEY, "k1"))
    made = checker(provider)
    await made.check(token(), NONCE)
    provider.published = jwks((OTHER_KEY, "k2"))
    with pytest.raises(IdTokenRefused, match="does not publish"):
        await made.check(token(key=OTHER_KEY, kid="k2"), NONCE)  # fetched less than 60 s ago
    made._fetched -= 61
    assert (await made.check(token(key=OTHER_KEY, kid="k2"), NONCE))["sub"] == "alice"
    assert provider.asked == 2


def logout_token(**claims: Any) -> str:
    now = int(time.time())
    body = {
        "iss": ISSUER,
        "aud": CLIENT,
        "iat": now,
        "exp": now + 120,
        "jti": f"j-{time.monotonic_ns()}",
        "sub": "alice",
        "events": {BACKCHANNEL_LOGOUT: {}},
        **claims,
    }
    body = {name: value for name, value in body.items() if value is not None}
    return jwt.encode(body, PROVIDER_KEY, algorithm="RS256", headers={"kid": "k1"})


async def test_a_back_channel_logout_token_is_checked_and_used_once() -> None:
    made = checker(Provider((PROVIDER_KEY, "k1")))
    once = logout_token(sid="s-1")
    assert (await made.check_logout(once))["sid"] == "s-1"
    with pytest.raises(IdTokenRefused, match="sent before"):
        await made.check_logout(once)  # a replay of the same logout
    assert (await made.check_logout(logout_token(sub=None, sid="s-2")))["sid"] == "s-2"


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        ({"events": None}, "lacks its 'events'"),
        ({"events": {"other": {}}}, "no back-channel logout event"),
        ({"nonce": "n"}, "has a nonce"),
        ({"sub": None}, "names no subject and no session"),
        ({"jti": None}, "lacks its 'jti'"),
        ({"exp": None}, "lacks its 'exp'"),  # good for ever before
        ({"aud": "another-client"}, "the logout token is for another client"),
        ({"iss": "https://evil.example.org"}, "another issuer made the logout token"),
    ],
)
async def test_a_wrong_logout_token_is_refused_saying_why(claims: dict[str, Any], why: str) -> None:
    with pytest.raises(IdTokenRefused, match=why):
        await checker(Provider((PROVIDER_KEY, "k1"))).check_logout(logout_token(**claims))


async def test_a_logout_token_signed_by_another_key_is_refused() -> None:
    forged = jwt.encode(
        jwt.decode(logout_token(), options={"verify_signature": False}),
        OTHER_KEY,
        algorithm="RS256",
        headers={"kid": "k1"},
    )
    with pytest.raises(IdTokenRefused, match="signature does not match"):
        await checker(Provider((PROVIDER_KEY, "k1"))).check_logout(forged)


async def test_a_used_logout_token_stays_used_after_a_restart(tmp_path: Path) -> None:
    """Its jti was kept in memory for an hour: a hub started again took it once more."""
    kept = tmp_path / "logout-jtis.json"
    token = logout_token(sid="s-9")
    first = IdTokenChecker(ISSUER, CLIENT, Provider((PROVIDER_KEY, "k1")).keys, jti_file=kept)
    await first.check_logout(token)
    again = IdTokenChecker(ISSUER, CLIENT, Provider((PROVIDER_KEY, "k1")).keys, jti_file=kept)
    with pytest.raises(IdTokenRefused, match="sent before"):
        await again.check_logout(token)
    assert oct(kept.stat().st_mode & 0o777) == "0o600"


async def test_a_logout_token_good_for_over_a_day_is_refused() -> None:
    with pytest.raises(IdTokenRefused, match="good for over a day"):
        await checker(Provider((PROVIDER_KEY, "k1"))).check_logout(
            logout_token(exp=int(time.time()) + 2 * 86400)
        )
