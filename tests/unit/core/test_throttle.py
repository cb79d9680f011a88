"""Login throttling: growing waits per user and address, never a lock-out from elsewhere."""

from __future__ import annotations

from gpuportal_core.throttle import CodeLock, LoginThrottle


def fail(throttle: LoginThrottle, times: int, user: str = "bob", address: str = "10.0.0.1",
         now: float = 100.0) -> None:  # fmt: skip
    for _ in range(times):
        throttle.failed(user, address, now)


def test_a_few_failures_are_free_then_each_doubles_the_wait() -> None:
    throttle = LoginThrottle(free_failures=3, base_delay=1.0)
    fail(throttle, 2)
    assert throttle.wait("bob", "10.0.0.1", 100.0) == 0
    waits = []
    for _ in range(4):
        fail(throttle, 1)
        waits.append(throttle.wait("bob", "10.0.0.1", 100.0))
    assert waits == [1.0, 2.0, 4.0, 8.0]
    assert throttle.wait("bob", "10.0.0.1", 107.5) == 0.5
    assert throttle.wait("bob", "10.0.0.1", 108.0) == 0


def test_the_wait_has_a_ceiling() -> None:
    throttle = LoginThrottle(free_failures=1, base_delay=1.0, max_delay=60.0)
    fail(throttle, 40)
    assert throttle.wait("bob", "10.0.0.1", 100.0) == 60.0


def test_another_address_is_not_locked_out() -> None:
    throttle = LoginThrottle()
    fail(throttle, 40)
    assert throttle.wait("bob", "10.0.0.1", 100.0) > 0
    assert throttle.wait("bob", "10.0.0.2", 100.0) == 0


def test_one_address_guessing_many_users_is_slowed_too() -> None:
    throttle = LoginThrottle(free_failures=3, address_free_failures=5)
    for n in range(6):
        throttle.failed(f"user{n}", "10.0.0.9", 100.0)
    assert throttle.wait("someone-else", "10.0.0.9", 100.0) > 0
    assert throttle.wait("someone-else", "10.0.0.8", 100.0) == 0


def test_success_clears_the_users_failures_and_quiet_time_clears_all() -> None:
    throttle = LoginThrottle(free_failures=1, forget_after=900.0)
    fail(throttle, 3)
    throttle.succeeded("bob", "10.0.0.1")
    assert throttle.wait("bob", "10.0.0.1", 100.0) == 0
    fail(throttle, 3, user="carol")
    assert throttle.wait("carol", "10.0.0.1", 100.0 + 901) == 0
    assert throttle.failed("carol", "10.0.0.1", 100.0 + 901) == 1


def test_a_users_typos_that_end_in_success_do_not_count_against_the_address() -> None:
    throttle = LoginThrottle(free_failures=3, address_free_failures=4)
    fail(throttle, 3, user="alice")
    throttle.succeeded("alice", "10.0.0.1")
    fail(throttle, 2, user="bob")
    assert throttle.wait("carol", "10.0.0.1", 100.0) == 0


def test_refused_codes_lock_the_user_until_the_lock_has_passed() -> None:
    lock = CodeLock(allowed=3, window=600.0, lock_for=900.0)
    lock.refused("bob", 100.0)
    lock.refused("bob", 200.0)
    assert lock.locked_for("bob", 200.0) == 0
    lock.refused("bob", 300.0)
    assert lock.locked_for("bob", 300.0) == 900.0
    assert lock.locked_for("bob", 1100.0) == 100.0
    assert lock.locked_for("bob", 1200.0) == 0
    assert lock.locked_for("alice", 300.0) == 0  # per user: nobody else is locked


def test_refusals_spread_wider_than_the_window_do_not_lock() -> None:
    lock = CodeLock(allowed=3, window=600.0, lock_for=900.0)
    for now in (0.0, 400.0, 800.0, 1200.0):
        lock.refused("bob", now)
        assert lock.locked_for("bob", now) == 0


def test_no_lock_when_none_is_allowed() -> None:
    lock = CodeLock(allowed=0)
    for now in (0.0, 1.0, 2.0):
        lock.refused("bob", now)
    assert lock.locked_for("bob", 2.0) == 0
