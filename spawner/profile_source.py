"""Live resource profiles and software environments from the portal, with a fallback.

Asked at every spawn-page load and every spawn, so an admin's save shows at once. When the
portal is down, spawning goes on with the last answer it gave, kept on disk so that it outlives
a hub restart (the portal may start after the hub asks), or else the configured profiles; the
log says so.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuportal_adapters.token_calls import CallFailed, call
from gpuportal_adapters.whole_file import replace_whole
from gpuportal_core.environments import (
    EnvironmentSpecError,
    SoftwareEnvironment,
    environment_from_record,
)
from gpuportal_core.profiles import ProfileError, ResourceProfile, profile_from_record

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
        cache_file: str = "",
    ) -> None:
        self._url = url.rstrip("/") + "/api"
        self._cache_file = cache_file
        self._token = token
        self._fallback = fallback
        self._timeout = timeout
        self._last: Offer | None = None
        self._last_at = 0.0
        self._saved = ""  # what the cache file holds, as written

    async def offer(self) -> Offer:
        try:
            # Both at once: the spawn page and each spawn wait for the two.
            profiles, environments = await asyncio.gather(
                self._fetch("profiles"), self._fetch("environments")
            )
            records = {"profiles": profiles, "environments": environments}
            offer = _offer_from(records)
        except (CallFailed, ValueError, ProfileError, EnvironmentSpecError) as error:
            return self._stale(error)
        self._last, self._last_at = offer, time.time()
        self._save(records)
        return offer

    def _save(self, records: dict[str, list[dict[str, Any]]]) -> None:
        if not self._cache_file:
            return
        text = json.dumps(records)
        if text == self._saved:
            return  # the same answer as last time: a spawn burst would write it at each page
        try:
            replace_whole(Path(self._cache_file), text)
            self._saved = text
        except OSError as error:
            log.warning("Could not keep the portal's profiles in %s: %s", self._cache_file, error)

    def _load(self) -> Offer | None:
        if not self._cache_file:
            return None
        try:
            with open(self._cache_file) as cached:
                offer = _offer_from(json.load(cached))
            self._last_at = os.path.getmtime(self._cache_file)
        except (OSError, ValueError, TypeError, KeyError, ProfileError, EnvironmentSpecError):
            return None
        return offer

    async def _fetch(self, what: str) -> list[dict[str, Any]]:
        records = await call(f"{self._url}/{what}", token=self._token, timeout=self._timeout)
        if not isinstance(records, list):
            raise ValueError(f"the portal's answer is not a list of {what}")
        return records

    def _stale(self, error: Exception) -> Offer:
        if self._last is None:
            self._last = self._load()
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


def _offer_from(records: dict[str, list[dict[str, Any]]]) -> Offer:
    return Offer(
        [profile_from_record(r) for r in records["profiles"]],
        [environment_from_record(r) for r in records["environments"]],
    )
