"""The tests' HTTP client sends an idempotent request once more when the server closed the
kept-alive connection under it, as a browser does (tests.hubproc.browser_session)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import pytest
import requests

from tests.hubproc import browser_session
from tests.local_server import accept_each

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"


def serving(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """A local server that hands each connection to `handle`; yields its URL."""
    listener = socket.create_server(("127.0.0.1", 0))

    def closing(conn: socket.socket) -> None:
        with conn:
            handle(conn)

    accept_each(listener, closing)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    listener.close()


@pytest.fixture
def closes_the_second_request() -> Iterator[tuple[str, list[str]]]:
    """A server that answers a connection's first request and closes it at its second without
    an answer (as the proxy does when its idle timeout meets a request on its way)."""
    seen: list[str] = []

    def answer_once(conn: socket.socket) -> None:
        for answered in (True, False):
            request = conn.recv(65536)
            if not request:
                return
            seen.append(request.split(b" ", 2)[0].decode())
            if answered:
                conn.sendall(ANSWER)

    for url in serving(answer_once):
        yield url, seen


def test_a_delete_on_a_closed_connection_is_sent_again(closes_the_second_request) -> None:
    url, seen = closes_the_second_request
    session = browser_session()
    assert session.get(url, timeout=5).text == "ok"
    assert session.delete(url, timeout=5).text == "ok"
    assert seen == ["GET", "DELETE", "DELETE"]


def test_a_plain_session_loses_it(closes_the_second_request) -> None:
    url, _ = closes_the_second_request
    session = requests.Session()
    session.get(url, timeout=5)
    with pytest.raises(requests.ConnectionError, match="Remote end closed"):
        session.delete(url, timeout=5)


def test_a_post_is_not_sent_twice(closes_the_second_request) -> None:
    url, seen = closes_the_second_request
    session = browser_session()
    session.get(url, timeout=5)
    with pytest.raises(requests.ConnectionError):
        session.post(url, data=b"x", timeout=5)
    assert seen == ["GET", "POST"]


def test_a_timeout_is_not_tried_again() -> None:
    seen: list[bytes] = []

    def hold(conn: socket.socket) -> None:
        seen.append(conn.recv(65536))
        time.sleep(1)  # no answer, the connection open

    for url in serving(hold):
        with pytest.raises(requests.ReadTimeout):
            browser_session().get(url, timeout=0.5)
    assert len(seen) == 1
