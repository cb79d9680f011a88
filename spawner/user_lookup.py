"""The signed-in user of each hub request by one id query, not by loading the user's row again.

JupyterHub finds the user of every request by its cookie (`BaseHandler._user_for_cookie`) and
the user a page or API call names (`BaseHandler.find_user`) with `query(orm.User)...first()`.
The hub's session already holds that user (it never expires them), so the row comes back as
the same object, but SQLAlchemy runs the user's select-in loaders all the same (roles, groups,
shares, and the groups' roles and shares), one query each, and throws their rows away: 40-46 %
of the hub's CPU for a page (`python -m bench.hub_request_cost --profile PY_SPY`).

Here both ask for the user's id alone and take the user from JupyterHub's own `UserDict`
(`self.users[id]`), which loads and adds a user it does not hold yet, as JupyterHub does. The
answers do not change: the cookie's id is still looked up in the database at every request, so
the cookie of a user an admin removed finds nobody at once.

This is the change JupyterHub itself would take (docs/explanation/upstream.md has it as a
patch); until it is there, gpuportal_spawner.compat puts these two on `BaseHandler` only while
JupyterHub's own are the ones they were written against (the sha256 of their source).
"""

from __future__ import annotations

from typing import Any

from jupyterhub import orm
from jupyterhub.handlers.base import BaseHandler


def _user_for_cookie(self: BaseHandler, cookie_name: str, cookie_value: str | None = None) -> Any:
    """JupyterHub's `BaseHandler._user_for_cookie` (6.1), but the user found by id."""
    cookie_id = self.get_secure_cookie(
        cookie_name, cookie_value, max_age_days=self.cookie_max_age_days
    )

    def clear() -> None:
        self.clear_cookie(cookie_name, path=self.hub.base_url)

    if cookie_id is None:
        if self.get_cookie(cookie_name):
            self.log.warning("Invalid or expired cookie token")
            clear()
        return None
    cookie = cookie_id.decode("utf8", "replace")
    user = _by_id(self, self.db.query(orm.User.id).filter(orm.User.cookie_id == cookie).scalar())
    if user is None:
        self.log.warning("Invalid cookie token")
        # have cookie, but it's not valid. Clear it and start over.
        clear()
        return None

    # update user activity
    if self._record_activity(user):
        self.db.commit()
    return user


def find_user(self: BaseHandler, name: str) -> Any:
    """JupyterHub's `BaseHandler.find_user` (6.1), but the user found by id."""
    return _by_id(self, self.db.query(orm.User.id).filter(orm.User.name == name).scalar())


def _by_id(handler: BaseHandler, user_id: int | None) -> Any:
    return None if user_id is None else handler.users.get(user_id)
