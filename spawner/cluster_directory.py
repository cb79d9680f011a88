"""The cluster's LDAP as both ways of logging in read it: who a user is, which groups they are in.

The password form (gpuportal_spawner.ldap_authenticator) binds as the user; single sign-on
(gpuportal_spawner.sso_authenticator) takes the identity provider's word for who signed in and
looks the user up here. Either way the directory decides: a name it does not have is refused,
and its groups make admins, gate logins and choose which profiles a user sees.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from traitlets import Bool, Float, Integer, Set, Unicode
from traitlets.config import LoggingConfigurable

from gpuportal_adapters.directory import (
    DirectorySettings,
    DirectoryUnavailable,
    DirectoryUser,
    lookup_user,
)
from gpuportal_spawner.login_limits import idle_logins


class ClusterDirectory(LoggingConfigurable):
    """The directory's settings and look-ups, shared by the hub's authenticators."""

    server_uri = Unicode(
        "ldaps://127.0.0.1:636/", config=True, help="LDAP server, e.g. ldaps://ldap.example.org/"
    )
    tls_ca_file = Unicode(
        "",
        config=True,
        help="CA certificate(s) the directory's certificate must chain to, e.g. "
        "/etc/ssl/certs/ldap-ca.pem; empty = the system's CAs. The host name is always checked.",
    )
    start_tls = Bool(
        False, config=True, help="Use StartTLS on an ldap:// URI before any bind, e.g. True."
    )
    allow_insecure_ldap = Bool(
        False,
        config=True,
        help="Allow plain ldap:// without StartTLS (passwords in clear, the server unverified). "
        "Off: the hub refuses to start with such a URI.",
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
    admins_enter_sessions = Bool(
        False,
        config=True,
        help="Whether members of admin_ldap_groups may open users' servers (their role "
        "gains access:servers: through JupyterHub's consent page, audited); False: the role "
        "the config gives their groups manages users and servers without entering them. "
        "They are never JupyterHub admins (whose tokens scope reached servers unrecorded).",
    )
    session_idle_seconds = Float(
        0.0,
        config=True,
        help="A hub login ends after this many seconds without a call of the user's, e.g. "
        "7200; 0: no idle limit (gpuportal_spawner.login_limits).",
    )
    admin_ldap_groups = Set(
        Unicode(),
        config=True,
        help="LDAP groups of the cluster's admins, e.g. {'hpc-admins'}: the portal's admins, "
        "and the hub's as admins_enter_sessions says.",
    )
    timeout = Float(
        4.5,
        config=True,
        help="Seconds a login waits for LDAP in all before it is told the directory is not "
        "answering, e.g. 4.5.",
    )
    ldap_threads = Integer(
        4,
        config=True,
        help="Threads for LDAP calls, e.g. 4: their own, so that a hung directory never holds "
        "the threads spawns use (home-directory lookups).",
    )
    refresh_timeout = Float(
        1.0,
        config=True,
        help="Seconds a request may wait while the user's groups are read again, e.g. 1.0.",
    )

    # The authenticator's own: the hub makes one and keeps it.
    _made_pool: ThreadPoolExecutor | None = None
    # Logins waiting for LDAP now (all instances: the hub has one authenticator).
    _waiting = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._settings()  # an insecure URI stops the hub here, saying what to set

    @property
    def _pool(self) -> ThreadPoolExecutor:
        if self._made_pool is None:
            self._made_pool = ThreadPoolExecutor(self.ldap_threads, thread_name_prefix="ldap")
        return self._made_pool

    def _settings(self) -> DirectorySettings:
        return DirectorySettings(
            uri=self.server_uri,
            user_base=self.user_search_base,
            group_base=self.group_search_base,
            bind_dn=self.lookup_dn,
            bind_password=self.lookup_password,
            ca_file=self.tls_ca_file,
            start_tls=self.start_tls,
            allow_insecure=self.allow_insecure_ldap,
            # Each LDAP operation gets part of the login's budget (a login makes four).
            timeout=max(1.0, self.timeout / 2),
        )

    async def _in_directory(self, call: Any, *args: Any, timeout: float) -> Any:
        """`call(settings, *args)` on the LDAP threads, given up after `timeout` seconds."""
        work = asyncio.get_running_loop().run_in_executor(self._pool, call, self._settings(), *args)
        return await asyncio.wait_for(work, timeout=timeout)

    def _in_allowed_group(self, groups: frozenset[str]) -> bool:
        return not self.allowed_ldap_groups or bool(groups & self.allowed_ldap_groups)

    def _directory_model(self, login: str, groups: frozenset[str]) -> dict[str, Any]:
        return {
            "name": login,
            # Never JupyterHub's admin: its `tokens` scope made a token for a user that
            # reached their server with no consent step; admins_enter_sessions adds only
            # access:servers to their role (gpuportal_spawner.admin_entry).
            "admin": False,
            # With manage_groups (on by default here) the hub mirrors these as its groups, which
            # is what profile visibility and the portal's admin check read.
            "groups": sorted(groups),
            "auth_state": {"groups": sorted(groups)},
        }

    async def _refresh_from_directory(
        self, user: Any, handler: Any = None
    ) -> bool | dict[str, Any]:
        """Groups and admin as LDAP has them now (the hub asks every auth_refresh_age).

        A user idle past PORTAL_SESSION_IDLE_HOURS must log in again, whatever LDAP says
        (gpuportal_spawner.login_limits).

        Someone taken out of an admin group loses admin within that time; someone gone from
        the directory, or from every allowed group, must log in again (and cannot). If LDAP
        does not answer, what the hub has stays. Where LDAP says what the hub has already,
        the answer is True (nothing to refresh): JupyterHub then skips writing the user again
        (its roles, groups and auth state, and a commit, for every user every refresh).

        The user's request waits for this, so it never queues behind logins that wait for
        LDAP, and has a short budget of its own: a refresh that cannot be done now is done
        at the next one.
        """
        if idle_logins(user).ended(user, handler, self.session_idle_seconds):
            return False
        if self._waiting >= self.ldap_threads:
            return True
        try:
            found: DirectoryUser | None = await self._in_directory(
                lookup_user, user.name, timeout=self.refresh_timeout
            )
        except (DirectoryUnavailable, TimeoutError) as error:
            self.log.warning("Could not refresh %s from LDAP: %s", user.name, error or "timeout")
            return True
        if found is None or not self._in_allowed_group(found.groups):
            self.log.warning("%s is no longer in LDAP or an allowed group", user.name)
            return False
        model = self._directory_model(found.login, found.groups)
        if (
            bool(user.admin) == model["admin"]
            and sorted(g.name for g in user.groups) == model["groups"]
        ):
            return True
        return model
