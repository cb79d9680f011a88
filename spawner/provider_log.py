"""The identity provider's refused sign-ins, in the hub's audit stream and login counts.

With single sign-on the provider checks the password and the TOTP code, and a refusal never
reaches the hub: the browser stays at the provider. The provider writes each refusal to its
log; a site ships that log to the hub host (syslog, or a shared folder as in the local
cluster), and the hub follows the file. Each refusal becomes a `login_failed` record (why:
"second factor refused" or "wrong name or password") and counts in gpuportal_login_failures,
as a wrong password does on the hub's own form.

    follower = ProviderLogFollower(path, {why: pattern})  # each pattern: a group named "user"
    follower.read_new()                 # [(why, user), ...] refused since the last call

Only what was written after the hub started counts; a rotated log (a new file, or a shorter
one) is read from its start.
"""

from __future__ import annotations

import re
from pathlib import Path

# LemonLDAP::NG 2.x's lines for a wrong TOTP code and a wrong password (its user log).
_USER = r"(?P<user>[a-z_][a-z0-9_.-]{0,31})\b"
LEMONLDAP_REFUSALS = {
    "second factor refused": rf"totp2f: invalid attempt for {_USER}",
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
