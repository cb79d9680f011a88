"""The TensorBoard page of a session: open TensorBoard on a folder, see the open ones, close them.

jupyter-server-proxy runs this on a unix socket in a private temporary directory and proxies it
at /user/NAME/tensorboard/ (the "TensorBoard" launcher tile opens it in a new tab). Each
TensorBoard runs as its own process (gpuportal_session.tensorboard_private) on a 0700 unix
socket, and jupyter-server-proxy serves it at tensorboard/tb/<number>/ too (a route of the
session's server extension, gpuportal_session.board_proxy), so it is only ever reached through
the hub, by its owner. This page only lists, opens and closes them.
"""

from __future__ import annotations

import fnmatch
import hmac
import importlib.util
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jinja2

from gpuportal_session.tensorboard_private import instances, runtime_dir


def _templates_dir() -> Path:
    """The shipped templates (package gpuportal_templates), or the checkout's. Found here, not
    through gpuportal_core.resources: the session side imports nothing of the hub's or the
    portal's."""
    spec = importlib.util.find_spec("gpuportal_templates")
    for location in (spec.submodule_search_locations or []) if spec else []:
        if Path(location).is_dir():
            return Path(location)
    return Path(__file__).resolve().parents[1] / "templates"


TEMPLATES_DIR = _templates_dir()
# The page's templates, and the navigation it shares with the hub's and the portal's pages.
PAGES = jinja2.Environment(
    loader=jinja2.FileSystemLoader([TEMPLATES_DIR / "session", TEMPLATES_DIR / "shared"]),
    autoescape=True,
)

NOTICES_JS = (TEMPLATES_DIR / "shared" / "notices.js").read_text()
START_TIMEOUT_S = 60
# jupyter-server-proxy leaves CSRF checks to the proxied app, and the hub's cookie rides along
# with any cross-site POST: so each form carries this token, which another site cannot read.
FORM_TOKEN = secrets.token_urlsafe(32)
# This page: never framed, nothing from elsewhere (a board, tb/N/, may be: board_proxy).
PAGE_HEADERS = [
    ("Content-Type", "text/html; charset=utf-8"),
    (
        "Content-Security-Policy",
        # data: images: Bootstrap draws the narrow screen's menu button from one.
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "frame-ancestors 'none'; form-action 'self'; base-uri 'self'; object-src 'none'",
    ),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
]
STALE_FORM = "That form was not sent from this page (or the page was restarted); nothing was done."


def server_proxy_config() -> dict[str, Any]:
    """jupyter-server-proxy's entry for this page (entry point `jupyter_serverproxy_servers`)."""
    return {
        "command": [sys.executable, "-m", "gpuportal_session.tensorboard_page", "{unix_socket}"],
        "unix_socket": True,
        "timeout": 30,
        "new_browser_tab": True,
        "launcher_entry": {
            "title": "TensorBoard",
            "icon_path": str(Path(__file__).parent / "tensorboard.svg"),
        },
    }


EVENTS = "events.out.tfevents*"


def candidate_folders(home: Path, limit: int = 20) -> list[dict[str, Any]]:
    """Folders under home worth opening TensorBoard on, newest first: the folder above the runs
    (runs/ for runs/exp1/events.out...), so that TensorBoard compares them; a run directly in
    home stands alone. Each: path, label (relative to home), runs, and when last written."""
    runs: list[Path] = []  # folders that hold event files themselves
    for root, dirs, files in os.walk(home):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "shared")
        if len(Path(root).relative_to(home).parts) >= 5:
            dirs[:] = []  # a short, shallow search: this runs on every page view
        if any(fnmatch.fnmatch(name, EVENTS) for name in files):
            runs.append(Path(root))
            dirs[:] = []
        if len(runs) >= 200:
            break
    groups: dict[Path, list[Path]] = {}
    for run in runs:
        groups.setdefault(run.parent if run.parent != home else run, []).append(run)
    folders = [_folder(home, logdir, members) for logdir, members in groups.items()]
    return sorted(folders, key=lambda f: -float(f["mtime"]))[:limit]


def _folder(home: Path, logdir: Path, runs: list[Path]) -> dict[str, Any]:
    mtime = max(p.stat().st_mtime for run in runs for p in run.glob(EVENTS))
    return {
        "path": str(logdir),
        "label": str(logdir.relative_to(home)),
        "runs": len(runs),
        "mtime": mtime,
        "updated": _ago(time.time() - mtime),
    }


