"""Notices from the cluster team on every page: /hub/gpuportal/notices.

The portal keeps them (its admin page and API); the hub reads every one not ended with the
portal's token, at most every NOTICES_TTL_S for all users, and answers each user with those
showing to them now (everyone's, and their groups'). The hub's and the portal's pages
(templates/shared/notices.html) and JupyterLab (the session's lab extension) ask here, so one
look at the portal serves them all. A portal that does not answer leaves the last answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from tornado import web

from gpuportal_adapters.token_calls import CallFailed, call
from gpuportal_spawner.hub_state import hub_state
from gpuportal_spawner.json_handler import JsonHandler

NOTICES_PATH = "gpuportal/notices"
NOTICES_TTL_S = 15.0
log = logging.getLogger(__name__)


class NoticeBoard:
    """Every notice not ended, as the portal last said, one board per portal URL (kept in the
    hub's state: gpuportal_spawner.hub_state)."""

    def __init__(self, url: str, token: str) -> None:
        self._url = url.rstrip("/") + "/api/notices?all=true"
        self._token = token
        self._notices: list[dict[str, Any]] = []
        self._read_at = 0.0

    @classmethod
    def of(cls, boards: dict[str, NoticeBoard], url: str, token: str) -> NoticeBoard:
        if url not in boards:
            boards[url] = cls(url, token)
        return boards[url]

    async def notices(self) -> list[dict[str, Any]]:
        if time.monotonic() - self._read_at < NOTICES_TTL_S:
            return self._notices
        self._read_at = time.monotonic()
        try:
            self._notices = list(await call(self._url, token=self._token, timeout=3.0))
        except (CallFailed, TypeError) as error:
            log.warning("Could not read the portal's notices (showing the last ones): %s", error)
        return self._notices


def showing(
    notices: Iterable[dict[str, Any]], groups: Iterable[str], now: datetime
) -> list[dict[str, Any]]:
    """The notices a member of `groups` sees now: what the pages show of each."""
    mine = set(groups)
    shown = []
    for notice in notices:
        starts = datetime.fromisoformat(notice["starts_at"])
        ends = datetime.fromisoformat(notice["ends_at"])
        if starts <= now < ends and (not notice["groups"] or mine & set(notice["groups"])):
            shown.append({k: notice[k] for k in ("id", "text", "level", "ends_at")})
    return shown


class NoticesHandler(JsonHandler):
    """GET /hub/gpuportal/notices: the notices showing to the logged-in user now."""

    @web.authenticated
    async def get(self) -> None:
        user = self.current_user
        spawner = user.spawner
        url, token = getattr(spawner, "portal_url", ""), getattr(spawner, "portal_token", "")
        if not url:
            self.send([])
            return
        notices = await NoticeBoard.of(hub_state(user).notice_boards, url, token).notices()
        self.send(showing(notices, [g.name for g in user.groups], datetime.now(UTC)))
