"""Checking a cluster login against LDAP and reading its groups (blocking: run in a thread)."""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field

import ldap3
from ldap3.core.exceptions import LDAPException
from ldap3.utils.conv import escape_filter_chars

log = logging.getLogger(__name__)

# POSIX login names; anything else cannot be a cluster user and is refused before LDAP is asked.
LOGIN_RE = re.compile(r"[a-z_][a-z0-9_.-]{0,31}")


class DirectoryUnavailable(RuntimeError):
    """The LDAP server could not be reached or did not answer in time."""


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


@dataclass(frozen=True)
class DirectoryUser:
    login: str
    dn: str
    groups: frozenset[str]


def _connection(settings: DirectorySettings, user: str, password: str) -> ldap3.Connection:
    # ldap3 reads "ldap://host:389/" as port "389/": accept the URI with or without the slash.
    server = ldap3.Server(
        settings.uri.rstrip("/"), connect_timeout=settings.timeout, get_info=ldap3.NONE
    )
    return ldap3.Connection(
        server,
        user=user or None,
        password=password or None,
        receive_timeout=max(1, math.ceil(settings.timeout)),  # ldap3 packs it as an int
        raise_exceptions=False,
    )


def authenticate(settings: DirectorySettings, login: str, password: str) -> DirectoryUser | None:
    """The user if login and password are right, else None.

    An empty password is refused here: LDAP treats a bind with a DN and no password as an
    anonymous bind that "succeeds", which would log anyone in.
    """
    if not LOGIN_RE.fullmatch(login) or not password:
        return None
    escaped = escape_filter_chars(login)
    try:
        lookup = _connection(settings, settings.bind_dn, settings.bind_password)
        if not lookup.bind():
            raise DirectoryUnavailable(f"lookup bind failed: {lookup.result.get('description')}")
        try:
            lookup.search(settings.user_base, settings.user_filter.format(login=escaped))
            entries = [r for r in lookup.response or [] if r.get("type") == "searchResEntry"]
            if len(entries) != 1:
                log.info("LDAP login %s: %d matching entries", login, len(entries))
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

        user_conn = _connection(settings, dn, password)
        ok = user_conn.bind()
        user_conn.unbind()
    except LDAPException as error:
        raise DirectoryUnavailable(f"{settings.uri}: {error}") from error
    if not ok:
        log.info("LDAP login %s: wrong password", login)
        return None
    return DirectoryUser(login=login, dn=dn, groups=groups)
