"""A TensorBoard its owner shares with a hub group: read-only, through the hub, nothing else.

Started by the hub (gpuportal_spawner.board_spawner) as a step inside the owner's running session
job, so it runs as the owner and ends with the session. It serves one thing: the TensorBoard of one
folder, at the named server's prefix (/user/alice/tb-runs/). Every request is checked with the
hub (OAuth, JupyterHub's own HubOAuth): only those holding access to this named server, the
owner and the members of the group it is shared with (JupyterHub shares), get through; anyone
else gets the hub's 403. There is no Jupyter server here, so no terminal, no files and no
kernels to reach: the owner's JupyterLab is another server, behind another scope.

    python -m gpuportal_session.board_server --logdir DIR --token-file FILE
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
from jupyterhub.services.auth import HubOAuth, HubOAuthCallbackHandler, HubOAuthenticated
from tornado import web

from gpuportal_adapters.hub_tls import server_context
from gpuportal_session.board_answers import board_headers, fix_index, is_index, plain_request
from gpuportal_session.session_tmp import fresh_runtime_dir
from gpuportal_session.singleuser import free_port, listen_address, report_port
from gpuportal_session.tensorboard_private import (
    RUNTIME_ENV,
    instances,
    runtime_dir,
)

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "trailer", "host"}
# What the board's answers never carry to the visitor's browser (issue 68): whatever listens on
# the board's socket is the owner's to replace, and a cookie it set, or a wipe of the visitor's
# site data, would reach the visitor's other JupyterHub pages. TensorBoard sets no cookie.
NEVER_PASSED = {"set-cookie", "set-cookie2", "clear-site-data"}
# The board's answer headers left out: those, the hop ones, and its length (the index's body is
# edited on its way; tornado counts the body it sends).
DROPPED_ANSWER_HEADERS = HOP_HEADERS | NEVER_PASSED | {"content-length"}


def board_client(socket_path: str) -> aiohttp.ClientSession:
    """The server's one client of its TensorBoard, over the board's unix socket, its connections
    kept. The board's answers pass as they come (compressed stays compressed)."""
    return aiohttp.ClientSession(
        connector=aiohttp.UnixConnector(path=socket_path),
        auto_decompress=False,
        timeout=aiohttp.ClientTimeout(total=120),
    )


class BoardHandler(HubOAuthenticated, web.RequestHandler):
    """Everything under the prefix goes to the one TensorBoard, for those the hub lets in."""

    def initialize(
        self, board: aiohttp.ClientSession | None, prefix: str, groups: frozenset[str]
    ) -> None:
        self.board = board
        self.prefix = prefix
        self.groups = groups

    def check_hub_user(self, model: dict[str, Any]) -> dict[str, Any]:
        """Members of the groups it is shared with get in, as the hub's shares say.

        The hub checks the group's share when it lets a member through its OAuth page, but
        JupyterHub (6.1) leaves group shares out of the token it then issues (a token carries
        the owner's user shares only), so the scope check alone would turn members away. Their
        groups come with every check from the hub, which follows LDAP: someone who leaves the
        group loses access at the hub's next refresh.
        """
        if model.get("kind") == "user" and self.groups & set(model.get("groups") or ()):
            return model
        return super().check_hub_user(model)  # type: ignore[no-any-return]

    @web.authenticated
    async def get(self, path: str) -> None:
        await self._forward(path)

    @web.authenticated
    async def head(self, path: str) -> None:
        await self._forward(path)

    @web.authenticated
    async def post(self, path: str) -> None:
        # TensorBoard reads with POST too (its time-series queries); it never writes.
        await self._forward(path)

    def check_xsrf_cookie(self) -> None:
        # TensorBoard's own POSTs carry no tornado XSRF token; they only read, and the hub's
        # OAuth cookie of this server is SameSite=Lax, so another site cannot send them.
        return None

    async def _forward(self, path: str) -> None:
        headers = {k: v for k, v in self.request.headers.get_all() if k.lower() not in HOP_HEADERS}
        headers.pop("Cookie", None)  # the hub's cookies stay here
        query = f"?{self.request.query}" if self.request.query else ""
        body = self.request.body or None
        index = is_index(path)
        if index:
            headers = plain_request(headers)
        assert self.board is not None  # made by serve() before the first request
        async with self.board.request(
            self.request.method or "GET",
            f"http://localhost/{path}{query}",
            data=body,
            headers=headers,
            allow_redirects=False,
        ) as answer:
            status, content = answer.status, await answer.read()
            headers_out = list(answer.headers.items())
        if index:
            content = fix_index(content)
        self.set_status(status)
        for key, value in headers_out:
            if key.lower() not in DROPPED_ANSWER_HEADERS:
                self.set_header(key, value)
        for key, value in board_headers(headers_out).items():
            self.set_header(key, value)
        self.finish(content)


def start_board(logdir: str) -> str:
    """Start the private TensorBoard on logdir; its socket."""
    from gpuportal_session.tensorboard_page import open_board

    number, problem = open_board(logdir)
    if number is None:
        raise SystemExit(f"TensorBoard did not start on {logdir}: {problem}")
    board = next(b for b in instances(runtime_dir()) if int(b["number"]) == number)
    return str(board["socket"])


def make_app(
    board: aiohttp.ClientSession | None, token: str, groups: frozenset[str]
) -> web.Application:
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/")
    # The one HubOAuth of this process: JupyterHub's handlers (the OAuth callback among them)
    # take HubOAuth.instance(), so it must be made here, with the token from the file.
    auth = HubOAuth.instance(api_token=token, cache_max_age=60)
    return web.Application(
        [
            (prefix + "oauth_callback", HubOAuthCallbackHandler),
            (
                prefix + "(.*)",
                BoardHandler,
                {"board": board, "prefix": prefix, "groups": groups},
            ),
        ],
        hub_auth=auth,
        cookie_secret=os.urandom(32),
        login_url=auth.login_url,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--logdir", required=True)
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--group", action="append", default=[], help="a group it is shared with")
    args = parser.parse_args(argv)
    token = Path(args.token_file).read_text().strip()
    # The board's sockets in a directory of the owner's own, made 0700 with a random name.
    os.environ[RUNTIME_ENV] = fresh_runtime_dir()
    socket_path = start_board(args.logdir)
    asyncio.run(serve(socket_path, token, args.logdir, frozenset(args.group)))


async def serve(socket_path: str, token: str, logdir: str, groups: frozenset[str]) -> None:
    port = free_port()
    address = listen_address(os.environ.get("GPUPORTAL_BOARD_IP", ""))
    # Under internal TLS, as JupyterLab: TLS only, clients with a certificate of the hub's CAs.
    board = board_client(socket_path)
    make_app(board, token, groups).listen(port, address=address, ssl_options=server_context())
    await asyncio.to_thread(report_port, os.environ["JUPYTERHUB_API_URL"], token, port)
    print(f"Shared TensorBoard on {logdir} at port {port}", file=sys.stderr, flush=True)
    stopped = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stopped.set)
    await stopped.wait()
    await board.close()
    # The TensorBoard goes with it (the step's end would take it too).
    for instance in instances(runtime_dir()):
        os.kill(int(instance["pid"]), signal.SIGTERM)


if __name__ == "__main__":
    main()
