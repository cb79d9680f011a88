"""Shared TensorBoards: their server names and the folder rule (gpuportal_spawner.board_spawner,
gpuportal_spawner.board_sharing)."""

from __future__ import annotations

import pytest

from gpuportal_spawner.board_sharing import board_name
from gpuportal_spawner.board_spawner import check_folder, is_board


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