def _ago(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    if seconds < 5400:
        return f"{round(seconds / 60)} min ago"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h ago"
    return f"{round(seconds / 86400)} days ago"


def open_board(logdir: str) -> tuple[int | None, str]:
    """Start TensorBoard on logdir; its number, or None and what went wrong."""
    folder = os.path.abspath(os.path.expanduser(logdir.strip()))
    for board in instances(runtime_dir()):
        if board["logdir"] == folder:
            return int(board["number"]), ""
    process = subprocess.Popen(
        [sys.executable, "-m", "gpuportal_session.tensorboard_private", "--logdir", folder],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            return None, error.strip().splitlines()[-1] if error.strip() else "TensorBoard quit"
        for board in instances(runtime_dir()):
            if board["pid"] == process.pid:
                return int(board["number"]), ""
        time.sleep(0.2)
    process.terminate()
    return None, f"TensorBoard did not start within {START_TIMEOUT_S} s"


def close_board(number: int) -> None:
    for board in instances(runtime_dir()):
        if int(board["number"]) == number:
            os.kill(int(board["pid"]), signal.SIGTERM)


def close_all() -> None:
    for board in instances(runtime_dir()):
        os.kill(int(board["pid"]), signal.SIGTERM)


def _links() -> dict[str, str]:
    """Where the navigation goes: the hub, the portal and this session's JupyterLab."""
    base = os.environ.get("JUPYTERHUB_BASE_URL", "/").rstrip("/") + "/"
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/").rstrip("/") + "/"
    return {
        "hub": base + "hub/",
        "portal": base + "services/portal",
        "lab": prefix + "lab",
        "user": os.environ.get("JUPYTERHUB_USER", ""),
        "page_root": prefix + "tensorboard/",  # this page's files (notices.js)
    }


def page(message: str = "", logdir: str = "") -> str:
    home = Path.home()
    return PAGES.get_template("tensorboard.html").render(
        **_links(),
        token=FORM_TOKEN,
        folders=candidate_folders(home),
        boards=instances(runtime_dir()),
        home=str(home),
        message=message,
        logdir=logdir,
    )


def view_page(number: str) -> str | None:
    """One TensorBoard inside the product's page, with the way back; None if it is closed."""
    board = next((b for b in instances(runtime_dir()) if str(b["number"]) == number), None)
    if board is None:
        return None
    return PAGES.get_template("tensorboard_view.html").render(
        **_links(), token=FORM_TOKEN, board={**board, "label": Path(board["logdir"]).name}
    )


def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    path = environ.get("PATH_INFO", "/").lstrip("/")
    method = environ["REQUEST_METHOD"]
    if method == "POST" and path in ("open", "close"):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        form = parse_qs(environ["wsgi.input"].read(length).decode())
        if not hmac.compare_digest(form.get("token", [""])[0], FORM_TOKEN):
            start_response("403 Forbidden", PAGE_HEADERS)
            return [page(STALE_FORM).encode()]
        if path == "close":
            close_board(int(form.get("number", ["0"])[0]))
            start_response("303 See Other", [("Location", "./")])
            return [b""]
        logdir = form.get("logdir", [""])[0]
        number, problem = open_board(logdir) if logdir.strip() else (None, "Name a folder.")
        if number is not None:
            start_response("303 See Other", [("Location", f"view/{number}")])
            return [b""]
        start_response("400 Bad Request", PAGE_HEADERS)
        return [page(problem, logdir).encode()]
    if path == "notices.js":
        # The notices banner's code (templates/shared), a file: this page runs no inline script.
        start_response("200 OK", [("Content-Type", "text/javascript; charset=utf-8"),
                                  ("X-Content-Type-Options", "nosniff")])  # fmt: skip
        return [NOTICES_JS.encode()]
    if path.startswith("view/"):
        shown = view_page(path[5:])
        if shown is None:
            start_response("303 See Other", [("Location", "../")])
            return [b""]
        start_response("200 OK", PAGE_HEADERS)
        return [shown.encode()]
    start_response("200 OK", PAGE_HEADERS)
    return [page().encode()]


def main() -> None:
    from werkzeug.serving import make_server

    socket_path = sys.argv[1]
    server = make_server(f"unix://{socket_path}", 0, app, threaded=True)

    def stop(*_: object) -> None:
        # Closing the page (server stop) closes every TensorBoard of this user on the node. At
        # once: sys.exit waited for the request threads, and the Jupyter server waits for this
        # process before its own exit, which Slurm cuts short KillWait seconds after its TERM.
        close_all()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever()


if __name__ == "__main__":
    main()
