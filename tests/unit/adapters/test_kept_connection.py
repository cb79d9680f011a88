"""Token calls over one kept connection (gpuportal_adapters.token_calls.TokenClient with
keep_for), against a real server on loopback: calls share one connection, a connection the
server closed meanwhile does not lose the call, and failures are CallFailed with words, as
one-off calls' are."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from tornado.httpserver import HTTPServer
from tornado.web import Application, RequestHandler

from gpuportal_adapters.token_calls import CallFailed, TokenClient

pytestmark = pytest.mark.asyncio(loop_scope="session")


@dataclass
class Seen:
    """What the server answers (status, body; 200 {"ok": true} once the script is done; status
    0: the connection closed, no answer; 1: the answer after `body` seconds) and what came:
    each call's client address (one per connection), token and body."""

    script: list[tuple[int, str]] = field(default_factory=list)
    peers: list[tuple[str, int]] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)


class Answers(RequestHandler):
    def initialize(self, seen: Seen) -> None:
        self.seen = seen

    async def post(self) -> None:
        self.seen.peers.append(self.request.connection.context.address)  # type: ignore[union-attr]
        self.seen.tokens.append(self.request.headers.get("Authorization", ""))
        self.seen.bodies.append(self.request.body.decode())
        status, body = self.seen.script.pop(0) if self.seen.script else (200, '{"ok": true}')
        if status == 0:
            self.request.connection.stream.close()  # type: ignore[union-attr]
            return
        if status == 1:  # no answer for a while
            await asyncio.sleep(float(body))
            status, body = 200, "{}"
        self.set_status(status)
        self.finish(body)


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, Seen, HTTPServer]]:
    seen = Seen()
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    listening.setblocking(False)
    http = HTTPServer(Application([(r"/api", Answers, {"seen": seen})]))
    http.add_sockets([listening])
    yield f"http://127.0.0.1:{listening.getsockname()[1]}/api", seen, http
    http.stop()
    await http.close_all_connections()


@pytest.fixture
async def client() -> AsyncIterator[TokenClient]:
    kept = TokenClient(keep_for=60)
    yield kept
    await kept.close()


async def test_calls_send_the_token_and_json_and_share_one_connection(server, client) -> None:
    url, seen, _ = server
    for reading in range(3):
        answer = await client.call(url, token="t0k", method="POST", body={"reading": reading})
        assert answer == {"ok": True}
    assert seen.tokens == ["token t0k"] * 3
    assert seen.bodies == ['{"reading": 0}', '{"reading": 1}', '{"reading": 2}']
    assert len(set(seen.peers)) == 1  # one connection for the three calls


async def test_a_connection_the_server_closed_meanwhile_does_not_lose_the_call(
    server, client
) -> None:
    """What a hub restart does to a kept connection: the next call goes on a new one."""
    url, seen, http = server
    await client.call(url, token="t", method="POST", body={"reading": 1})
    await http.close_all_connections()
    assert await client.call(url, token="t", method="POST", body={"reading": 2}) == {"ok": True}
    assert seen.bodies == ['{"reading": 1}', '{"reading": 2}']
    assert len(set(seen.peers)) == 2


async def test_a_call_whose_connection_closes_unanswered_is_made_once_more(server, client) -> None:
    """The other end closed the kept connection just as the call went out on it."""
    url, seen, _ = server
    await client.call(url, token="t", method="POST", body={"reading": 1})
    seen.script.append((0, ""))
    assert await client.call(url, token="t", method="POST", body={"reading": 2}) == {"ok": True}
    assert seen.bodies == ['{"reading": 1}', '{"reading": 2}', '{"reading": 2}']


async def test_an_error_answer_is_said_with_its_status_and_not_repeated(server, client) -> None:
    url, seen, _ = server
    seen.script.append((403, '{"message": "no"}'))
    with pytest.raises(CallFailed) as failed:
        await client.call(url, token="t", method="POST", body={})
    assert failed.value.status == 403
    assert "HTTP 403" in failed.value.reason
    assert len(seen.bodies) == 1


async def test_an_answer_that_is_not_json_is_said_so(server, client) -> None:
    url, seen, _ = server
    seen.script.append((200, "<html>a login page</html>"))
    with pytest.raises(CallFailed, match="not JSON"):
        await client.call(url, token="t", method="POST", body={})


async def test_a_server_that_does_not_answer_in_time_is_said_so(server, client) -> None:
    url, seen, _ = server
    seen.script.append((1, "1.0"))
    with pytest.raises(CallFailed) as failed:
        await client.call(url, token="t", method="POST", body={}, timeout=0.2)
    assert failed.value.reason == "no answer within 0.2 s"


async def test_nobody_listening_is_a_call_failed_with_words(client) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(CallFailed) as failed:
        await client.call(f"http://127.0.0.1:{port}/api", token="t", method="POST", body={})
    assert failed.value.reason
    assert failed.value.status is None
