"""Checking a cluster login against LDAP and reading its groups (blocking: run in a thread)."""

from __future__ import annotations

import logging
import math
import re
import ssl
from dataclasses import dataclass, field

import ldap3
from ldap3.core.exceptions import LDAPException
from ldap3.utils.conv import escape_filter_chars

log = logging.getLogger(__name__)

# POSIX login names; anything else cannot be a cluster user and is refused before LDAP is asked.
LOGIN_RE = re.compile(r"[a-z_][a-z0-9_.-]{0,31}")


# LDAP result codes strongerAuthRequired (8) and confidentialityRequired (13).
_NEEDS_TLS = (8, 13)


class DirectoryUnavailable(RuntimeError):
    """The LDAP server could not be reached, did not answer in time, or failed TLS checks."""


class InsecureDirectory(ValueError):
    """The settings would send passwords unencrypted to a server nobody verified."""


@dataclass(frozen=True)
class DirectorySettings:
    uri: str
    user_base: str
    group_base: str
    bind_dn: str = ""
    bind_password: str = field(default="", repr=False)
    timeout: float = 5.0
    user_filter: str = "(&(objectClass=posixAccount)(uid={login}))"
    group_filter: str = "(&(objectClass=posixGroup)(memberUid={login}))"
    # TLS: ldaps:// URIs, or StartTLS on ldap://; the server's certificate is always checked
    # (against ca_file, or the system's CAs when it is empty) and must name the host.
    ca_file: str = ""
    start_tls: bool = False
    # Plain ldap:// with neither: passwords in clear, and whoever answers is believed.
    allow_insecure: bool = False

    def __post_init__(self) -> None:
        if self.uri.startswith("ldap://") and not (self.start_tls or self.allow_insecure):
            raise InsecureDirectory(
                f"{self.uri} is plain LDAP: passwords would cross the network in clear and any "
                "server answering there would be believed. Use an ldaps:// URI or StartTLS "
                "(with the directory's CA file), or allow insecure LDAP explicitly."
            )


@dataclass(frozen=True)
class DirectoryUser:
    login: str
    dn: str
    groups: frozenset[str]


def _connection(settings: DirectorySettings, user: str, password: str) -> ldap3.Connection:
    tls = None
    if settings.uri.startswith("ldaps://") or settings.start_tls:
        # ldap3's default is CERT_NONE; CERT_REQUIRED also checks the host name.
        tls = ldap3.Tls(
            validate=ssl.CERT_REQUIRED,
            ca_certs_file=settings.ca_file or None,
            version=ssl.PROTOCOL_TLS_CLIENT,
        )
    # ldap3 reads "ldap://host:389/" as port "389/": accept the URI with or without the slash.
    server = ldap3.Server(
        settings.uri.rstrip("/"),
        connect_timeout=settings.timeout,
        get_info=ldap3.NONE,
        tls=tls,
    )
    return ldap3.Connection(
        server,
        user=user or None,
        password=password or None,
        receive_timeout=max(1, math.ceil(settings.timeout)),  # ldap3 packs it as an int
        raise_exceptions=False,
    )


def _bind(settings: DirectorySettings, connection: ldap3.Connection) -> bool:
    """Bind, after StartTLS when the settings ask for it (a failed StartTLS never binds)."""
    if settings.start_tls and not settings.uri.startswith("ldaps://"):
        connection.open()
        if not connection.start_tls():
            raise DirectoryUnavailable(f"{settings.uri}: StartTLS failed")
    if connection.bind():
        return True
    # Not a wrong password: the directory wants TLS (a misconfigured hub, not the user's fault).
    if connection.result.get("result") in _NEEDS_TLS:
        raise DirectoryUnavailable(
            f"{settings.uri}: the directory requires TLS for logins "
            f"({connection.result.get('description')}); use ldaps:// or StartTLS"
        )
    return False


def authenticate(settings: DirectorySettings, login: str, password: str) -> DirectoryUser | None:
    """The user if login and password are right, else None.

    An empty password is refused here: LDAP treats a bind with a DN and no password as an
    anonymous bind that "succeeds", which would log anyone in.
    """
    if not LOGIN_RE.fullmatch(login) or not password:
        return None
    try:
        found = lookup_user(settings, login)
        if found is None:
            return None
        user_conn = _connection(settings, found.dn, password)
        ok = _bind(settings, user_conn)
        user_conn.unbind()
    except LDAPException as error:
        raise DirectoryUnavailable(f"{settings.uri}: {error}") from error
    if not ok:
        log.info("LDAP login %s: wrong password", login)
        return None
    return found


def lookup_user(settings: DirectorySettings, login: str) -> DirectoryUser | None:
    """The user's entry and groups as the directory has them now (no password: the hub's
    periodic refresh uses it too); None when there is no such user."""
    if not LOGIN_RE.fullmatch(login):
        return None
    escaped = escape_filter_chars(login)
    try:
        lookup = _connection(settings, settings.bind_dn, settings.bind_password)
        if not _bind(settings, lookup):
            raise DirectoryUnavailable(f"lookup bind failed: {lookup.result.get('description')}")
        try:
            lookup.search(settings.user_base, settings.user_filter.format(login=escaped))
            entries = [r for r in lookup.response or [] if r.get("type") == "searchResEntry"]
            if len(entries) != 1:
                log.info("LDAP user %s: %d matching entries", login, len(entries))
                return None
            dn = str(entries[0]["dn"])
            lookup.search(
                settings.group_base,
                settings.group_filter.format(login=escaped),
                attributes=["cn"],
            )
            groups = frozenset(
                str(
                    r["attributes"]["cn"][0]
                    if isinstance(r["attributes"]["cn"], list)
                    else r["attributes"]["cn"]
                )
                for r in lookup.response or []
                if r.get("type") == "searchResEntry"
            )
        finally:
            lookup.unbind()
    except LDAPException as error:
        raise DirectoryUnavailable(f"{settings.uri}: {error}") from error
    return DirectoryUser(login=login, dn=dn, groups=groups)


def groups_present(settings: DirectorySettings, names: list[str]) -> set[str]:
    """Which of the named groups the directory has under group_base (the preflight's check that
    the hub's LDAP settings and groups are right); DirectoryUnavailable when it cannot say."""
    try:
        connection = _connection(settings, settings.bind_dn, settings.bind_password)
        if not _bind(settings, connection):
            raise DirectoryUnavailable(f"bind failed: {connection.result.get('description')}")
        try:
            found = set()
            for name in names:
                query = f"(&(objectClass=posixGroup)(cn={escape_filter_chars(name)}))"
                if not connection.search(settings.group_base, query, attributes=["cn"]):
                    if connection.result.get("result") == 32:  # noSuchObject: a wrong base
                        raise DirectoryUnavailable(f"no entry {settings.group_base}")
                    continue
                found.add(name)
        finally:
            connection.unbind()
    except LDAPException as error:
        raise DirectoryUnavailable(f"{settings.uri}: {error}") from error
    return found
