"""Login with the cluster's LDAP username and password."""

from __future__ import annotations

import asyncio
import math
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from jupyterhub.auth import Authenticator
from jupyterhub.handlers.login import LogoutHandler
from tornado import web
from traitlets import Bool, Float, Integer, Set, Unicode

from gpuportal_adapters.directory import (
    DirectorySettings,
    DirectoryUnavailable,
    authenticate,
    lookup_user,
)
from gpuportal_core.sbatch import USERNAME_RE
from gpuportal_core.throttle import LoginThrottle
from gpuportal_spawner.audit import audit
from gpuportal_spawner.metrics import LOGIN_FAILURES


class AuditedLogout(LogoutHandler):
    """JupyterHub's logout, and a line in the audit stream saying who logged out."""

    async def handle_logout(self) -> None:
        user = self.current_user
        if user is not None:
            audit("logout", user=user.name, address=self.request.remote_ip)
        await super().handle_logout()


class ClusterLDAPAuthenticator(Authenticator):
    """Binds as the user (ldap3, in a thread, with a timeout); admins come from an LDAP group."""

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
    admin_ldap_groups = Set(
        Unicode(),
        config=True,
        help="LDAP groups whose members are hub admins, e.g. {'hpc-admins'}.",
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
    max_waiting_logins = Integer(
        32,
        config=True,
        help="Logins that may wait for LDAP at once, e.g. 32; more are told at once to retry.",
    )

    refresh_timeout = Float(
        1.0,
        config=True,
        help="Seconds a request may wait while the user's groups are read again, e.g. 1.0.",
    )
    login_free_failures = Integer(
        3,
        config=True,
        help="Failed logins of a user from one address before each further one doubles a "
        "wait, e.g. 3. Other addresses are not affected.",
    )
    login_base_delay = Float(1.0, config=True, help="The first wait, in seconds, e.g. 1.0.")
    login_max_delay = Float(300.0, config=True, help="The longest wait, in seconds, e.g. 300.")

    # The authenticator's own: the hub makes one and keeps it.
    _made_pool: ThreadPoolExecutor | None = None
    _throttle: LoginThrottle | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._settings()  # an insecure URI stops the hub here, saying what to set

    _waiting = 0

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

    @property
    def throttle(self) -> LoginThrottle:
        if self._throttle is None:
            self._throttle = LoginThrottle(
                free_failures=self.login_free_failures,
                base_delay=self.login_base_delay,
                max_delay=self.login_max_delay,
            )
        return self._throttle

    async def authenticate(self, handler: Any, data: dict[str, str]) -> dict[str, Any] | None:
        login = (data.get("username") or "").strip().lower()
        password = data.get("password") or ""
        # The client's address as the hub sees it (X-Forwarded-For from its own proxy).
        address = handler.request.remote_ip if handler is not None else ""
        if not USERNAME_RE.fullmatch(login):
            # Checked before anything else sees it (LDAP, the throttle's table, the logs and
            # the audit page): a cluster login is a POSIX name of at most 32 characters.
            shown = _printable(login)
            self.log.warning("Login refused from %s: not a user name (%s)", address, shown)
            audit("login_failed", user=shown, address=address, why="not a user name")
            LOGIN_FAILURES.labels("not a user name").inc()
            return None
        wait = self.throttle.wait(login, address, time.monotonic())
        if wait > 0:
            self.log.warning("Login of %s from %s throttled: %.0f s more", login, address, wait)
            audit("login_failed", user=login, address=address, why="throttled")
            LOGIN_FAILURES.labels("throttled").inc()
            raise web.HTTPError(
                429,
                f"Too many failed logins for {login or 'this name'} from your address. "
                f"Wait {math.ceil(wait)} seconds, then try again.",
            )
        if self._waiting >= self.max_waiting_logins:
            self.log.warning("Login of %s refused: %d logins wait for LDAP", login, self._waiting)
            raise _directory_error("is busy with other logins")
        type(self)._waiting += 1
        try:
            call = asyncio.get_running_loop().run_in_executor(
                self._pool, authenticate, self._settings(), login, password
            )
            found = await asyncio.wait_for(call, timeout=self.timeout)
        except (DirectoryUnavailable, TimeoutError) as error:
            self.log.error("LDAP unavailable for login %s: %s", login, error or "timed out")
            raise _directory_error("is not answering") from None
        except Exception:
            # A failed login page, never a 500: whatever LDAP did, this login does not pass.
            self.log.exception("LDAP login of %s failed unexpectedly", login)
            return None
        finally:
            type(self)._waiting -= 1
        if found is None:
            failures = self.throttle.failed(login, address, time.monotonic())
            self.log.warning("Failed login of %s from %s (%d in a row)", login, address, failures)
            audit("login_failed", user=login, address=address, why="wrong name or password")
            LOGIN_FAILURES.labels("wrong name or password").inc()
            return None
        self.throttle.succeeded(login, address)
        if self.allowed_ldap_groups and not (found.groups & self.allowed_ldap_groups):
            self.log.warning("%s is in none of the allowed LDAP groups", login)
            audit("login_failed", user=login, address=address, why="in no allowed group")
            LOGIN_FAILURES.labels("in no allowed group").inc()
            return None
        audit("login", user=found.login, address=address, groups=sorted(found.groups))
        return self._user_model(found.login, found.groups)

    def get_handlers(self, app: Any) -> list[tuple[str, Any]]:
        # The hub's own logout, which also writes the audit line (see AuditedLogout).
        return [*super().get_handlers(app), ("/logout", AuditedLogout)]

    async def refresh_user(self, user: Any, handler: Any = None) -> bool | dict[str, Any]:
        """Groups and admin as LDAP has them now (the hub asks every auth_refresh_age).

        Someone taken out of an admin group loses admin within that time; someone gone from
        the directory, or from every allowed group, must log in again (and cannot). If LDAP
        does not answer, what the hub has stays.

        The user's request waits for this, so it never queues behind logins that wait for
        LDAP, and has a short budget of its own: a refresh that cannot be done now is done
        at the next one.
        """
        if self._waiting >= self.ldap_threads:
            return True
        try:
            call = asyncio.get_running_loop().run_in_executor(
                self._pool, lookup_user, self._settings(), user.name
            )
            found = await asyncio.wait_for(call, timeout=self.refresh_timeout)
        except (DirectoryUnavailable, TimeoutError) as error:
            self.log.warning("Could not refresh %s from LDAP: %s", user.name, error or "timeout")
            return True
        if found is None or (
            self.allowed_ldap_groups and not (found.groups & self.allowed_ldap_groups)
        ):
            self.log.warning("%s is no longer in LDAP or an allowed group", user.name)
            return False
        return self._user_model(found.login, found.groups)

    def _user_model(self, login: str, groups: frozenset[str]) -> dict[str, Any]:
        return {
            "name": login,
            "admin": bool(groups & self.admin_ldap_groups),
            # With manage_groups (on by default here) the hub mirrors these as its groups, which
            # is what profile visibility and the portal's admin check read.
            "groups": sorted(groups),
            "auth_state": {"groups": sorted(groups)},
        }

    async def check_allowed(self, username: str, authentication: Any = None) -> bool:
        # authenticate() has already applied the LDAP group rule to every login it returns.
        if authentication is not None:
            return True
        return bool(await super().check_allowed(username, authentication))


def _printable(login: str) -> str:
    """A refused login as logs and the audit page may show it: 32 plain characters at most."""
    shown = re.sub(r"[^\x21-\x7e]", "?", login[:32])
    return f"{shown}... ({len(login)} characters)" if len(login) > 32 else shown


def _directory_error(what: str) -> web.HTTPError:
    # Not "invalid username or password": the password may be right, and the user should
    # know to try again rather than doubt it.
    return web.HTTPError(
        503,
        f"The cluster's user directory (LDAP) {what}, so your password cannot be checked "
        "right now. Please try again in a minute.",
    )
