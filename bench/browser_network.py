"""What the browser fetched for a page and from where, as Chromium's DevTools protocol tells it.

Playwright's responses carry no cache flag (a response from the disk cache still shows a
request), so bench/click_to_lab.py counted every cached script as fetched. The protocol's
Network domain says it per request: `fromDiskCache`, `requestServedFromCache` (memory), the
bytes on the wire (`encodedDataLength`) and when each request began and ended, on one clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Fetch:
    """One request of the page: its URL, its times (the protocol's clock, seconds), where its
    answer came from and how big it was."""

    url: str
    kind: str  # the protocol's resource type: Script, Stylesheet, XHR, Fetch, Document...
    began: float  # time.time()'s clock, as all the times here
    ended: float | None = None
    cache: str = ""  # "disk", "memory", "prefetch" or "" (the network)
    status: int = 0
    wire: int = 0  # bytes transferred, headers included
    failed: str = ""

    @property
    def seconds(self) -> float:
        return (self.ended - self.began) if self.ended is not None else 0.0


@dataclass
class NetworkLog:
    """Every request of one page while it is attached (Network.enable on a CDP session)."""

    fetches: dict[str, Fetch] = field(default_factory=dict)
    _session: Any = None
    # The protocol's event times are a monotonic clock; requestWillBeSent also gives the wall
    # time, and their difference turns the others into time.time()'s clock (the bench's marks).
    _offset: float = 0.0

    def attach(self, page: Any) -> None:
        self._session = page.context.new_cdp_session(page)
        self._session.send("Network.enable")
        handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "Network.requestWillBeSent": self._sent,
            "Network.requestServedFromCache": self._memory,
            "Network.responseReceived": self._received,
            "Network.loadingFinished": self._finished,
            "Network.loadingFailed": self._failed,
        }
        for event, handler in handlers.items():
            self._session.on(event, handler)

    def detach(self) -> None:
        if self._session is not None:
            self._session.detach()
            self._session = None

    def _sent(self, event: dict[str, Any]) -> None:
        request = event["request"]
        self._offset = event["wallTime"] - event["timestamp"]
        redirected = self.fetches.pop(event["requestId"], None)
        if redirected is not None and "redirectResponse" in event:
            # A redirect reuses its request's id: the first leg ends here, with its own status.
            redirected.status = int(event["redirectResponse"].get("status", 0))
            redirected.ended = event["timestamp"] + self._offset
            self.fetches[f"{event['requestId']}:{len(self.fetches)}"] = redirected
        self.fetches[event["requestId"]] = Fetch(
            url=request["url"], kind=event.get("type", ""), began=event["wallTime"]
        )

    def _memory(self, event: dict[str, Any]) -> None:
        fetch = self.fetches.get(event["requestId"])
        if fetch is not None:
            fetch.cache = "memory"

    def _received(self, event: dict[str, Any]) -> None:
        fetch = self.fetches.get(event["requestId"])
        if fetch is None:
            return
        response = event["response"]
        fetch.status = int(response.get("status", 0))
        if response.get("fromDiskCache"):
            fetch.cache = fetch.cache or "disk"
        elif response.get("fromPrefetchCache"):
            fetch.cache = "prefetch"

    def _finished(self, event: dict[str, Any]) -> None:
        fetch = self.fetches.get(event["requestId"])
        if fetch is not None:
            fetch.ended = event["timestamp"] + self._offset
            fetch.wire = int(event.get("encodedDataLength", 0))

    def _failed(self, event: dict[str, Any]) -> None:
        fetch = self.fetches.get(event["requestId"])
        if fetch is not None:
            fetch.ended = event["timestamp"] + self._offset
            fetch.failed = event.get("errorText", "failed")

    def between(self, begun: float, ended: float) -> list[Fetch]:
        """The requests that began in [begun, ended) (time.time())."""
        return [f for f in self.fetches.values() if begun <= f.began < ended]
