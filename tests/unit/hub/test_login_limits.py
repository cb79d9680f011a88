"""A hub login ends after PORTAL_SESSION_IDLE_HOURS without a call (gpuportal_spawner.
login_limits): every call the hub answers counts, the check at the next refresh ends all of the
user's logins (a new cookie id) and sends the request to the login page."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from gpuportal_spawner import login_limits, request_log
from gpuportal_spawner.login_limits import IdleLogins, idle_logins


class User:
    """JupyterHub's User, as far as the check uses it (its class's name is what counts)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cookie_id = "first"
        self.admin = False


def hub_handler(user: Any = None) -> Any:
    committed: list[bool] = []
    return SimpleNamespace(
        log=logging.getLogger("test"),
        db=SimpleNamespace(commit=lambda: committed.append(True)),
        committed=committed,
        current_user=user,
        request=SimpleNamespace(path="/hub/home", remote_ip="10.0.0.7"),
        get_status=lambda: 200,
    )


def test_a_user_idle_past_the_limit_logs_in_again_everywhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(login_limits.time, "monotonic", lambda: now[0])
    idle = IdleLogins()
    alice = User("alice")
    idle.note("alice", now[0])
    now[0] += 3599
    assert not idle.ended(alice, hub_handler(), 3600)
    now[0] += 2
    handler = hub_handler()
    assert idle.ended(alice, handler, 3600)
    assert alice.cookie_id != "first" and handler.committed == [True]  # every login cookie
    assert not idle.ended(User("bob"), hub_handler(), 3600)  # bob: first seen now


def test_no_limit_or_no_request_ends_nothing() -> None:
    assert not IdleLogins().ended(User("alice"), hub_handler(), 0)
    assert not IdleLogins().ended(User("alice"), None, 1)


def test_each_answered_call_counts_as_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request_log, "jupyterhub_log_request", lambda handler: None)
    monkeypatch.setattr(login_limits.time, "monotonic", lambda: 5.0)
    alice, culler = User("alice"), SimpleNamespace(name="culler")
    request_log.log_request(hub_handler(alice))
    request_log.log_request(hub_handler(None))  # nobody signed in
    request_log.log_request(hub_handler(culler))  # a service

    class Early:
        @property
        def current_user(self) -> Any:
            raise RuntimeError("Must call async get_current_user first!")

    request_log.log_request(Early())
    assert idle_logins(alice)._seen == {"alice": 5.0}
    assert not hasattr(culler, "_gpuportal_hub_state")
