"""The home page's line on the user's last session: GET /hub/gpuportal/last-session.

"Your last session (default, ended 14:02) used 9 % of its 32 cores, 3.0 GB of its 192 GB of
memory (2 %) and 1 h 30 min of its 8 h 00 min. Next time gpu-1 with 2 h would do, and would
start at once." What it used comes from the portal (gpuportal_portal.use_collector, read with
the portal's token); what would have done from the user's own profiles
(gpuportal_core.right_size); when that would start from the capacity estimate the spawn page
uses. A portal that does not answer, or no ended session yet: no line.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any
from urllib.parse import quote

from tornado import web

from gpuportal_adapters.token_calls import CallFailed, call
from gpuportal_core.right_size import Suggestion, suggest
from gpuportal_core.slurm_time import describe_runtime
from gpuportal_spawner.json_handler import JsonHandler

LAST_SESSION_PATH = "gpuportal/last-session"
log = logging.getLogger(__name__)


async def last_session(url: str, token: str, user: str) -> dict[str, Any] | None:
    """The portal's answer for the user: their last ended session and its use (None: none)."""
    try:
        answer = await call(
            f"{url.rstrip('/')}/api/usage/last-session?user={quote(user)}", token=token, timeout=3.0
        )
    except CallFailed as error:
        log.warning("Could not read %s's last session from the portal: %s", user, error)
        return None
    return answer if isinstance(answer, dict) else None


def said(session: dict[str, Any]) -> str:
    """What it used, in a sentence or two; or why that is not known (yet)."""
    ended = str(session.get("ended_at") or "")[11:16]
    last = f"Your last session ({session['name']}{f', ended {ended}' if ended else ''})"
    use = session.get("use")
    if not use:
        if session.get("recorded") is False:
            return f"{last}: Slurm's accounting has no record of what it used."
        return f"{last}: what it used shows here once Slurm's accounting has it, in a few minutes."
    summary = str(use.get("summary") or "")
    return f"{last} {summary[:1].lower()}{summary[1:]}"


def advice(suggestion: Suggestion, start: datetime | None, now: datetime) -> str:
    """The smaller ask, and when it would start as the cluster is now."""
    ask = f"Next time {suggestion.profile.slug} with {describe_runtime(suggestion.runtime_s)}"
    if start is None:
        return f"{ask} would do."
    if start <= now:
        return f"{ask} would do, and would start at once."
    when = start.strftime("%H:%M") if start.date() == now.date() else start.strftime("%a %H:%M")
    return f"{ask} would do; as the cluster is now it would start about {when}."


class LastSessionHandler(JsonHandler):
    """{"text": what the last session used, "advice": a smaller ask or "", "job": its id in the
    portal}; {} where there is none."""

    @web.authenticated
    async def get(self) -> None:
        spawner = self.current_user.spawner
        url, token = getattr(spawner, "portal_url", ""), getattr(spawner, "portal_token", "")
        session = await last_session(url, token, self.current_user.name) if url else None
        if not session:
            self.send({})
            return
        use = session.get("use")
        suggestion = suggest(use, (await spawner.offer()).profiles) if use else None
        hint = ""
        if suggestion is not None:
            snapshot = await spawner.cluster_snapshot()
            line = (
                snapshot.line(suggestion.profile.partition, suggestion.profile.gpu_type)
                if snapshot
                else None
            )
            start = (
                line.new_job_start(suggestion.profile.gpus, suggestion.runtime_s) if line else None
            )
            hint = advice(suggestion, start, datetime.now().replace(microsecond=0))
        self.send({"text": said(session), "advice": hint, "job": session["id"]})
