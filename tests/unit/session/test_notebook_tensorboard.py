"""`%tensorboard` in a real IPython kernel of the session venv: once `%load_ext tensorboard` ran,
the portal's start() shows which folder and that it is private, never a "port"."""

from __future__ import annotations

import os
import re
from collections import namedtuple
from pathlib import Path
from typing import Any

import jupyter_client
import pytest

import gpuportal_session
from gpuportal_session.notebook_tensorboard import board_html

# Builds or starts processes: make test runs it, make check leaves it out (issue 53).
pytestmark = pytest.mark.builds

STARTUP = Path(gpuportal_session.__file__).parent / "ipython_startup.py"
Info = namedtuple("Info", "port logdir")


def test_the_board_is_named_by_its_folder_not_a_port() -> None:
    shown = board_html(Info(port=3, logdir="/home/alice/runs"))
    assert "TensorBoard on <code>/home/alice/runs</code>, private to you" in shown
    assert 'src="/tensorboard/tb/3/"' in shown
    assert not re.search(r"\bport\b", shown, re.IGNORECASE)


def run(client: Any, code: str) -> list[dict[str, Any]]:
    client.execute(code)
    outputs = []
    while True:
        message = client.get_iopub_msg(timeout=60)
        if message["msg_type"] in ("stream", "display_data", "update_display_data", "error"):
            outputs.append(message["content"])
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return outputs


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    own = tmp_path / "mine.py"
    own.write_text("USERS_OWN_STARTUP = True\n")
    monkeypatch.setenv("PYTHONSTARTUP", str(STARTUP))
    monkeypatch.setenv("GPUPORTAL_USER_PYTHONSTARTUP", str(own))
    monkeypatch.setenv("TENSORBOARD_BINARY", str(tmp_path / "no-such-tensorboard"))
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    yield client
    manager.shutdown_kernel(now=True)


def test_a_kernel_gets_the_portals_tensorboard_magic(kernel: Any) -> None:
    loaded = run(
        kernel,
        "%load_ext tensorboard\nimport tensorboard.notebook as n\n"
        "print(n.start.__module__, USERS_OWN_STARTUP)",
    )
    assert loaded[-1]["text"] == "gpuportal_session.notebook_tensorboard True\n"
    shown = run(kernel, "%tensorboard --logdir runs")
    texts = [o["data"]["text/plain"] for o in shown if "data" in o]
    assert texts[0] == "Starting TensorBoard…"
    assert texts[-1].startswith("TensorBoard could not be run: ")
    assert not any(re.search(r"\bport\b", text) for text in texts)


def test_a_dead_instances_record_is_never_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A killed TensorBoard's record (same arguments, same folder) must not be "reused"."""
    import dataclasses
    import subprocess

    from tensorboard import manager

    from gpuportal_session.notebook_tensorboard import forget_dead_boards

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    dead = subprocess.Popen(["true"])
    dead.wait()
    record = manager.TensorBoardInfo(
        version=manager.version.VERSION, start_time=0, port=1, pid=dead.pid,
        path_prefix="", logdir="runs", db="", cache_key="k",
    )  # fmt: skip
    live = dataclasses.replace(record, pid=os.getpid(), port=2)
    folder = tmp_path / ".tensorboard-info"
    folder.mkdir()
    for info in (record, live):
        (folder / f"pid-{info.pid}.info").write_text(manager._info_to_string(info))
    assert {i.pid for i in manager.get_all()} == {dead.pid, os.getpid()}
    forget_dead_boards()
    assert [i.pid for i in manager.get_all()] == [os.getpid()]
