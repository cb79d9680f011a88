"""Admin follows LDAP without a new login (issue 10, 2): the hub reads the groups again every
auth_refresh_age (4 s for the test hub, 300 s in the demo)."""

from __future__ import annotations

import subprocess
import time

import pytest
import requests

from tests.cluster import LDAPS_URI
from tests.integration.conftest import Hub, wait_for

pytestmark = pytest.mark.integration

STATE = "/var/lib/portal-local"
ADMINS = "cn=hpc-admins,ou=groups,dc=example,dc=org"


def set_admin_member(user: str, present: bool) -> None:
    """Change hpc-admins as the directory's administrator would (over TLS, as rootdn)."""
    change = f"dn: {ADMINS}\nchangetype: modify\n{'add' if present else 'delete'}: memberUid\n"
    change += f"memberUid: {user}\n"
    with open(f"{STATE}/ldap/rootpw") as secret:
        password = secret.read().strip()
    subprocess.run(
        ["ldapmodify", "-x", "-H", LDAPS_URI, "-D", "cn=admin,dc=example,dc=org",
         "-w", password],
        input=change, text=True, check=True, capture_output=True,
        env={"LDAPTLS_CACERT": f"{STATE}/ldap-ca.pem", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def whoami(hub: Hub, session: requests.Session) -> dict[str, object]:
    answer: dict[str, object] = hub.api(session, "GET", "/user").json()
    return answer


def manages_users(hub: Hub, session: requests.Session) -> bool:
    """Whether the hub lets her list every user: the admin groups' role (cluster-admin)."""
    return hub.api(session, "GET", "/users").status_code == 200


def test_admin_comes_and_goes_with_the_ldap_group(hub: Hub) -> None:
    alice = hub.login("alice")
    assert not manages_users(hub, alice)
    set_admin_member("alice", True)
    try:
        wait_for(lambda: manages_users(hub, alice), 30, "alice to become admin")
        assert "hpc-admins" in whoami(hub, alice)["groups"]  # type: ignore[operator]
        # Issue 55: an admin who manages, not one who enters users' servers.
        assert whoami(hub, alice)["admin"] is False
    finally:
        set_admin_member("alice", False)
    begun = time.monotonic()
    wait_for(lambda: not manages_users(hub, alice), 30, "alice to lose admin")
    assert time.monotonic() - begun < 30
    assert whoami(hub, alice)["groups"] == ["ds"]
