"""What the hub's periodic refresh of a user answers (gpuportal_spawner.cluster_directory): the
directory is a stand-in here; tests/integration/security/test_group_refresh.py runs the real
LDAP and hub."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from gpuportal_adapters.directory import DirectoryUnavailable, DirectoryUser
from gpuportal_spawner.ldap_authenticator import ClusterLDAPAuthenticator
from tests.unit.hub.directory_stand_in import answering


def authenticator(
    found: DirectoryUser | Exception | None, admins_enter_sessions: bool = True
) -> ClusterLDAPAuthenticator:
    made = ClusterLDAPAuthenticator(
        allowed_ldap_groups={"ds", "hpc-admins"},
        admin_ldap_groups={"hpc-admins"},
        admins_enter_sessions=admins_enter_sessions,
    )

    made._in_directory = answering(found)  # type: ignore[method-assign]
    return made


def in_ldap(*groups: str) -> DirectoryUser:
    return DirectoryUser(login="alice", dn="uid=alice,ou=people", groups=frozenset(groups))


def on_the_hub(*groups: str, admin: bool = False) -> Any:
    """The hub's user as JupyterHub hands it to refresh_user: name, admin, its groups."""
    return SimpleNamespace(
        name="alice", admin=admin, groups=[SimpleNamespace(name=g) for g in groups]
    )


async def test_what_the_hub_has_already_is_nothing_to_refresh() -> None:
    """True: JupyterHub skips writing the user again (roles, groups, auth state, a commit)."""
    found = in_ldap("vision", "ds")
    assert await authenticator(found).refresh_user(on_the_hub("ds", "vision")) is True


@pytest.mark.parametrize(
    ("hub_user", "groups", "admin"),
    [
        (on_the_hub("ds"), ["ds", "vision"], False),  # a group added in LDAP
        (on_the_hub("ds", "vision"), ["ds"], False),  # a group taken away
        (on_the_hub("ds"), ["ds", "hpc-admins"], False),  # an admin group: a role, no admin
        (on_the_hub("ds", admin=True), ["ds"], False),  # no longer in the admin group
    ],
)
async def test_a_change_in_ldap_is_handed_to_the_hub(
    hub_user: Any, groups: list[str], admin: bool
) -> None:
    refreshed = await authenticator(in_ldap(*groups)).refresh_user(hub_user)
    assert isinstance(refreshed, dict)
    assert refreshed["groups"] == groups and refreshed["admin"] is admin


@pytest.mark.parametrize("enter", [False, True])
async def test_an_admin_group_never_makes_a_hub_admin_and_undoes_one(enter: bool) -> None:
    """Issue 55: the admin groups' role manages servers without entering them; a hub admin
    of an earlier configuration is one no longer at the next refresh. Issue 68: where admins
    may enter, their role gains access:servers alone (a hub admin could make a token for the
    user, which reached the server unrecorded)."""
    keeping = authenticator(in_ldap("ds", "hpc-admins"), admins_enter_sessions=enter)
    assert await keeping.refresh_user(on_the_hub("ds", "hpc-admins")) is True
    refreshed = await keeping.refresh_user(on_the_hub("ds", "hpc-admins", admin=True))
    assert isinstance(refreshed, dict) and refreshed["admin"] is False


async def test_gone_from_ldap_or_its_groups_must_log_in_again() -> None:
    assert await authenticator(None).refresh_user(on_the_hub("ds")) is False
    assert await authenticator(in_ldap("vision")).refresh_user(on_the_hub("ds")) is False


async def test_an_ldap_that_does_not_answer_leaves_what_the_hub_has() -> None:
    down = authenticator(DirectoryUnavailable("connection refused"))
    assert await down.refresh_user(on_the_hub("ds")) is True
