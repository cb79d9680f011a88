"""The identity provider's refused sign-ins, in the hub's audit stream and login counts.

With single sign-on the provider checks the password and the TOTP code, and a refusal never
reaches the hub: the browser stays at the provider. The provider writes each refusal to its
log; a site ships that log to the hub host (syslog, or a shared folder as in the local
cluster), and the hub follows the file. Each refusal becomes a `login_failed` record (why:
"second factor refused", "second factor reused" or "wrong name or password") and counts in
gpuportal_login_failures, as a wrong password does on the hub's own form.

    follower = ProviderLogFollower(path, {why: pattern})  # each pattern: a group named "user"
    follower.read_new()                 # [(why, user), ...] refused since the last call

    refusals = ProviderRefusals(follower, CodeLock(...), log)   # what the hub does with them
    refusals.read()                     # audited, counted; refused codes kept for the lock
    refusals.refuse_if_locked(user)     # SignInRefused while the hub locks the user out

Only what was written after the hub started counts; a rotated log (a new file, or a shorter
one) is read from its start.
"""

from __future__ import annotations

import logging
import math
import re
import time
from pathlib import Path

from gpuportal_core.throttle import CodeLock
from gpuportal_spawner.audit import audit
from gpuportal_spawner.metrics import LOGIN_FAILURES
from gpuportal_spawner.sso_handlers import SignInRefused

# LemonLDAP::NG 2.x's lines for a wrong TOTP code, a code used already (OnceTOTP, the demo's
# provider: deploy/local/sso_plugins) and a wrong password (its user log).
_USER = r"(?P<user>[a-z_][a-z0-9_.-]{0,31})\b"
LEMONLDAP_REFUSALS = {
    # 2.16's words, then 2.21's (Debian 13).
    "second factor refused": rf"totp2f: (?:invalid attempt|code did not match any of the "
    rf"registered TOTP) for {_USER}",
    "second factor reused": rf"totp2f: code already used by {_USER}",
    "wrong name or password": rf"\] Bad password for {_USER}",
}


class ProviderLogFollower:
    """Reads what was added to the provider's log since the last look."""

    def __init__(self, path: str, patterns: dict[str, str] | None = None) -> None:
        self.path = Path(path)
        self.patterns = {
            why: re.compile(pattern) for why, pattern in (patterns or LEMONLDAP_REFUSALS).items()
        }
        self._inode, self._offset = self._position_at_end()

    def _position_at_end(self) -> tuple[int, int]:
        try:
            stat = self.path.stat()
        except OSError:
            return 0, 0
        return stat.st_ino, stat.st_size

    def read_new(self) -> list[tuple[str, str]]:
        """(why, user) of each refusal written since the last call, oldest first."""
        try:
            stat = self.path.stat()
        except OSError:
            return []
        if stat.st_ino != self._inode or stat.st_size < self._offset:
            self._inode, self._offset = stat.st_ino, 0  # rotated: the new file from its start
        if stat.st_size == self._offset:
            return []
        with self.path.open("rb") as log:
            log.seek(self._offset)
            added = log.read(stat.st_size - self._offset)
        # A line still being written waits for the next look.
        complete = added[: added.rfind(b"\n") + 1]
        self._offset += len(complete)
        refused = []
        for line in complete.decode(errors="replace").splitlines():
            for why, pattern in self.patterns.items():
                if match := pattern.search(line):
                    refused.append((why, match["user"]))
                    break
        return refused


class ProviderRefusals:
    """The provider's refusals as the hub takes them: each a `login_failed` record and a count,
    and each refused code (wrong or reused) one more towards the user's lock at the hub."""

    def __init__(
        self, follower: ProviderLogFollower | None, lock: CodeLock, log: logging.Logger
    ) -> None:
        self.follower = follower
        self.lock = lock
        self.log = log

    def read(self) -> None:
        for why, user in self.follower.read_new() if self.follower else []:
            self.log.warning("The provider refused a sign-in of %s: %s", user, why)
            audit("login_failed", user=user, address="", why=why, via="sso")
            LOGIN_FAILURES.labels(why).inc()
            if why.startswith("second factor"):
                self.lock.refused(user, time.monotonic())

    def refuse_if_locked(self, user: str) -> None:
        """Refuses the sign-in of a user whose codes were refused too often lately, counting
        every refusal up to now."""
        self.read()
        wait = self.lock.locked_for(user, time.monotonic())
        if wait > 0:
            codes = f"{self.lock.allowed} code{'s' if self.lock.allowed != 1 else ''}"
            raise SignInRefused(
                user,
                "second factor locked",
                f"The sign-in service refused {codes} for {user} lately, so this portal does "
                f"not let {user} in for {math.ceil(wait / 60)} more minutes. If you did not "
                "type them, tell the cluster team: someone may know your password.",
            )
