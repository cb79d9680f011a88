"""Failed logins slow down further tries: per user and address, and per address
(LoginThrottle, the hub's password form); refused second factors lock a user's single
sign-on for a while (CodeLock).

Never per user alone: then anyone could keep a user locked out from everywhere by failing
logins in their name. A user whose password is being guessed from one address still logs in
from another. Each key gets a few free failures, then waits twice as long after each further
one (up to max_delay); a success clears the user's key, and quiet time clears all.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0


@dataclass
class LoginThrottle:
    free_failures: int = 3  # per user and address, before any wait
    address_free_failures: int = 20  # per address, over all users (password spraying)
    base_delay: float = 1.0
    max_delay: float = 300.0
    forget_after: float = 900.0  # seconds without a failure after which a key starts over
    _seen: dict[tuple[str, str], _Failures] = field(default_factory=dict, repr=False)

    def _keys(self, user: str, address: str) -> list[tuple[tuple[str, str], int]]:
        return [((user, address), self.free_failures), (("", address), self.address_free_failures)]

    def _delay(self, failures: _Failures, free: int, now: float) -> float:
        if now - failures.last > self.forget_after or failures.count < free:
            return 0.0
        delay = min(self.max_delay, self.base_delay * 2.0 ** (failures.count - free))
        return max(0.0, failures.last + delay - now)

    def wait(self, user: str, address: str, now: float) -> float:
        """Seconds before this user may try again from this address (0: now)."""
        return max(
            (self._delay(self._seen[key], free, now) for key, free in self._keys(user, address)
             if key in self._seen),
            default=0.0,
        )  # fmt: skip

    def failed(self, user: str, address: str, now: float) -> int:
        """Count a failed login; returns the failures of this user from this address."""
        for key, _ in self._keys(user, address):
            failures = self._seen.setdefault(key, _Failures())
            if now - failures.last > self.forget_after:
                failures.count = 0
            failures.count += 1
            failures.last = now
        self._prune(now)
        return self._seen[(user, address)].count

    def succeeded(self, user: str, address: str) -> None:
        """Clear the user's failures here; they no longer count against the address either
        (they were a user's typos, not guessing)."""
        mine = self._seen.pop((user, address), None)
        shared = self._seen.get(("", address))
        if mine is not None and shared is not None:
            shared.count = max(0, shared.count - mine.count)

    def _prune(self, now: float) -> None:
        # Bounded memory under a flood of made-up names: forget keys that went quiet.
        if len(self._seen) > 10_000:
            for key in [k for k, f in self._seen.items() if now - f.last > self.forget_after]:
                del self._seen[key]


@dataclass
class CodeLock:
    """Second factors refused at the provider, per user: after `allowed` of them within
    `window` seconds, the user's sign-ins are refused until `lock_for` seconds after the last.

    Per user, unlike LoginThrottle: a code is asked only after the right password, so codes
    refused in a row mean someone with the password is guessing them, from wherever. The hub
    reads them from the provider's log, which names the user and not the address. A sign-in
    that gets through does not clear them: it may be the guess that worked.
    """

    allowed: int = 5  # 0: no lock
    window: float = 900.0
    lock_for: float = 900.0
    _refused: dict[str, list[float]] = field(default_factory=dict, repr=False)

    def refused(self, user: str, now: float) -> None:
        if self.allowed <= 0:  # no lock: nothing to count
            return
        times = [t for t in self._refused.get(user, []) if now - t < self.window]
        self._refused[user] = [*times, now][-self.allowed :]
        # Bounded memory: users whose refusals are all older than the lock are forgotten.
        if len(self._refused) > 10_000:
            for name in [n for n, ts in self._refused.items() if now - ts[-1] > self.lock_for]:
                del self._refused[name]

    def locked_for(self, user: str, now: float) -> float:
        """Seconds before this user's sign-in is let through again (0: now, or no lock)."""
        times = self._refused.get(user, [])
        if self.allowed <= 0:
            return 0.0
        if len(times) < self.allowed or times[-1] - times[-self.allowed] >= self.window:
            return 0.0
        return max(0.0, times[-1] + self.lock_for - now)
