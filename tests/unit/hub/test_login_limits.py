"""A hub login ends after PORTAL_SESSION_IDLE_HOURS without a request of the person's own
(gpuportal_spawner.login_limits): the check at the next refresh ends all of the user's logins (a
new cookie id) with their tokens, and sends the request to the login page."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from jupyterhub import orm

from gpuportal_spawner import login_limits, request_log
from gpuportal_spawner.login_limits import IdleLogins, idle_logins


class User:
    """JupyterHub's User, as far as the check uses it (its class's name is what counts)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cookie_id = "first"
        self.admin = False


def hub_handler(user: Any = None, *, db: Any = None, path: str = "/hub/home") -> Any:
    return SimpleNamespace(
        log=logging.getLogger("test"),
        db=db,
        current_user=user,
        request=SimpleNamespace(path=path, remote_ip="10.0.0.7"),
        get_status=lambda: 200,
    )


def hub_db() -> tuple[Any, Any]:
    """JupyterHub's own database (in memory), with alice, a token her browser's login gave the
    portal (its OAuth session_id), and one she made on the Token page."""
    db = orm.new_session_factory("sqlite:///:memory:")()
    alice = orm.User(name="alice")
    db.add_all([alice, orm.OAuthClient(identifier="jupyterhub")])
    db.commit()
    orm.APIToken.new(user=alice, session_id="browser-1", scopes=[], note="portal")
    orm.APIToken.new(user=alice, scopes=[], note="token page")
    return db, alice


def test_a_user_idle_past_the_limit_logs_in_again_everywhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(login_limits.time, "monotonic", lambda: now[0])
    idle = IdleLogins()
    db, alice = hub_db()
    alice.cookie_id = "first"
    idle.note("alice", now[0])
    now[0] += 3599
    assert not idle.ended(alice, hub_handler(db=db), 3600)
    now[0] += 2
    assert idle.ended(alice, hub_handler(db=db), 3600)
    assert alice.cookie_id != "first"  # every login cookie
    # The tokens those logins gave the portal and her servers end with them (they stayed);
    # the Token page's keeps its own expiry.
    assert [t.note for t in db.query(orm.APIToken)] == ["token page"]
    assert not idle.ended(User("bob"), hub_handler(db=db), 3600)  # bob: first seen now


def test_only_the_persons_own_requests_keep_a_login(monkeypatch: pytest.MonkeyPatch) -> None:
    """A running session's calls (its activity, GPU readings, notebook jobs) came with its own
    token and kept its user's login open for good."""
    monkeypatch.setattr(request_log, "jupyterhub_log_request", lambda handler: None)
    monkeypatch.setattr(login_limits.time, "monotonic", lambda: 5.0)
    db, _ = hub_db()
    browsers, page = db.query(orm.APIToken).order_by(orm.APIToken.id)
    user = User("alice")

    def call(path: str, token: Any = None) -> dict[str, float]:
        handler = hub_handler(user, path=path)
        if token is not None:
            handler._token_authenticated = True
            handler.get_token = lambda: token
        idle_logins(user)._seen.clear()
        request_log.log_request(handler)
        return idle_logins(user)._seen

    assert call("/hub/home") == {"alice": 5.0}  # her browser, with the login cookie
    assert call("/hub/api/user", browsers) == {"alice": 5.0}  # the portal checking her browser
    assert call("/hub/api/users/alice/activity", browsers) == {}
    assert call("/hub/api/users/alice/activity", page) == {}  # a session's own call
    assert call("/hub/api/user", page) == {}  # a script's


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
