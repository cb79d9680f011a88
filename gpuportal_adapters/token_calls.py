"""The one client for the product's own calls between the hub, the portal, the hub's services
and sessions: JSON in and out, `Authorization: token ...`, a timeout on every call, one retry
rule, and a kept connection where a caller calls the same server on a timer.

Over aiohttp, JupyterHub's own HTTP client (a requirement of JupyterHub), so wherever a hub, its
services or a session runs. `call()` opens a connection for the call; a `TokenClient` with
`keep_for` keeps its one connection that long after each call. Each session posts its GPU
reading to the hub every minute: under internal TLS a new connection costs the hub 5.3 ms of
CPU (the handshake and the check of the session's certificate), a request on a kept one 0.5 ms
(`python -m bench.tls_handshake`): at 300 sessions, 2.7 % of a core against 0.3 %.

The `gpuportal` command line keeps requests: it installs alone, for people's shells, and
imports nothing of the project.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp

# A hub or proxy restarting answers these, or nothing at all (not reached, no answer in time):
# worth another try where the caller allows more than one. Anything else is an answer.
RETRIED_STATUS = frozenset({502, 503, 504})
# What a kept connection the other end closed while it was kept gives, on its next use.
CLOSED_MEANWHILE = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


class CallFailed(Exception):
    """No usable answer: not reached, an HTTP error, or an answer that is not JSON."""

    def __init__(self, url: str, reason: str, status: int | None = None) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason
        self.status = status


class TokenClient:
    """Token calls; with `keep_for` (seconds), over one connection kept between them."""

    def __init__(self, *, tls: ssl.SSLContext | None = None, keep_for: float | None = None):
        self.tls = tls
        self.keep_for = keep_for
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            if self.keep_for:
                connector = aiohttp.TCPConnector(
                    ssl=self.tls if self.tls is not None else True,
                    keepalive_timeout=self.keep_for,
                    limit=1,  # one connection: the calls come one at a time
                )
            else:
                connector = aiohttp.TCPConnector(
                    ssl=self.tls if self.tls is not None else True, force_close=True
                )
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def call(
        self,
        url: str,
        *,
        token: str,
        method: str = "GET",
        body: Any = None,
        timeout: float = 10.0,
        attempts: int = 1,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """The JSON answer (None for an empty one); CallFailed with words otherwise.

        `attempts` > 1 retries what a restart answers (not reached, no answer in time, 502,
        503, 504), waiting 1, 2, 4 ... up to 10 s in between. A kept connection that the other
        end closed meanwhile (a hub restarting) is tried once more at once, on a new one: for
        calls that may come twice, as a reading may.
        """
        reopened = False
        attempt = 0
        while True:
            try:
                return await self._once(url, token, method, body, timeout, headers)
            except CallFailed as answer:
                if answer.status not in RETRIED_STATUS:
                    raise
                failed = answer
            except CLOSED_MEANWHILE as error:
                if self.keep_for and not reopened:
                    reopened = True
                    continue
                failed = CallFailed(url, str(error) or type(error).__name__)
            except TimeoutError:
                failed = CallFailed(url, f"no answer within {timeout:g} s")
            except (aiohttp.ClientError, OSError) as error:  # refused, unresolved, TLS refused
                failed = CallFailed(url, str(error) or type(error).__name__)
            attempt += 1
            if attempt >= attempts:
                raise failed
            await asyncio.sleep(min(2 ** (attempt - 1), 10))

    async def _once(
        self,
        url: str,
        token: str,
        method: str,
        body: Any,
        timeout: float,
        headers: Mapping[str, str] | None,
    ) -> Any:
        async with self._client().request(
            method,
            url,
            data=json.dumps(body) if body is not None else None,
            headers={
                "Authorization": f"token {token}",
                "Content-Type": "application/json",
                **(headers or {}),
            },
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as response:
            answer = await response.read()
            if response.status >= 400:
                raise CallFailed(url, f"HTTP {response.status} {response.reason}", response.status)
            return parse_json(url, answer)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            await asyncio.sleep(0)  # let the connection's transport close in this loop turn


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
    """One call on a connection of its own (TokenClient.call says what it answers)."""
    client = TokenClient(tls=tls)
    try:
        return await client.call(
            url,
            token=token,
            method=method,
            body=body,
            timeout=timeout,
            attempts=attempts,
            headers=headers,
        )
    finally:
        await client.close()


def parse_json(url: str, body: bytes) -> Any:
    """An answer's JSON (None for an empty one), or CallFailed saying it is not JSON."""
    if not body.strip():
        return None
    try:
        return json.loads(body)
    except ValueError:
        raise CallFailed(url, "the answer is not JSON") from None
