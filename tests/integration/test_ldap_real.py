"""Login checks against the real OpenLDAP of the local cluster."""

import pytest

from core.directory import DirectorySettings, DirectoryUnavailable, authenticate

pytestmark = pytest.mark.integration

SETTINGS = DirectorySettings(
    uri="ldap://127.0.0.1:3890/",
    user_base="ou=people,dc=example,dc=org",
    group_base="ou=groups,dc=example,dc=org",
)


def test_right_password_gives_user_and_groups(cluster):
    alice = authenticate(SETTINGS, "alice", "alice-demo")
    assert alice is not None
    assert alice.dn == "uid=alice,ou=people,dc=example,dc=org"
    assert alice.groups == {"ds"}
    carol = authenticate(SETTINGS, "carol", "carol-demo")
    assert carol is not None and carol.groups == {"hpc-admins"}


@pytest.mark.parametrize(
    ("login", "password"),
    [
        ("alice", "wrong"),
        ("alice", ""),  # an empty password must not become an anonymous bind
        ("alice", "bob-demo"),
        ("nobody-here", "x"),
        ("*", "alice-demo"),
        ("alice)(uid=*", "alice-demo"),
    ],
)
def test_wrong_logins_are_refused(cluster, login, password):
    assert authenticate(SETTINGS, login, password) is None


def test_unreachable_directory_is_reported_not_a_wrong_password():
    down = DirectorySettings(
        uri="ldap://127.0.0.1:3899", user_base="dc=x", group_base="dc=x", timeout=1
    )
    with pytest.raises(DirectoryUnavailable):
        authenticate(down, "alice", "alice-demo")
