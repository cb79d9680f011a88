"""Live resource profiles from the portal, with a fallback when it cannot answer.

Asked at every spawn-page load and every spawn, so an admin's save shows at once. When the
portal is down, spawning goes on with the last answer it gave (or the configured profiles), and
the log says so.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from spawner.core.profiles import ProfileError, ResourceProfile, profile_from_record

log = logging.getLogger(__name__)


class ProfileSource:
    """Reads every enabled profile (with its groups) from the portal's REST API."""

    def __init__(
        self,
        *,
        url: str,
        token: str,
        fallback: Callable[[], list[ResourceProfile]],
        timeout: float = 3.0,
    ) -> None:
        self._url = url.rstrip("/") + "/api/profiles"
        self._token = token
        self._fallback = fallback
        self._timeout = timeout
        self._last: list[ResourceProfile] | None = None
        self._last_at = 0.0

    async def profiles(self) -> list[ResourceProfile]:
        try:
            records = await self._fetch()
            profiles = [profile_from_record(record) for record in records]
        except (OSError, HTTPClientError, ValueError, ProfileError) as error:
            return self._stale(error)
        self._last, self._last_at = profiles, time.time()
        return profiles

    async def _fetch(self) -> list[dict[str, Any]]:
        request = HTTPRequest(
            self._url,
            headers={"Authorization": f"token {self._token}"},
            request_timeout=self._timeout,
            connect_timeout=self._timeout,
        )
        response = await AsyncHTTPClient().fetch(request)
        records = json.loads(response.body)
        if not isinstance(records, list):
            raise ValueError("the portal's answer is not a list of profiles")
        return records

    def _stale(self, error: Exception) -> list[ResourceProfile]:
        if self._last is not None:
            seen = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self._last_at))
            log.warning(
                "Portal not answering at %s (%s); using the profiles it gave at %s",
                self._url,
                error,
                seen,
            )
            return self._last
        log.warning(
            "Portal not answering at %s (%s); using the configured profiles", self._url, error
        )
        return self._fallback()
