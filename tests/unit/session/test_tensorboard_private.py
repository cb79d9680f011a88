"""The private TensorBoard's bookkeeping: its folder checks, numbers and private directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpuportal_session.tensorboard_page import candidate_folders
from gpuportal_session.tensorboard_private import check_logdir, claim_number, instances, runtime_dir


def test_a_missing_or_unreadable_folder_is_refused_in_words(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="there is no folder"):
        check_logdir(["--logdir", str(tmp_path / "nope")])
    with pytest.raises(SystemExit, match="needs a folder"):
        check_logdir([])
    assert check_logdir(["--logdir", str(tmp_path)]) == str(tmp_path)


def test_numbers_are_reused_once_their_tensorboard_is_gone(tmp_path: Path) -> None:
    assert claim_number(tmp_path) == 1
    assert claim_number(tmp_path) == 2
    # Number 1 belongs to a process that no longer exists: it can be taken again.
    (tmp_path / "1.json").write_text(json.dumps({"pid": 2**22 + 12345, "socket": "x"}))
    assert claim_number(tmp_path) == 1


def test_only_live_instances_with_a_socket_are_listed(tmp_path: Path) -> None:
    sock = tmp_path / "3.sock"
    sock.touch()
    (tmp_path / "3.json").write_text(
        json.dumps({"number": 3, "pid": os.getpid(), "logdir": "/x", "socket": str(sock)})
    )
    (tmp_path / "4.json").write_text(
        json.dumps({"number": 4, "pid": 2**22 + 1, "logdir": "/y", "socket": str(sock)})
    )
    assert [b["number"] for b in instances(tmp_path)] == [3]


def test_the_runtime_directory_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPORTAL_RUNTIME_DIR", str(tmp_path / "rt"))
    (tmp_path / "rt").mkdir(mode=0o755)
    path = runtime_dir()
    assert path == tmp_path / "rt" / "tensorboard"
    for directory in (path, path.parent):
        assert directory.stat().st_mode & 0o777 == 0o700


def test_folders_with_event_files_are_suggested(tmp_path: Path) -> None:
    (tmp_path / "runs" / "a").mkdir(parents=True)
    (tmp_path / "runs" / "a" / "events.out.tfevents.1.host").write_bytes(b"")
    (tmp_path / ".hidden" / "b").mkdir(parents=True)
    (tmp_path / ".hidden" / "b" / "events.out.tfevents.2.host").write_bytes(b"")
    (tmp_path / "runs" / "b").mkdir(parents=True)
    (tmp_path / "runs" / "b" / "events.out.tfevents.3.host").write_bytes(b"")
    (tmp_path / "solo").mkdir()
    (tmp_path / "solo" / "events.out.tfevents.4.host").write_bytes(b"")
    os.utime(tmp_path / "solo" / "events.out.tfevents.4.host", (1, 1))
    # The folder above the runs, so TensorBoard compares them; a run in home stands alone;
    # the most recently written first.
    found = candidate_folders(tmp_path)
    assert [(f["label"], f["runs"]) for f in found] == [("runs", 2), ("solo", 1)]
    assert found[0]["path"] == str(tmp_path / "runs") and found[0]["updated"] == "just now"


def test_the_board_proxy_finds_a_running_boards_socket_by_its_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuportal_session.board_proxy import board_socket

    monkeypatch.setenv("GPUPORTAL_RUNTIME_DIR", str(tmp_path))
    folder = tmp_path / "tensorboard"
    folder.mkdir(mode=0o700)
    record = {"number": 3, "pid": os.getpid(), "logdir": "/x", "socket": str(folder / "3.sock")}
    (folder / "3.json").write_text(json.dumps(record))
    (folder / "3.sock").touch()
    assert board_socket("3") == str(folder / "3.sock")
    assert board_socket("4") is None  # closed (or never opened): the proxy answers 404
