"""A request's user found by one id query (gpuportal_spawner.user_lookup), with the same answers
as JupyterHub's own lookups: on JupyterHub's real ORM, in an in-memory SQLite database."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from jupyterhub import orm
from jupyterhub.handlers.base import BaseHandler
from jupyterhub.user import UserDict
from sqlalchemy import event

from gpuportal_adapters import compat as adapters_compat
from gpuportal_spawner import compat, user_lookup
from gpuportal_spawner.compat import JUPYTERHUB_OWN

LOG = logging.getLogger(__name__)


@dataclass
class Request:
    """What the two lookups use of a hub request handler, the cookie as the browser sent it."""

    db: Any
    users: UserDict
    cookie: bytes | None
    cleared: list[str] = field(default_factory=list)
    cookie_max_age_days: int = 14
    log: logging.Logger = LOG

    hub = type("Hub", (), {"base_url": "/hub/"})()
    _user_from_orm = BaseHandler._user_from_orm  # JupyterHub's own lookups call it

    def get_secure_cookie(self, name: str, value: Any, max_age_days: int) -> bytes | None:
        return self.cookie

    def get_cookie(self, name: str) -> str | None:
        return "signed" if self.cookie is None else None

    def clear_cookie(self, name: str, path: str) -> None:
        self.cleared.append(name)

    def _record_activity(self, obj: Any) -> bool:
        return False


@pytest.fixture
def db() -> Iterator[Any]:
    session = orm.new_session_factory("sqlite:///:memory:")()
    # A hub's users: each with JupyterHub's default role and a group, as on the portal.
    role = orm.Role(name="user", scopes=["self"])
    group = orm.Group(name="vision")
    for name in ("alice", "bob"):
        user = orm.User(name=name, cookie_id=f"cookie-of-{name}")
        user.roles.append(role)
        user.groups.append(group)
        session.add(user)
    session.commit()
    yield session
    session.close()


def statements(db: Any) -> tuple[list[str], Callable[[], None]]:
    seen: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    engine = db.get_bind()
    event.listen(engine, "before_cursor_execute", count)
    return seen, lambda: event.remove(engine, "before_cursor_execute", count)


def request(db: Any, cookie: bytes | None) -> Request:
    users = UserDict(lambda: db, {})
    for orm_user in db.query(orm.User):  # the hub holds its users from its start
        users.add(orm_user)
    return Request(db, users, cookie)


@pytest.mark.parametrize("name", ["_user_for_cookie", "find_user"])
def test_one_query_where_jupyterhubs_own_takes_several(db: Any, name: str) -> None:
    argument = "jupyterhub-hub-login" if name == "_user_for_cookie" else "alice"
    counts = {}
    for lookup in (JUPYTERHUB_OWN[name], getattr(user_lookup, name)):
        handler = request(db, b"cookie-of-alice")
        seen, stop = statements(db)
        user = lookup(handler, argument)
        stop()
        assert user.name == "alice"
        counts[lookup] = len(seen)
    own, ours = counts.values()
    assert ours == 1, counts
    # roles, groups, shares and the groups' roles and shares, each loaded again and thrown away
    assert own >= 4, counts


def test_the_same_users_and_refusals_as_jupyterhubs_own(db: Any) -> None:
    for cookie in (b"cookie-of-alice", b"cookie-of-bob", b"no-such-cookie", None):
        answers = []
        for lookup in (JUPYTERHUB_OWN["_user_for_cookie"], user_lookup._user_for_cookie):
            handler = request(db, cookie)
            user = lookup(handler, "jupyterhub-hub-login")
            answers.append((user and user.name, handler.cleared))
        assert answers[0] == answers[1], cookie
    for name in ("alice", "carol"):
        handler = request(db, None)
        assert user_lookup.find_user(handler, name) == JUPYTERHUB_OWN["find_user"](handler, name)


def test_a_logout_ends_the_old_cookie_at_once(db: Any) -> None:
    handler = request(db, b"cookie-of-alice")
    assert user_lookup._user_for_cookie(handler, "jupyterhub-hub-login").name == "alice"
    # JupyterHub's logout gives the user a new cookie id; the old cookie finds nobody.
    alice = orm.User.find(db, "alice")
    alice.cookie_id = "rotated"
    db.commit()
    assert user_lookup._user_for_cookie(handler, "jupyterhub-hub-login") is None
    assert handler.cleared == ["jupyterhub-hub-login"]


def test_a_user_the_hub_does_not_hold_yet_is_loaded_and_kept(db: Any) -> None:
    handler = request(db, b"cookie-of-bob")
    handler.users = UserDict(lambda: db, {})
    bob = user_lookup._user_for_cookie(handler, "jupyterhub-hub-login")
    assert bob.name == "bob" and bob.id in handler.users


def jupyterhubs_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BaseHandler, "find_user", JUPYTERHUB_OWN["find_user"])
    monkeypatch.setattr(BaseHandler, "_user_for_cookie", JUPYTERHUB_OWN["_user_for_cookie"])


def test_another_jupyterhubs_methods_are_left_as_they_are(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    jupyterhubs_own(monkeypatch)

    def find_user(self: BaseHandler, name: str) -> None:  # another JupyterHub's
        return None

    monkeypatch.setitem(JUPYTERHUB_OWN, "find_user", find_user)
    assert compat.apply([compat.USERS_BY_ID], LOG) == []
    assert BaseHandler._user_for_cookie is JUPYTERHUB_OWN["_user_for_cookie"]
    assert "JupyterHub's BaseHandler.find_user is not jupyterhub 6.1.1's" in caplog.text
    monkeypatch.setitem(JUPYTERHUB_OWN, "find_user", BaseHandler.find_user)
    assert compat.apply([compat.USERS_BY_ID], LOG) == [compat.USERS_BY_ID.name]
    assert BaseHandler.find_user is user_lookup.find_user


def test_a_jupyterhub_without_its_sources_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_source(method: object) -> str:
        raise OSError("could not get source code")

    jupyterhubs_own(monkeypatch)
    monkeypatch.setattr(adapters_compat.inspect, "getsource", no_source)
    assert compat.apply([compat.USERS_BY_ID], LOG) == []
    assert BaseHandler._user_for_cookie is JUPYTERHUB_OWN["_user_for_cookie"]
