"""What the hub makes of a user the provider signed in (gpuportal_spawner.sso_authenticator):
the directory is a stand-in here; tests/integration/test_sso_login.py runs the real ones."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tornado import web

from gpuportal_adapters.directory import DirectoryUnavailable, DirectoryUser
from gpuportal_spawner.sso_authenticator import ClusterOIDCAuthenticator, SignInRefused
from tests.unit.hub.directory_stand_in import answering


def authenticator(
    found: DirectoryUser | Exception | None, **config: Any
) -> ClusterOIDCAuthenticator:
    made = ClusterOIDCAuthenticator(
        issuer="https://sso.example.org",
        allowed_ldap_groups={"ds", "hpc-admins"},
        admin_ldap_groups={"hpc-admins"},
        **config,
    )

    made._in_directory = answering(found)  # type: ignore[method-assign]
    return made


def model(name: str, **claims: Any) -> dict[str, Any]:
    return {
        "name": name,
        "admin": None,
        "auth_state": {"oauth_user": {"preferred_username": name, **claims}},
    }


def user(login: str, *groups: str) -> DirectoryUser:
    return DirectoryUser(
        login=login, dn=f"uid={login},ou=people,dc=example,dc=org", groups=frozenset(groups)
    )


async def test_groups_and_admin_come_from_ldap() -> None:
    made = await authenticator(user("carol", "hpc-admins")).update_auth_model(model("carol"))
    assert made["admin"] is False  # the admin group's role manages; it does not enter
    assert made["auth_state"]["groups"] == ["hpc-admins"]
    # Where admins may enter, by their role's access:servers, never as JupyterHub's admin.
    entering = authenticator(user("carol", "hpc-admins"), admins_enter_sessions=True)
    assert (await entering.update_auth_model(model("carol")))["admin"] is False


async def test_a_name_ldap_lacks_is_refused_saying_so() -> None:
    with pytest.raises(SignInRefused) as refused:
        await authenticator(None).update_auth_model(model("guest"))
    assert refused.value.status_code == 403 and refused.value.why == "not in the directory"
    assert "the cluster has no user guest" in refused.value.log_message


async def test_a_name_that_is_no_posix_name_never_reaches_ldap() -> None:
    made = authenticator(AssertionError("LDAP was asked"))
    with pytest.raises(SignInRefused) as refused:
        await made.update_auth_model(model("Alice@Example.org"))
    assert refused.value.why == "not a user name"


async def test_a_user_in_no_allowed_group_is_refused() -> None:
    with pytest.raises(SignInRefused) as refused:
        await authenticator(user("dave", "vision")).update_auth_model(model("dave"))
    assert refused.value.why == "in no allowed group"


async def test_ldap_down_says_so_and_is_not_a_refusal() -> None:
    with pytest.raises(web.HTTPError) as error:
        await authenticator(DirectoryUnavailable("down")).update_auth_model(model("alice"))
    assert error.value.status_code == 503 and not isinstance(error.value, SignInRefused)
    assert "(LDAP) is not answering" in error.value.log_message


async def test_a_groups_claim_replaces_ldap_groups_but_not_ldap() -> None:
    claimed = authenticator(user("alice", "ds"), groups_claim="groups", admins_enter_sessions=True)
    made = await claimed.update_auth_model(model("alice", groups=["hpc-admins"]))
    assert made["admin"] is False and made["auth_state"]["groups"] == ["hpc-admins"]
    with pytest.raises(SignInRefused):
        await authenticator(None, groups_claim="groups").update_auth_model(
            model("alice", groups=["hpc-admins"])
        )


async def test_the_hub_asks_for_pkce_and_checks_the_providers_certificate() -> None:
    made = authenticator(None, ca_file="/etc/ssl/site-ca.pem")
    assert made.enable_pkce is True
    assert made.validate_server_cert is True
    assert made.http_request_kwargs["ca_certs"] == "/etc/ssl/site-ca.pem"
    assert made.http_request_kwargs["request_timeout"] <= 5


async def test_codes_refused_at_the_provider_lock_the_users_sign_in_at_the_hub(
    tmp_path: Path,
) -> None:
    log = tmp_path / "portal.log"
    log.write_text("")
    made = authenticator(
        user("bob", "ds"), provider_log=str(log), code_failures_allowed=3, code_lock_seconds=900
    )
    refusal = "[Sun Nov 29 01:10:00 2026] [LLNG:7] [notice] totp2f: invalid attempt for {}\n"
    with log.open("a") as out:
        out.write(refusal.format("bob") * 2 + refusal.format("alice"))
    assert (await made.update_auth_model(model("bob")))["name"] == "bob"  # two: let through
    with log.open("a") as out:
        out.write(refusal.format("bob"))  # the third, just before the code that worked
    with pytest.raises(SignInRefused) as refused:
        await made.update_auth_model(model("bob"))
    assert refused.value.why == "second factor locked"
    assert "refused 3 codes for bob" in refused.value.log_message
    assert "for 15 more minutes" in refused.value.log_message
    made._in_directory = answering(user("alice", "ds"))  # type: ignore[method-assign]
    assert (await made.update_auth_model(model("alice")))["name"] == "alice"


# A handler's request as the hub sees it behind nginx and configurable-http-proxy: http, and
# the host browsers use.
PROXIED = SimpleNamespace(
    request=SimpleNamespace(protocol="http", host="portal.example.org"),
    hub=SimpleNamespace(server=SimpleNamespace(base_url="/hub/")),
)


def test_behind_a_tls_front_the_provider_is_given_the_https_callback() -> None:
    """Seen: behind nginx the provider refused "Redirect URI http://.../hub/oauth_callback"."""
    behind = authenticator(None, client_id="hub", tls_in_front=True)
    assert behind.get_callback_url(PROXIED) == "https://portal.example.org/hub/oauth_callback"
    assert behind.public_protocol(PROXIED) == "https"
    direct = authenticator(None, client_id="hub")
    assert direct.get_callback_url(PROXIED) == "http://portal.example.org/hub/oauth_callback"
