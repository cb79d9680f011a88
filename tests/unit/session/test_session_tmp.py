"""A session's private folder in /tmp: locked while its process lives; the next session of the
same user removes those whose process died (a killed session cannot remove its own)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from gpuportal_session import session_tmp

MAKE_AND_HOLD = (
    "import sys, time; from pathlib import Path; from gpuportal_session import session_tmp;"
    "print(session_tmp.fresh_runtime_dir(Path(sys.argv[1])), flush=True); time.sleep(60)"
)


def start_session(root: Path) -> tuple[subprocess.Popen[str], Path]:
    process = subprocess.Popen(
        [sys.executable, "-c", MAKE_AND_HOLD, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_a_killed_sessions_folder_goes_and_a_live_ones_stays(tmp_path: Path) -> None:
    live, live_folder = start_session(tmp_path)
    killed, killed_folder = start_session(tmp_path)
    (killed_folder / "tmp" / ".tensorboard-info").mkdir(parents=True)
    killed.kill()  # as SIGKILL after the time limit's grace: no atexit
    killed.wait()
    assert killed_folder.is_dir()
    try:
        removed = session_tmp.sweep_left_behind(tmp_path)
        assert removed == [killed_folder]
        assert live_folder.is_dir() and not killed_folder.exists()
    finally:
        live.kill()
        live.wait()


def test_a_session_that_ends_normally_removes_its_folder_and_sweeps(tmp_path: Path) -> None:
    left = tmp_path / f"{session_tmp.prefix()}old"
    left.mkdir()
    (left / session_tmp.LOCK).touch()
    code = (
        "import sys; from pathlib import Path; from gpuportal_session import session_tmp;"
        "print(session_tmp.fresh_runtime_dir(Path(sys.argv[1])))"
    )
    made = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert not Path(made).exists() and not left.exists()


def test_folders_without_a_lock_are_kept_while_they_may_be_setting_up(tmp_path: Path) -> None:
    young = tmp_path / f"{session_tmp.prefix()}young"
    old = tmp_path / f"{session_tmp.prefix()}old"
    young.mkdir()
    old.mkdir()
    hour_ago = time.time() - 3600
    os.utime(old, (hour_ago, hour_ago))
    assert session_tmp.sweep_left_behind(tmp_path) == [old]
    assert young.is_dir()


def test_links_and_other_peoples_folders_are_never_touched(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    (tmp_path / f"{session_tmp.prefix()}link").symlink_to(target)
    other = tmp_path / f"{session_tmp.prefix(os.getuid() + 1)}x"
    other.mkdir()
    assert session_tmp.sweep_left_behind(tmp_path) == []
    assert session_tmp.sweep_left_behind(tmp_path, uid=os.getuid() + 1) == []  # not its owner
    assert target.is_dir() and other.is_dir()


def test_tensorboards_records_go_to_the_private_folder_only_within_the_block(
    tmp_path: Path,
) -> None:
    import tempfile

    before = tempfile.gettempdir()
    folder = session_tmp.records_dir(str(tmp_path))
    with session_tmp.records_in(folder):
        assert tempfile.gettempdir() == folder == str(tmp_path / "tmp")
    assert tempfile.gettempdir() == before  # the session's own temporary folder is untouched
    assert (tmp_path / "tmp").stat().st_mode & 0o777 == 0o700
