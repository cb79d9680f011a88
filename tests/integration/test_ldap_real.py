"""Login checks against the real OpenLDAP of the local cluster, over verified TLS."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from gpuportal_adapters.directory import (
    DirectorySettings,
    DirectoryUnavailable,
    InsecureDirectory,
    authenticate,
    lookup_user,
)
from tests.cluster import LDAP_URI, LDAPS_URI

pytestmark = pytest.mark.integration

CA = "/var/lib/portal-local/ldap-ca.pem"
SETTINGS = DirectorySettings(
    uri=LDAPS_URI,
    user_base="ou=people,dc=example,dc=org",
    group_base="ou=groups,dc=example,dc=org",
    ca_file=CA,
)


def test_right_password_gives_user_and_groups(cluster: None) -> None:
    alice = authenticate(SETTINGS, "alice", "alice-demo")
    assert alice is not None
    assert alice.dn == "uid=alice,ou=people,dc=example,dc=org"
    assert alice.groups == {"ds"}
    carol = authenticate(SETTINGS, "carol", "carol-demo")
    assert carol is not None and carol.groups == {"hpc-admins"}


def test_starttls_on_the_plain_port_works_too(cluster: None) -> None:
    starttls = dataclasses.replace(SETTINGS, uri=LDAP_URI, start_tls=True)
    assert authenticate(starttls, "alice", "alice-demo") is not None


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
def test_wrong_logins_are_refused(cluster: None, login: str, password: str) -> None:
    assert authenticate(SETTINGS, login, password) is None


def test_a_directory_with_a_certificate_from_another_ca_is_not_believed(
    cluster: None, tmp_path: Path
) -> None:
    """Whoever answers in the directory's place cannot log anyone in: TLS fails first."""
    other_ca = tmp_path / "other-ca.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=someone else", "-keyout", str(tmp_path / "k"), "-out", str(other_ca)],
        check=True, capture_output=True,
    )  # fmt: skip
    with pytest.raises(DirectoryUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
        authenticate(dataclasses.replace(SETTINGS, ca_file=str(other_ca)), "alice", "alice-demo")


def test_plain_ldap_is_refused_unless_allowed() -> None:
    with pytest.raises(InsecureDirectory, match="ldaps:// URI or StartTLS"):
        dataclasses.replace(SETTINGS, uri=LDAP_URI)


def test_the_directory_refuses_a_password_sent_in_clear(cluster: None) -> None:
    """slapd itself requires TLS for a password bind, whatever a client allows itself."""
    plain = dataclasses.replace(SETTINGS, uri=LDAP_URI, allow_insecure=True)
    with pytest.raises(DirectoryUnavailable, match="requires TLS for logins"):
        authenticate(plain, "alice", "alice-demo")


def test_groups_are_read_without_a_password(cluster: None) -> None:
    carol = lookup_user(SETTINGS, "carol")
    assert carol is not None and carol.groups == {"hpc-admins"}
    assert lookup_user(SETTINGS, "nobody-here") is None


def test_unreachable_directory_is_reported_not_a_wrong_password() -> None:
    down = dataclasses.replace(SETTINGS, uri="ldaps://ldap:3899", timeout=1)
    with pytest.raises(DirectoryUnavailable):
        authenticate(down, "alice", "alice-demo")
