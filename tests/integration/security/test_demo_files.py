"""The demo's files keep users apart (issue 10, 7): homes, and the directory's password hashes."""

from __future__ import annotations

import subprocess

import pytest

pytestmark = pytest.mark.integration

LDAP_STATE = "/var/lib/portal-local/ldap"


def as_bob(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sudo", "-u", "bob", *argv], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(
    "argv",
    [
        ["ls", "/home/alice"],
        ["cat", f"{LDAP_STATE}/seed.ldif"],
        ["cat", f"{LDAP_STATE}/slapd.conf"],
        ["ls", f"{LDAP_STATE}/db"],
    ],
)
def test_bob_cannot_read_other_homes_or_the_directorys_files(
    cluster: None, argv: list[str]
) -> None:
    attempt = as_bob(*argv)
    assert attempt.returncode != 0 and "Permission denied" in attempt.stderr, attempt
