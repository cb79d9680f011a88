"""Live resource profiles and software environments from the portal, with a fallback.

Asked at every spawn-page load and every spawn, so an admin's save shows at once. When the
portal is down, spawning goes on with the last answer it gave (or the configured profiles), and
the log says so.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from spawner.core.environments import (
    EnvironmentSpecError,
    SoftwareEnvironment,
    environment_from_record,
)
from spawner.core.profiles import ProfileError, ResourceProfile, profile_from_record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Offer:
    """What the spawn page may offer: profiles (with their groups) and environments."""

    profiles: list[ResourceProfile]
    environments: list[SoftwareEnvironment]


class ProfileSource:
    """Reads every enabled profile (with its groups) and environment from the portal's API."""

    def __init__(
        self,
        *,
        url: str,
        token: str,
        fallback: Callable[[], list[ResourceProfile]],
        timeout: float = 3.0,
    ) -> None:
        self._url = url.rstrip("/") + "/api"
        self._token = token
        self._fallback = fallback
        self._timeout = timeout
        self._last: Offer | None = None
        self._last_at = 0.0

    async def offer(self) -> Offer:
        try:
            profiles = [profile_from_record(r) for r in await self._fetch("profiles")]
            environments = [environment_from_record(r) for r in await self._fetch("environments")]
        except (OSError, HTTPClientError, ValueError, ProfileError, EnvironmentSpecError) as error:
            return self._stale(error)
        self._last, self._last_at = Offer(profiles, environments), time.time()
        return self._last

    async def _fetch(self, what: str) -> list[dict[str, Any]]:
        request = HTTPRequest(
            f"{self._url}/{what}",
            headers={"Authorization": f"token {self._token}"},
            request_timeout=self._timeout,
            connect_timeout=self._timeout,
        )
        response = await AsyncHTTPClient().fetch(request)
        records = json.loads(response.body)
        if not isinstance(records, list):
            raise ValueError(f"the portal's answer is not a list of {what}")
        return records

    def _stale(self, error: Exception) -> Offer:
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
        return Offer(self._fallback(), [])
