"""Who asked for a stop, as the hub's request log sees each request (gpuportal_spawner.audit)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from gpuportal_spawner.audit import stop_request


@dataclass
class Request:
    method: str
    path: str


@dataclass
class User:
    name: str


class Service:  # JupyterHub's own class has this name
    name = "idle-culler"


class Handler:
    def __init__(self, method: str, path: str, status: int, who: Any) -> None:
        self.request = Request(method, path)
        self._status = status
        self._jupyterhub_user = who

    def get_status(self) -> int:
        return self._status


@pytest.mark.parametrize(
    ("method", "path", "status", "who", "expected"),
    [
        (
            "DELETE",
            "/hub/api/users/alice/server",
            204,
            User("alice"),
            ("alice", "", "alice", "owner"),
        ),
        (
            "DELETE",
            "/hub/api/users/bob/servers/big",
            202,
            User("carol"),
            ("bob", "big", "carol", "admin"),
        ),
        (
            "DELETE",
            "/hub/api/users/alice/server",
            204,
            Service(),
            ("alice", "", "idle-culler", "service"),
        ),
        # Not a stop, or a stop that was refused: no record.
        ("DELETE", "/hub/api/users/alice/server", 403, User("dave"), None),
        ("POST", "/hub/api/users/alice/server", 201, User("alice"), None),
        ("DELETE", "/hub/api/users/alice/tokens/a1", 204, User("alice"), None),
    ],
)
def test_who_stopped(method, path, status, who, expected):
    fields = stop_request(Handler(method, path, status, who))
    keys = ("user", "server", "by", "role")
    assert fields == (dict(zip(keys, expected, strict=True)) if expected else None)
