"""The TensorBoard page of a session: open TensorBoard on a folder, see the open ones, close them.

jupyter-server-proxy runs this on a unix socket in a private temporary directory and proxies it
at /user/NAME/tensorboard/ (the "TensorBoard" launcher tile opens it in a new tab). Each
TensorBoard runs as its own process (gpuportal_session.tensorboard_private) on a 0700 unix
socket, and is served here under tb/<number>/, so it is only ever reached through the hub, by
its owner.
"""

from __future__ import annotations

import fnmatch
import hmac
import http.client
import importlib.util
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jinja2

from gpuportal_session.board_fonts import fix_index, is_index, plain_request
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

START_TIMEOUT_S = 60
# jupyter-server-proxy leaves CSRF checks to the proxied app, and the hub's cookie rides along
# with any cross-site POST: so each form carries this token, which another site cannot read.
FORM_TOKEN = secrets.token_urlsafe(32)
# This page: never framed, nothing from elsewhere. A TensorBoard (tb/N/) may be framed by the
# session's own pages: `%tensorboard` shows it in a notebook.
PAGE_HEADERS = [
    ("Content-Type", "text/html; charset=utf-8"),
    (
        "Content-Security-Policy",
        "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; "
        "form-action 'self'; base-uri 'self'; object-src 'none'",
    ),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
]
BOARD_HEADERS = {
    "content-security-policy": "frame-ancestors 'self'",
    "x-content-type-options": "nosniff",
}
# Hop-by-hop headers are the proxy's own business, not to be passed through.
STALE_FORM = "That form was not sent from this page (or the page was restarted); nothing was done."
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "trailer"}


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


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 60) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


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


def proxy(environ: dict[str, Any], start_response: Any, number: str, rest: str) -> Iterable[bytes]:
    board = next((b for b in instances(runtime_dir()) if str(b["number"]) == number), None)
    if board is None:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"This TensorBoard is closed; open it again from the TensorBoard page."]
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else None
    headers = {
        key[5:].replace("_", "-").title(): value
        for key, value in environ.items()
        if key.startswith("HTTP_") and key[5:].lower().replace("_", "-") not in HOP_HEADERS
    }
    if environ.get("CONTENT_TYPE"):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    query = environ.get("QUERY_STRING", "")
    index = is_index(rest)
    if index:
        headers = plain_request(headers)
    connection = UnixHTTPConnection(board["socket"])
    connection.request(
        environ["REQUEST_METHOD"], "/" + rest + (f"?{query}" if query else ""), body, headers
    )
    response = connection.getresponse()
    headers_out = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_HEADERS]
    present = {k.lower() for k, _ in headers_out}
    headers_out += [(k, v) for k, v in BOARD_HEADERS.items() if k not in present]
    if index:  # the whole page, edited (board_fonts)
        try:
            page = fix_index(response.read())
        finally:
            connection.close()
        headers_out = [(k, v) for k, v in headers_out if k.lower() != "content-length"]
        start_response(f"{response.status} {response.reason}", headers_out)
        return [page]
    start_response(f"{response.status} {response.reason}", headers_out)

    def stream() -> Iterator[bytes]:
        try:
            while chunk := response.read(65536):
                yield chunk
        finally:
            connection.close()

    return stream()


def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    path = environ.get("PATH_INFO", "/").lstrip("/")
    method = environ["REQUEST_METHOD"]
    if path.startswith("tb/"):
        number, _, rest = path[3:].partition("/")
        if not rest and not path.endswith("/"):
            start_response("302 Found", [("Location", f"{number}/")])
            return [b""]
        return proxy(environ, start_response, number, rest)
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
        # Closing the page (server stop) closes every TensorBoard of this user on the node.
        close_all()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever()


if __name__ == "__main__":
    main()
