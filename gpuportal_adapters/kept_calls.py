"""Token calls over one kept connection, for a caller that calls the same server on a timer.

gpuportal_adapters.token_calls opens a connection for every call (tornado's client keeps
none). Each session posts its GPU reading to the hub every minute; under internal TLS a new
connection costs the hub 5.3 ms of CPU (the handshake and the check of the session's
certificate), a request on a kept one 0.5 ms (`python -m bench.tls_handshake`): at 300
sessions, 2.7 % of a core against 0.3 %. This client keeps its connection for `keep_for`
seconds after each call (aiohttp's keep-alive; aiohttp is JupyterHub's own HTTP client, so it
is wherever a hub or a session runs). The hub's server keeps an idle connection for an hour.

The same JSON in and out, token and errors (CallFailed) as token_calls. A call whose kept
connection the other end closed as it went out (a hub restarting) is made once more, on a new
connection: for calls that may come twice, as a reading may.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import aiohttp

from gpuportal_adapters.token_calls import CallFailed, parse_json

# What a connection the other end closed while it was kept gives, on its next use.
CLOSED_MEANWHILE = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


class KeptCalls:
    """Calls with one connection kept between them (opened on the first call)."""

    def __init__(self, *, tls: ssl.SSLContext | None = None, keep_for: float = 150.0) -> None:
        self.tls = tls
        self.keep_for = keep_for
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                ssl=self.tls if self.tls is not None else True,
                keepalive_timeout=self.keep_for,
                limit=1,  # one connection: the calls come one at a time
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
    ) -> Any:
        """The JSON answer (None for an empty one); CallFailed with words otherwise."""
        for attempt in range(2):
            try:
                return await self._once(url, token=token, method=method, body=body, timeout=timeout)
            except CLOSED_MEANWHILE as error:
                if attempt == 0:
                    continue  # a kept connection closed meanwhile: once more, on a new one
                raise CallFailed(url, str(error) or type(error).__name__) from None
            except TimeoutError:
                raise CallFailed(url, f"no answer within {timeout:g} s") from None
            except (aiohttp.ClientError, OSError) as error:
                raise CallFailed(url, str(error) or type(error).__name__) from None
        raise CallFailed(url, "no attempt made")  # not reached

    async def _once(self, url: str, *, token: str, method: str, body: Any, timeout: float) -> Any:
        async with self._client().request(
            method,
            url,
            json=body,
            headers={"Authorization": f"token {token}"},
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
