"""Who asked for a stop (gpuportal_spawner.audit): noted by the API's stop handler, taken once
by the session's `stop` record, so that each stop is one audit record (issue 54, item 10)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from gpuportal_spawner.audit import note_stop_request, requester, started_by, stop_requested_by


@dataclass
class User:
    name: str


class Service:  # JupyterHub's own class has this name
    name = "idle-culler"


def test_who_asked_and_as_what() -> None:
    assert requester(User("alice"), "alice") == {"by": "alice", "role": "owner"}
    assert requester(User("carol"), "bob") == {"by": "carol", "role": "admin"}
    assert requester(Service(), "alice") == {"by": "idle-culler", "role": "service"}


def test_a_note_is_taken_once_by_its_servers_stop() -> None:
    note_stop_request(User("carol"), "bob", "big")
    assert stop_requested_by("bob", "") == {}  # another server of bob's
    assert stop_requested_by("bob", "big") == {"by": "carol", "role": "admin"}
    assert stop_requested_by("bob", "big") == {}  # a later stop (Slurm's) asked by nobody


def test_a_spawns_record_names_who_started_whose_server() -> None:
    """The spawn record had no actor: an admin's start of another user's server read as the
    user's own (issue 68, item 4)."""

    class Unlooked:
        @property
        def current_user(self) -> Any:
            raise RuntimeError("Must call async get_current_user first!")

    assert started_by(SimpleNamespace(current_user=User("carol")), "dave") == {
        "by": "carol",
        "role": "admin",
    }
    assert started_by(SimpleNamespace(current_user=User("dave")), "dave")["role"] == "owner"
    assert started_by(SimpleNamespace(current_user=Service()), "dave")["role"] == "service"
    assert started_by(None, "dave") == {"by": "hub", "role": "hub"}
    assert started_by(Unlooked(), "dave") == {"by": "hub", "role": "hub"}
