"""VS Code in the browser (code-server) in a session: a launcher tile, and /user/NAME/vscode/.

jupyter-server-proxy starts it on first use, as the user, in the job, on a unix socket in a
private directory: no TCP port that another user of the node could reach, and the hub's login in
front of it (so code-server's own login is off). It opens the session's folder, its terminals
start the way the lab's do (the session's environment active), and a Python extension, where one
is installed, finds the session's Python. It ends with the Jupyter server, so with the job.

An environment without code-server on its PATH has no tile: the entry point raises, and
jupyter-server-proxy leaves it out with a warning in the server's log.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from gpuportal_session.tensorboard_private import RUNTIME_ENV

COMMAND = "code-server"
ICON = Path(__file__).parent / "vscode.svg"
TERMINAL_RC = Path(__file__).parent / "terminal_rc.sh"
# code-server's own files (settings, extensions, state) stay in the user's home, kept from one
# session to the next, as VS Code keeps them on a desktop.
USER_DATA = Path("~/.local/share/code-server")


def server_proxy_config() -> dict[str, Any]:
    """jupyter-server-proxy's entry for VS Code (entry point `jupyter_serverproxy_servers`)."""
    if shutil.which(COMMAND) is None:
        raise RuntimeError(f"{COMMAND} is not on this environment's PATH: no VS Code tile")
    return {
        "command": [sys.executable, "-m", "gpuportal_session.vscode", "{unix_socket}"],
        "unix_socket": True,
        # A first start on a busy node: code-server answers within a second or two here.
        "timeout": 60,
        "new_browser_tab": True,
        "launcher_entry": {"title": "VS Code", "icon_path": str(ICON)},
    }


def machine_settings(python: str) -> dict[str, Any]:
    """The settings VS Code keeps per machine (code-server's "Machine" scope), for this session:
    its Python for the Python extension, and terminals started like the lab's."""
    return {
        "python.defaultInterpreterPath": python,
        "terminal.integrated.profiles.linux": {
            "session": {"path": "/bin/bash", "args": ["--rcfile", str(TERMINAL_RC), "-i"]}
        },
        "terminal.integrated.defaultProfile.linux": "session",
        # The hub's pages say when the job ends; the update and the welcome tour are noise here,
        # and so is the AI chat, whose service a cluster without internet cannot reach.
        "update.mode": "none",
        "workbench.startupEditor": "none",
        "chat.disableAIFeatures": True,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
    }


def write_machine_settings(user_data: Path, settings: dict[str, Any]) -> bool:
    """Merge settings into user_data/Machine/settings.json, keeping every other key there.

    VS Code allows comments in that file; one this cannot read is left as it is (False): the
    user's own file wins over the session's defaults.
    """
    path = user_data / "Machine" / "settings.json"
    current: dict[str, Any] = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text() or "{}")
        except (OSError, ValueError):
            return False
        if not isinstance(loaded, dict):
            return False
        current = loaded
    if all(current.get(key) == value for key, value in settings.items()):
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps({**current, **settings}, indent=2) + "\n")
    temporary.replace(path)  # never a half-written settings file
    return True


def empty_config(runtime: Path) -> Path:
    """An empty config for code-server: without one it writes ~/.config/code-server/config.yaml,
    with a password and a TCP address that this session never uses."""
    config = runtime / "code-server.yaml"
    config.touch(mode=0o600, exist_ok=True)
    return config


def command_line(socket_path: str, folder: str, config: Path, user_data: Path) -> list[str]:
    return [
        COMMAND,
        "--socket",
        socket_path,
        "--socket-mode",
        "600",
        "--auth",
        "none",
        "--config",
        str(config),
        "--user-data-dir",
        str(user_data),
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--ignore-last-opened",
        folder,
    ]


def main() -> None:
    socket_path = sys.argv[1]
    runtime = Path(os.environ.get(RUNTIME_ENV) or Path(socket_path).parent)
    user_data = USER_DATA.expanduser()
    if not write_machine_settings(user_data, machine_settings(sys.executable)):
        print(
            f"{user_data}/Machine/settings.json is not plain JSON: left as it is",
            file=sys.stderr,
        )
    # No extension marketplace unless the site names one: code-server's default, open-vsx.org,
    # is on the internet, which a cluster's nodes usually cannot reach (every page of VS Code
    # asked it and failed). A site with a mirror sets EXTENSIONS_GALLERY in the job's
    # environment; installing a .vsix file works either way.
    os.environ.setdefault("EXTENSIONS_GALLERY", "{}")
    argv = command_line(socket_path, os.getcwd(), empty_config(runtime), user_data)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main()
