"""The JupyterLab terminal's start-up: the login files run, then the session's environment is in
front of PATH again (they reset it), each folder once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import gpuportal_session

RC = Path(gpuportal_session.__file__).parent / "terminal_rc.sh"


def terminal_path(home: Path, session_path: str) -> list[str]:
    env = {
        "HOME": str(home),
        "PATH": session_path,
        "GPUPORTAL_SESSION_PATH": session_path,
        "TERM": "dumb",
    }
    result = subprocess.run(
        ["/bin/bash", "--rcfile", str(RC), "-i", "-c", 'printf "%s" "$PATH"'],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split(":")


def test_the_sessions_environment_comes_first_after_the_login_files(tmp_path: Path) -> None:
    # A ~/.profile that resets PATH and adds the user's own folder, as login files do.
    (tmp_path / ".profile").write_text('PATH="$HOME/bin:/usr/bin:/bin"\n')
    path = terminal_path(tmp_path, "/opt/envs/torch/bin:/opt/gpuportal/venv/bin:/usr/bin:/bin")
    assert path[:2] == ["/opt/envs/torch/bin", "/opt/gpuportal/venv/bin"]
    assert f"{tmp_path}/bin" in path  # the user's own addition is kept
    assert len(path) == len(set(path)), path


def test_without_a_session_path_the_login_path_stands(tmp_path: Path) -> None:
    (tmp_path / ".profile").write_text('PATH="/usr/bin:/bin"\n')
    assert terminal_path(tmp_path, "") == ["/usr/bin", "/bin"]


def test_the_session_config_makes_terminals_use_it() -> None:
    from traitlets.config.loader import PyFileConfigLoader

    folder = RC.parent / "jupyter_config"
    config = PyFileConfigLoader("jupyter_server_config.py", path=str(folder)).load_config()
    command = config.ServerApp.terminado_settings["shell_command"]
    assert command == ["/bin/bash", "--rcfile", str(RC), "-i"]


def test_the_terminal_says_which_python_it_runs_first(tmp_path: Path) -> None:
    import sys

    bin_dir = f"{Path(sys.executable).parent}"
    env = {"HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin",
           "GPUPORTAL_SESSION_PATH": bin_dir, "GPUPORTAL_SESSION_PYTHON": sys.executable,
           "TERM": "dumb"}  # fmt: skip
    result = subprocess.run(
        ["/bin/bash", "--rcfile", str(RC), "-i", "-c", "true"],
        env=env, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert result.stdout.startswith(f"python here: {Path(sys.executable).parent}/python")
