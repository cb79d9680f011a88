"""The one client for token calls between the hub, the portal, the hub's services and sessions:
JSON in and out, `Authorization: token ...`, a timeout on every call, retries in one place.

Over tornado's AsyncHTTPClient, which every process that calls already runs (JupyterHub,
jupyter-server, the services on the hub's event loop). The `gpuportal` command line keeps
requests: it installs alone, for people's shells, and imports nothing of the project.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Mapping
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

# A hub or proxy restarting answers these, or nothing at all (599: tornado's own timeout or
# a closed connection): worth another try. Anything else is an answer, and is not retried.
RETRIED_STATUS = frozenset({502, 503, 504, 599})


class CallFailed(Exception):
    """No usable answer: not reached, an HTTP error, or an answer that is not JSON."""

    def __init__(self, url: str, reason: str, status: int | None = None) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason
        self.status = status


async def call(
    url: str,
    *,
    token: str,
    method: str = "GET",
    body: Any = None,
    timeout: float = 10.0,
    tls: ssl.SSLContext | None = None,
    attempts: int = 1,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """The JSON answer (None for an empty one). `attempts` > 1 retries what a restart answers
    (not reached, 502, 503, 504), waiting 1, 2, 4 ... up to 10 s in between."""
    request = HTTPRequest(
        url,
        method=method,
        body=json.dumps(body) if body is not None else ("" if method == "POST" else None),
        headers={
            "Authorization": f"token {token}",
            "Content-Type": "application/json",
            **(headers or {}),
        },
        request_timeout=timeout,
        connect_timeout=timeout,
        ssl_options=tls,
        # JupyterHub's DELETE of a server takes a body ({"remove": true}), as its idle culler
        # sends it; tornado refuses a DELETE with a body unless told.
        allow_nonstandard_methods=method == "DELETE" and body is not None,
    )
    for attempt in range(attempts):
        try:
            response = await AsyncHTTPClient().fetch(request)
        except HTTPClientError as error:
            failed = CallFailed(url, f"HTTP {error.code} {error.message}", error.code)
            if error.code not in RETRIED_STATUS:
                raise failed from None
        except OSError as error:  # refused, unresolved, TLS refused
            failed = CallFailed(url, str(error) or type(error).__name__)
        else:
            return parse_json(url, response.body)
        if attempt == attempts - 1:
            raise failed
        await asyncio.sleep(min(2**attempt, 10))
    raise CallFailed(url, "no attempt made")  # attempts < 1


def parse_json(url: str, body: bytes) -> Any:
    """An answer's JSON (None for an empty one), or CallFailed saying it is not JSON."""
    if not body.strip():
        return None
    try:
        return json.loads(body)
    except ValueError:
        raise CallFailed(url, "the answer is not JSON") from None
