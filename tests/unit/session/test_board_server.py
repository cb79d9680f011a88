"""Who gets into a shared TensorBoard (gpuportal_session.board_server): the owner and others
holding access to that server by their scopes, and members of the groups it is shared with."""

from __future__ import annotations

from unittest import mock

import pytest
from jupyterhub.services.auth import HubOAuth, UserNotAllowed
from tornado import httputil, web

from gpuportal_session.board_server import BoardHandler

ACCESS = "access:servers!server=alice/tb-runs"


@pytest.fixture
def handler() -> BoardHandler:
    auth = HubOAuth(api_token="t", access_scopes={ACCESS}, oauth_client_id="c", api_url="http://h")
    app = web.Application([], hub_auth=auth)
    start = httputil.RequestStartLine("GET", "/user/alice/tb-runs/", "HTTP/1.1")
    headers = httputil.HTTPHeaders({"Host": "hub.example.org"})
    request = httputil.HTTPServerRequest(start_line=start, headers=headers)
    request.connection = mock.Mock()
    board = BoardHandler(
        app,
        request,
        board=None,
        prefix="/user/alice/tb-runs/",
        groups=frozenset({"ds"}),
    )
    board.hub_auth = auth
    return board


def user(name: str, groups: list[str], scopes: list[str]) -> dict[str, object]:
    return {"kind": "user", "name": name, "groups": groups, "scopes": scopes}


def test_a_member_of_the_shared_group_gets_in(handler: BoardHandler) -> None:
    bob = user("bob", ["ds"], ["read:users:name!user=bob"])
    assert handler.check_hub_user(bob) is bob


def test_the_owner_gets_in_by_scope(handler: BoardHandler) -> None:
    alice = user("alice", ["other"], [ACCESS])
    assert handler.check_hub_user(alice) is alice


def test_anyone_else_is_refused(handler: BoardHandler) -> None:
    with pytest.raises(UserNotAllowed):
        handler.check_hub_user(user("dave", ["vision"], ["read:users:name!user=dave"]))
    with pytest.raises(UserNotAllowed):  # a service is never let in by a group
        handler.check_hub_user({"kind": "service", "name": "x", "groups": ["ds"], "scopes": []})


async def test_the_boards_answers_pass_as_they_come_over_its_socket(tmp_path) -> None:
    """Issue 56, item 4: the server reaches its TensorBoard with the product's one HTTP
    library (aiohttp, over the board's unix socket, connections kept), not http.client with a
    thread per request; a compressed answer stays compressed for the browser to open."""
    import gzip

    from tornado.httpserver import HTTPServer
    from tornado.netutil import bind_unix_socket

    from gpuportal_session.board_server import board_client

    class Packed(web.RequestHandler):
        def get(self) -> None:
            self.set_header("Content-Encoding", "gzip")
            self.finish(gzip.compress(b"scalars"))

    path = str(tmp_path / "board.sock")
    server = HTTPServer(web.Application([(r"/data", Packed)]))
    server.add_socket(bind_unix_socket(path))
    client = board_client(path)
    try:
        for _ in range(2):
            async with client.get("http://localhost/data") as answer:
                assert answer.headers["Content-Encoding"] == "gzip"
                assert gzip.decompress(await answer.read()) == b"scalars"
    finally:
        await client.close()
        server.stop()


async def test_a_board_never_sets_a_cookie_in_the_visitors_browser(
    handler: BoardHandler, tmp_path
) -> None:
    """Issue 68: the owner may replace TensorBoard on its socket with a page of her own; its
    cookies (and a wipe of the visitor's site data) stop at the board's server, the rest of its
    answer passes."""
    from tornado.httpserver import HTTPServer
    from tornado.netutil import bind_unix_socket

    from gpuportal_session.board_server import board_client

    class Hers(web.RequestHandler):
        def get(self) -> None:
            self.add_header("Set-Cookie", "jupyterhub-hub-login=hers; Domain=hub.example.org")
            self.add_header("Set-Cookie", "_xsrf=hers; Path=/")
            self.set_header("Clear-Site-Data", '"cookies"')
            self.set_header("X-Board", "kept")
            self.finish(b"her page")

    path = str(tmp_path / "board.sock")
    server = HTTPServer(web.Application([(r"/page", Hers)]))
    server.add_socket(bind_unix_socket(path))
    handler.board = board_client(path)
    handler._transforms = []  # as tornado's Application sets them before a request runs
    try:
        await handler._forward("page")
    finally:
        await handler.board.close()
        server.stop()
    sent = {name.lower() for name, _ in handler._headers.get_all()}
    assert "set-cookie" not in sent and "clear-site-data" not in sent, sent
    assert handler._headers["X-Board"] == "kept" and handler.get_status() == 200
