"""The hub's JSON endpoints check scopes with JupyterHub's own rules: every filter counts."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from jupyterhub.scopes import parse_scopes

from gpuportal_spawner.json_handler import JsonHandler


def check(scopes: set[str], scope: str, **target: Any) -> tuple[bool, list[Any]]:
    sent: list[Any] = []
    handler = SimpleNamespace(
        current_user=SimpleNamespace(name="alice"),
        parsed_scopes=parse_scopes(scopes),
        db=None,
        send=lambda body, status=200: sent.append((status, body)),
    )
    return JsonHandler.require_scope(handler, scope, **target), sent  # type: ignore[arg-type]


def test_own_scopes_and_filters() -> None:
    assert check({"servers!user=alice"}, "servers")[0]
    assert check({"servers"}, "servers", user="bob")[0]  # unfiltered: everyone's
    # A token for one server only: that server, not the user's others.
    one = {"servers!server=alice/train"}
    assert check(one, "servers", server="train")[0]
    allowed, sent = check(one, "servers", server="eval")
    assert not allowed and sent == [
        (403, {"error": "this token lacks the servers scope for alice"})
    ]
    assert not check(one, "servers")[0]


def test_another_users_scope_is_refused() -> None:
    allowed, sent = check({"read:servers!user=alice"}, "read:servers", user="bob")
    assert not allowed and sent[0][0] == 403
