"""Shared TensorBoards: their server names and the folder rule (gpuportal_spawner.board_spawner,
gpuportal_spawner.board_sharing)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from jupyterhub import orm

from gpuportal_core.boards import is_board
from gpuportal_spawner.board_sharing import board_name, shared_with
from gpuportal_spawner.board_spawner import check_folder


@pytest.mark.parametrize(
    ("folder", "taken", "name"),
    [
        ("/home/alice/runs", {}, "tb-runs"),
        ("/home/alice/My Runs_2026/", {}, "tb-my-runs-2026"),
        ("/home/alice/runs", {"tb-runs": "/home/alice/runs"}, "tb-runs"),  # the same board
        ("/projects/x/runs", {"tb-runs": "/home/alice/runs"}, "tb-runs-2"),
        ("/", {}, "tb-board"),
    ],
)
def test_a_board_is_named_after_its_folder(folder: str, taken: dict[str, str], name: str) -> None:
    assert board_name(folder, taken) == name
    assert is_board(name) and not is_board("training")


@pytest.mark.parametrize(
    ("folder", "rule"),
    [("runs", "absolute path"), ("/home/a/../b", "'..'"), ("/home/a/$(id)", "absolute path")],
)
def test_folders_are_checked(folder: str, rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        check_folder(folder)
    assert check_folder("/home/a//runs/") == "/home/a/runs"


class _Board:
    """The owner's board spawner as the hub holds it: its poll finds the step gone and, as
    JupyterHub's poll callback does, clears the server from the database."""

    def __init__(self, row: orm.Spawner, db: Any) -> None:
        self.row, self.db, self.ready = row, db, True

    async def poll_and_notify(self) -> int:
        self.row.server = None
        self.db.commit()
        self.ready = False
        return 0


async def test_a_shared_board_that_ended_with_its_session_says_so_at_once() -> None:
    """bob's "Shared with you" card of alice's board: her session stopped, and the board's step
    with it; the hub learns that at its next poll (a minute on a site), so the list asks the
    board itself, as the owner's own list does (issue 54, item 6)."""
    db = orm.new_session_factory("sqlite:///:memory:")()
    alice, bob, ds = orm.User(name="alice"), orm.User(name="bob"), orm.Group(name="ds")
    bob.groups.append(ds)
    row = orm.Spawner(name="tb-runs", user=alice, user_options={"tensorboard": "/home/alice/runs"})
    row.server = orm.Server()
    db.add_all([alice, bob, ds, row])
    db.commit()
    db.add(orm.Share(owner=alice, spawner=row, group=ds, scopes=["access:servers"]))
    db.commit()
    board = _Board(row, db)
    users = {alice: SimpleNamespace(spawners={"tb-runs": board})}

    listed = await shared_with(bob, db, users, "/")
    said = [(b["owner"], b["name"], b["state"]) for b in listed]
    assert said == [("alice", "tb-runs", "stopped")]
    assert listed[0]["groups"] == ["ds"] and listed[0]["url"] == "/user/alice/tb-runs/"
