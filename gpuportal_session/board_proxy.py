"""tensorboard/tb/<number>/: one of the user's TensorBoards, through jupyter-server-proxy.

Each TensorBoard (gpuportal_session.tensorboard_private) listens on a unix socket in the user's
0700 runtime folder, found again by its number. jupyter-server-proxy's own handler carries the
requests there, so the board is reached only through this Jupyter server, which the hub
authenticates (jupyter-server-proxy checks the user on every request), and gets what that
proxy does well (streaming, redirects kept under the prefix, websockets).

Registered before jupyter-server-proxy's `tensorboard/` page (the page that lists and opens
boards): Jupyter server loads extensions in name order and tornado takes the first route that
matches, so tensorboard/tb/N/ is the board and everything else under tensorboard/ the page.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.utils import url_path_join
from jupyter_server_proxy.handlers import AddSlashHandler, LocalProxyHandler, RewritableResponse
from tornado import web

from gpuportal_session.board_answers import board_headers, fix_index, is_index, plain_request
from gpuportal_session.tensorboard_private import instances, runtime_dir

CLOSED = "This TensorBoard is closed; open it again from the TensorBoard page."


def board_socket(number: str) -> str | None:
    """The unix socket of the user's running TensorBoard `number`; None if it is closed."""
    board = next((b for b in instances(runtime_dir()) if str(b["number"]) == number), None)
    return str(board["socket"]) if board is not None else None


def finish_board_response(response: RewritableResponse, path: str) -> None:
    """TensorBoard's answer as the browser gets it: the index page asking for its font at the
    board (board_answers), and its framing rule added to TensorBoard's own policy."""
    if is_index(path) and response.code == 200:
        response.body = fix_index(response.body)
    for name, value in board_headers(response.headers.get_all()).items():
        response.headers[name] = value


class BoardProxyHandler(LocalProxyHandler):
    """The URL's first group is the board's number (jupyter-server-proxy calls it the port)."""

    _index = False

    def proxy(self, port: str, proxied_path: str) -> Any:
        socket = board_socket(port)
        if socket is None:
            raise web.HTTPError(404, CLOSED)
        self.unix_socket = socket
        # Where the board is, for redirects it sends and the X-Forwarded-Prefix it is told.
        self.proxy_base = url_path_join("tensorboard", "tb", port)
        self._index = is_index(proxied_path)
        return super().proxy(port, proxied_path)

    def proxy_request_headers(self) -> dict[str, str]:
        headers: dict[str, str] = super().proxy_request_headers()
        # The index page's body is edited on its way: TensorBoard must not gzip it.
        return plain_request(headers) if self._index else headers


def board_handlers(base_url: str) -> list[tuple[str, type[web.RequestHandler], dict[str, Any]]]:
    boards = url_path_join(base_url, "tensorboard", "tb")
    return [
        (boards + r"/(\d+)", AddSlashHandler, {}),
        (
            boards + r"/(\d+)/(.*)",
            BoardProxyHandler,
            {"rewrite_response": finish_board_response},
        ),
    ]
