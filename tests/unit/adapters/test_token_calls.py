"""The one client for token calls (gpuportal_adapters.token_calls), against a real server on
loopback: the token is sent, JSON comes back, a restart's answers are retried and nothing
else is, and every failure is one error with words."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator

import pytest
from tornado.httpserver import HTTPServer
from tornado.web import Application, RequestHandler

from gpuportal_adapters.token_calls import CallFailed, call

pytestmark = pytest.mark.asyncio(loop_scope="session")


class Answers(RequestHandler):
    """Answers each request with the next of its script (status, body); records what came."""

    def initialize(self, script: list[tuple[int, str]], seen: list[dict[str, str]]) -> None:
        self.script = script
        self.seen = seen

    def _answer(self) -> None:
        self.seen.append(
            {
                "method": self.request.method or "",
                "token": self.request.headers.get("Authorization", ""),
                "body": self.request.body.decode(),
            }
        )
        status, body = self.script.pop(0)
        self.set_status(status)
        self.finish(body)

    def get(self) -> None:
        self._answer()

    def post(self) -> None:
        self._answer()

    def delete(self) -> None:
        self._answer()


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, list[tuple[int, str]], list[dict[str, str]]]]:
    script: list[tuple[int, str]] = []
    seen: list[dict[str, str]] = []
    app = Application([(r"/api", Answers, {"script": script, "seen": seen})])
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    listening.setblocking(False)
    http = HTTPServer(app)
    http.add_sockets([listening])
    yield f"http://127.0.0.1:{listening.getsockname()[1]}/api", script, seen
    http.stop()


async def test_the_token_goes_and_json_comes_back(server) -> None:
    url, script, seen = server
    script.append((200, json.dumps({"cull": True})))
    assert await call(url, token="t0k", method="POST", body={"user": "alice"}) == {"cull": True}
    assert seen == [{"method": "POST", "token": "token t0k", "body": '{"user": "alice"}'}]


async def test_a_delete_carries_its_body(server) -> None:
    """JupyterHub removes a named server on a DELETE whose body says {"remove": true}."""
    url, script, seen = server
    script.append((200, ""))
    assert await call(url, token="t0k", method="DELETE", body={"remove": True}) is None
    assert seen == [{"method": "DELETE", "token": "token t0k", "body": '{"remove": true}'}]


async def test_a_restarting_hub_is_asked_again_and_a_refusal_is_not(server) -> None:
    url, script, seen = server
    script.extend([(503, "restarting"), (502, "proxy"), (200, "[]")])
    assert await call(url, token="t", attempts=3) == []
    assert len(seen) == 3
    script.append((403, "no"))
    with pytest.raises(CallFailed, match="HTTP 403") as refused:
        await call(url, token="t", attempts=3)
    assert refused.value.status == 403
    assert len(seen) == 4  # once: a refusal is an answer


async def test_an_answer_that_is_not_json_and_no_server_are_said(server) -> None:
    url, script, _seen = server
    script.append((200, "<html>"))
    with pytest.raises(CallFailed, match="the answer is not JSON"):
        await call(url, token="t")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(CallFailed, match=f"127.0.0.1:{port}/x: "):
        await call(f"http://127.0.0.1:{port}/x", token="t", timeout=2)
