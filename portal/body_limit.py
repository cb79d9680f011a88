"""Every request body bounded before the app reads it: its size (413), and a JSON body's depth
(422, a problem at ["body"] as FastAPI's own), with words, as the API's other refusals are
({"detail": ...}).

uvicorn and Starlette take a body of any size, and FastAPI reads it whole before validating
it; a body's Content-Length is believed only as a first refusal, the bytes that come are
counted all the same. Pure ASGI, so that the body is never read twice: what passes is handed
to the app as it came.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from gpuportal_core import bounded_json

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    def __init__(
        self,
        app: App,
        *,
        max_bytes: int = bounded_json.MAX_BYTES,
        max_depth: int = bounded_json.MAX_DEPTH,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        try:
            declared = int(headers.get(b"content-length", b"0"))
            bounded_json.check_size(declared, max_bytes=self.max_bytes)
            body, closed = await self._read(receive)
            if body and b"json" in headers.get(b"content-type", b""):
                bounded_json.check_depth(body, max_depth=self.max_depth)
        except bounded_json.TooLarge as error:
            await _refuse(send, 413, f"{error}: send less")
            return
        except bounded_json.TooDeep as error:
            # In the shape of FastAPI's own 422s, a list of problems at their place.
            words = f"{error}: send a flatter JSON document"
            await _refuse(send, 422, [{"type": "too_deep", "loc": ["body"], "msg": words}])
            return
        except ValueError:
            await _refuse(send, 400, "the Content-Length header is not a number")
            return
        await self.app(scope, _replay(body, closed, receive), send)

    async def _read(self, receive: Receive) -> tuple[bytes, bool]:
        """The whole body (at most max_bytes of it), and whether the client left meanwhile."""
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return b"".join(parts), True
            part = message.get("body", b"")
            size += len(part)
            bounded_json.check_size(size, max_bytes=self.max_bytes)
            parts.append(part)
            if not message.get("more_body", False):
                return b"".join(parts), False


def _replay(body: bytes, closed: bool, receive: Receive) -> Receive:
    """The body read here, as one message; then what the client does next (a disconnect)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            if closed:
                return {"type": "http.disconnect"}
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


async def _refuse(send: Send, status: int, detail: str | list[dict[str, Any]]) -> None:
    content = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(content)).encode()),
                (b"connection", b"close"),  # the rest of a large body is not read
            ],
        }
    )
    await send({"type": "http.response.body", "body": content})
