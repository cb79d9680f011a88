"""Login with the cluster's LDAP username and password."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyterhub.auth import Authenticator
from traitlets import Float, Set, Unicode

from spawner.core.directory import DirectorySettings, DirectoryUnavailable, authenticate


class ClusterLDAPAuthenticator(Authenticator):
    """Binds as the user (ldap3, in a thread, with a timeout); admins come from an LDAP group."""

    server_uri = Unicode(
        "ldap://127.0.0.1:389/", config=True, help="LDAP server, e.g. ldaps://ldap.example.org/"
    )
    user_search_base = Unicode(
        "ou=people,dc=example,dc=org", config=True, help="Where users are, e.g. ou=people,dc=..."
    )
    group_search_base = Unicode(
        "ou=groups,dc=example,dc=org", config=True, help="Where groups are, e.g. ou=groups,dc=..."
    )
    lookup_dn = Unicode("", config=True, help="DN to search with; empty = anonymous search.")
    lookup_password = Unicode("", config=True, help="Password of lookup_dn.")
    allowed_ldap_groups = Set(
        Unicode(),
        config=True,
        help="LDAP groups whose members may log in, e.g. {'ds', 'hpc-admins'}; empty = any user.",
    )
    admin_ldap_groups = Set(
        Unicode(),
        config=True,
        help="LDAP groups whose members are hub admins, e.g. {'hpc-admins'}.",
    )
    timeout = Float(5.0, config=True, help="Seconds before LDAP is given up, e.g. 5.")

    def _settings(self) -> DirectorySettings:
        return DirectorySettings(
            uri=self.server_uri,
            user_base=self.user_search_base,
            group_base=self.group_search_base,
            bind_dn=self.lookup_dn,
            bind_password=self.lookup_password,
            timeout=self.timeout,
        )

    async def authenticate(self, handler: Any, data: dict[str, str]) -> dict[str, Any] | None:
        login = (data.get("username") or "").strip().lower()
        password = data.get("password") or ""
        try:
            found = await asyncio.wait_for(
                asyncio.to_thread(authenticate, self._settings(), login, password),
                timeout=self.timeout * 3,
            )
        except (DirectoryUnavailable, TimeoutError) as error:
            self.log.error("LDAP unavailable for login %s: %s", login, error)
            return None
        except Exception:
            # A failed login page, never a 500: whatever LDAP did, this login does not pass.
            self.log.exception("LDAP login of %s failed unexpectedly", login)
            return None
        if found is None:
            return None
        if self.allowed_ldap_groups and not (found.groups & self.allowed_ldap_groups):
            self.log.warning("%s is in none of the allowed LDAP groups", login)
            return None
        return {
            "name": found.login,
            "admin": bool(found.groups & self.admin_ldap_groups),
            # With manage_groups (on by default here) the hub mirrors these as its groups, which
            # is what profile visibility and the portal's admin check read.
            "groups": sorted(found.groups),
            "auth_state": {"groups": sorted(found.groups)},
        }

    async def check_allowed(self, username: str, authentication: Any = None) -> bool:
        # authenticate() has already applied the LDAP group rule to every login it returns.
        if authentication is not None:
            return True
        return bool(await super().check_allowed(username, authentication))
