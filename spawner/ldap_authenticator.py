"""Login with the cluster's LDAP username and password."""

from __future__ import annotations

import math
import re
import time
from typing import Any

from jupyterhub.auth import Authenticator
from jupyterhub.handlers.login import LogoutHandler
from tornado import web
from traitlets import Float, Integer

from gpuportal_adapters.directory import DirectoryUnavailable, authenticate
from gpuportal_core.sbatch import USERNAME_RE
from gpuportal_core.throttle import LoginThrottle
from gpuportal_spawner.audit import audit
from gpuportal_spawner.cluster_directory import ClusterDirectory
from gpuportal_spawner.metrics import LOGIN_FAILURES


class AuditedLogout(LogoutHandler):
    """JupyterHub's logout, and a line in the audit stream saying who logged out."""

    async def handle_logout(self) -> None:
        user = self.current_user
        if user is not None:
            audit("logout", user=user.name, address=self.request.remote_ip)
        await super().handle_logout()


class ClusterLDAPAuthenticator(ClusterDirectory, Authenticator):
    """Binds as the user (ldap3, in a thread, with a timeout); admins come from an LDAP group."""

    max_waiting_logins = Integer(
        32,
        config=True,
        help="Logins that may wait for LDAP at once, e.g. 32; more are told at once to retry.",
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
    _throttle: LoginThrottle | None = None

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
            found = await self._in_directory(authenticate, login, password, timeout=self.timeout)
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
        if not self._in_allowed_group(found.groups):
            self.log.warning("%s is in none of the allowed LDAP groups", login)
            audit("login_failed", user=login, address=address, why="in no allowed group")
            LOGIN_FAILURES.labels("in no allowed group").inc()
            return None
        audit("login", user=found.login, address=address, groups=sorted(found.groups))
        return self._directory_model(found.login, found.groups)

    def get_handlers(self, app: Any) -> list[tuple[str, Any]]:
        # The hub's own logout, which also writes the audit line (see AuditedLogout).
        return [*super().get_handlers(app), ("/logout", AuditedLogout)]

    async def refresh_user(self, user: Any, handler: Any = None) -> bool | dict[str, Any]:
        return await self._refresh_from_directory(user, handler)

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
