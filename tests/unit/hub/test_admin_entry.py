"""Admins manage, they do not enter (gpuportal_spawner.admin_entry): the admin groups' role
has no scope that reaches into a user's server, and where a site lets admins in, each entry
is an audit record."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from jupyterhub.scopes import _check_scopes_exist, expand_scopes

from gpuportal_spawner import admin_entry


def test_the_admin_role_manages_servers_without_entering_them() -> None:
    role = admin_entry.admin_role({"hpc-admins"})
    assert role["groups"] == ["hpc-admins"]
    _check_scopes_exist(role["scopes"])  # every one a JupyterHub scope
    granted = expand_scopes(role["scopes"])
    assert {"admin-ui", "start:servers", "delete:servers", "list:users"} <= granted
    # Nothing that lets one act in a server or as its owner, or become a full admin.
    for entering in ("access:servers", "shares", "tokens", "admin:users", "admin:auth_state"):
        assert entering not in granted


def test_where_admins_may_enter_their_role_gains_that_one_scope() -> None:
    """Not JupyterHub's admin role: its `tokens` scope made a token for dave that reached his
    server with no consent step and no record (issue 68, item 4)."""
    role = admin_entry.admin_role({"hpc-admins"}, enter=True)
    granted = expand_scopes(role["scopes"])
    assert "access:servers" in granted
    for beyond in ("shares", "tokens", "admin:users", "admin:auth_state"):
        assert beyond not in granted
    assert set(role["scopes"]) - set(admin_entry.admin_role({"hpc-admins"})["scopes"]) == {
        "access:servers"
    }


def handler(path: str, status: int, user: Any, redirect_uri: str) -> Any:
    return SimpleNamespace(
        authenticator=SimpleNamespace(admin_ldap_groups={"hpc-admins"}),
        user=user,
        request=SimpleNamespace(path=path, remote_ip="10.0.0.7"),
        get_status=lambda: status,
        get_argument=lambda name, default="": redirect_uri if name == "redirect_uri" else default,
    )


# An admin by her group, as the hub has her (never JupyterHub's admin flag).
CAROL = SimpleNamespace(name="carol", admin=False, groups=[SimpleNamespace(name="hpc-admins")])
AUTHORIZE = "/hub/api/oauth2/authorize"


@pytest.mark.parametrize(
    ("request_", "entered"),
    [
        (handler(AUTHORIZE, 302, CAROL, "/user/dave/oauth_callback"), ("dave", "")),
        (
            handler(AUTHORIZE, 302, CAROL, "https://h/user/dave/tb-runs/oauth_callback"),
            ("dave", "tb-runs"),
        ),
        (handler(AUTHORIZE, 302, CAROL, "/user/carol/oauth_callback"), None),  # her own
        (handler(AUTHORIZE, 200, CAROL, "/user/dave/oauth_callback"), None),  # the page only
        (handler("/hub/home", 302, CAROL, "/user/dave/oauth_callback"), None),
        (
            handler(
                AUTHORIZE,
                302,
                SimpleNamespace(name="erin", admin=False, groups=[SimpleNamespace(name="vision")]),
                "/user/dave/tb-x/oauth_callback",
            ),
            None,  # shared with her: no admin's entry
        ),
        (handler(AUTHORIZE, 302, CAROL, "/services/portal/oauth_callback"), None),
    ],
)
def test_an_admins_entry_is_told_from_other_authorizations(
    request_: Any, entered: tuple[str, str] | None
) -> None:
    assert admin_entry.entered_server(request_, request_.user) == entered
