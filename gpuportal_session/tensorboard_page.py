"""The TensorBoard page of a session: open TensorBoard on a folder, see the open ones, close them.

jupyter-server-proxy runs this on a unix socket in a private temporary directory and proxies it
at /user/NAME/tensorboard/ (the "TensorBoard" launcher tile opens it in a new tab). Each
TensorBoard runs as its own process (gpuportal_session.tensorboard_private) on a 0700 unix
socket, and is served here under tb/<number>/, so it is only ever reached through the hub, by
its owner.
"""

from __future__ import annotations

import hmac
import html
import http.client
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

from gpuportal_session.tensorboard_private import instances, runtime_dir

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


def candidate_folders(home: Path, limit: int = 20) -> list[str]:
    """Folders under home that hold TensorBoard event files (a short, shallow search)."""
    found: list[str] = []
    for root, dirs, files in os.walk(home):
        depth = Path(root).relative_to(home).parts
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "shared")
        if len(depth) >= 4:
            dirs[:] = []
        if any(name.startswith("events.out.tfevents") for name in files):
            found.append(root)
            dirs[:] = []  # TensorBoard reads the runs below a folder by itself
        if len(found) >= limit:
            break
    return found


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


def page(message: str = "", logdir: str = "") -> str:
    home = Path.home()
    open_rows = "".join(
        f'<tr><td><a href="tb/{b["number"]}/" target="_blank">TensorBoard {b["number"]}</a></td>'
        f"<td><code>{html.escape(b['logdir'])}</code></td>"
        f'<td><form method="post" action="close"><input type="hidden" name="number" '
        f'value="{b["number"]}"><input type="hidden" name="token" value="{FORM_TOKEN}">'
        f"<button>Close</button></form></td></tr>"
        for b in instances(runtime_dir())
    )
    suggestions = "".join(
        f'<option value="{html.escape(folder)}">' for folder in candidate_folders(home)
    )
    error = f'<p class="error" id="error">{html.escape(message)}</p>' if message else ""
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>TensorBoard</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 2rem; max-width: 60rem; }}
input[type=text] {{ width: 32rem; padding: .3rem; }} .error {{ color: #b00020; }}
td {{ padding: .3rem .8rem .3rem 0; }} .muted {{ color: #667; }}</style></head><body>
<h1>TensorBoard</h1>
<p class="muted">Private to you: each TensorBoard listens on a socket only you can open, and this
page reaches it through the hub.</p>
<form method="post" action="open">
  <input type="hidden" name="token" value="{FORM_TOKEN}">
  <label for="logdir">Folder with your logs</label><br>
  <input type="text" id="logdir" name="logdir" list="folders" value="{html.escape(logdir)}"
         placeholder="{html.escape(str(home))}/runs">
  <datalist id="folders">{suggestions}</datalist>
  <button type="submit" id="open">Open TensorBoard</button>
</form>
{error}
<h2>Open</h2>
<table id="boards">{open_rows or '<tr><td class="muted">None yet.</td></tr>'}</table>
</body></html>"""


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
    connection = UnixHTTPConnection(board["socket"])
    connection.request(
        environ["REQUEST_METHOD"], "/" + rest + (f"?{query}" if query else ""), body, headers
    )
    response = connection.getresponse()
    headers_out = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_HEADERS]
    present = {k.lower() for k, _ in headers_out}
    headers_out += [(k, v) for k, v in BOARD_HEADERS.items() if k not in present]
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
            start_response("303 See Other", [("Location", f"tb/{number}/")])
            return [b""]
        start_response("400 Bad Request", PAGE_HEADERS)
        return [page(problem, logdir).encode()]
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
