"""The user's sessions as cards on the hub home, and extending one's time limit (issue 11).

GET  /hub/gpuportal/sessions  every server of the logged-in user, as cards (JSON)
POST /hub/gpuportal/extend    {"server": "", "add": "01:00:00"}: a longer time limit

Job facts come from the hub's shared poller (one squeue for all servers), so a home page that
refreshes itself costs Slurm nothing per user. Only the hub may raise a limit (Slurm lets only
operators do it): it checks the job is the caller's and the new limit within the profile's
maximum, and writes an audit record.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tornado import web

from gpuportal_adapters.slurm import SlurmError
from gpuportal_core.boards import is_board
from gpuportal_core.environments import SoftwareEnvironment
from gpuportal_core.jobs import JobInfo
from gpuportal_core.lifecycle import Stage
from gpuportal_core.profiles import ResourceProfile, find_profile
from gpuportal_core.reservations import Reservation
from gpuportal_core.session_clock import (
    ExtendRefused,
    SessionClock,
    describe_left,
    extend_steps,
    extended_limit,
)
from gpuportal_core.slurm_time import describe_runtime, format_runtime, parse_runtime
from gpuportal_spawner import capacity
from gpuportal_spawner.audit import audit
from gpuportal_spawner.culling import cull_card
from gpuportal_spawner.hub_state import hub_state
from gpuportal_spawner.json_handler import JsonHandler
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner

SESSIONS_PATH = "gpuportal/sessions"
EXTEND_PATH = "gpuportal/extend"
# How long a page waits for a fresh look at a session's job before it shows the last one; the
# card of a job just changed (a new time limit) waits longer for the change to show.
CARD_WAIT_S = 1.0
CHANGED_CARD_WAIT_S = 10.0


def _state(wrapper: Any, child: GpuSlurmSpawner | None) -> tuple[str, str]:
    """(state, words) of a server as its card shows them."""
    if wrapper.pending == "stop":
        return "stopping", "Stopping"
    if wrapper.pending:
        return "starting", (child.note if child is not None and child.note else "Starting")
    if wrapper.ready:
        if child is not None and child.stage is Stage.SUSPENDED:
            return "suspended", child.note or "Suspended by the cluster admins"
        # A note on a ready session: the hub cannot reach its node (gpuportal_core.lifecycle).
        return "running", (child.note if child is not None and child.note else "Running")
    return "stopped", wrapper.session_note or "Not running"


def _with_zone(when: datetime | None) -> str | None:
    if when is None:
        return None
    return (when if when.tzinfo else when.astimezone()).isoformat()


def maintenance_warning(
    info: JobInfo | None, ends: datetime | None, reservations: list[Reservation], now: datetime
) -> str:
    """What a running session's card says of a maintenance window on its node that starts
    before its time limit ends ("" for none): Slurm leaves a running job to the admins then."""
    if info is None or ends is None or not info.host:
        return ""
    ahead = sorted(
        (r for r in reservations if r.maintenance and r.end > now and r.covers(info.host)),
        key=lambda r: r.start,
    )
    for window in ahead:
        if ends > window.start:
            start, end = window.start.strftime("%H:%M"), window.end.strftime("%H:%M")
            if window.start.date() != now.date():
                start = window.start.strftime("%a %H:%M")
            return (
                f"Maintenance on {info.host} from {start} to {end}, before this session's time "
                f"limit: save your work before {start}; the session may be ended then."
            )
    return ""


def session_card(
    user: Any,
    wrapper: Any,
    *,
    info: JobInfo | None,
    profiles: list[ResourceProfile],
    environments: list[SoftwareEnvironment],
    now: datetime,
    reservations: list[Reservation] | None = None,
) -> dict[str, Any]:
    """What a card shows of one server; info is its job as last seen (None: no job)."""
    child = wrapper.session
    options = wrapper.user_options if isinstance(wrapper.user_options, dict) else {}
    profile = find_profile(profiles, str(options.get("profile", "")))
    environment = next((e for e in environments if e.slug == options.get("environment")), None)
    state, words = _state(wrapper, child)
    clock = (
        SessionClock.of(info) if info is not None and wrapper.active else SessionClock(None, None)
    )
    left = clock.left(now)
    maximum = profile.max_runtime if profile is not None else 0
    steps = extend_steps(clock.limit, maximum) if state == "running" else []
    return {
        "name": wrapper.name,
        "title": wrapper.name or "Default session",
        "url": user.server_url(wrapper.name),
        "spawn_url": f"{wrapper.hub.base_url}spawn/{user.escaped_name}/{wrapper.name}".rstrip("/"),
        "state": state,
        "words": words,
        "profile": profile.title if profile else str(options.get("profile", "")),
        "gpus": profile.gpus if profile else None,
        "gpu_type": profile.gpu_type if profile else "",
        "environment": environment.title if environment else str(options.get("environment", "")),
        "job_id": child.job_id if child is not None and wrapper.active else "",
        "node": info.host if info is not None and wrapper.active else "",
        # Slurm's times are the cluster's local time; given with their zone (the pages and the
        # lab show them in the reader's: templates/shared/times.html, labextension/clock.ts).
        "started": _with_zone(clock.started),
        "ends": _with_zone(clock.ends),
        "left": left,
        "left_words": describe_left(left),
        "limit": format_runtime(clock.limit) if clock.limit is not None else "",
        "maximum": format_runtime(maximum) if maximum else "",
        "extend": [{"add": format_runtime(s), "label": f"+{describe_runtime(s)}"} for s in steps],
        # When the idle culler would stop it and why, and what its GPUs do (gpuportal_core.culling).
        "cull": cull_card(child, wrapper) if child is not None and state == "running" else None,
        "maintenance": maintenance_warning(info, clock.ends, reservations or [], now)
        if state == "running"
        else "",
    }


async def _job_of(wrapper: Any, *, max_age: float, wait: float = CARD_WAIT_S) -> JobInfo | None:
    """The server's job as the shared poller last saw it (asked afresh when older than max_age,
    for `wait` s at most: a busy Slurm leaves the card as it last was, not the page waiting)."""
    child: GpuSlurmSpawner | None = wrapper.session
    if child is None or not child.job_id or not wrapper.active:
        return None
    return await child.job_within(wait, max_age=max_age)


async def user_cards(user: Any, *, fresh_job: str = "") -> list[dict[str, Any]]:
    """Every server of the user, the default first, then named ones by name."""
    # Shared TensorBoards (tb-*) are named servers too, listed on their own; a named server
    # never started (only its spawn page was opened) is no session yet.
    names = sorted(
        name
        for name in user.orm_user.orm_spawners
        if not is_board(name) and (not name or user.spawners[name].ever_started)
    )
    if "" not in names:
        names.insert(0, "")
    offer = await user.spawners[""].offer()
    now = datetime.now().replace(microsecond=0)
    reservations = await _reservations(user, names)
    cards = []
    for name in names:
        wrapper = user.spawners[name]
        child = wrapper.session
        max_age = child.poll_max_age if child is not None else 0.0
        wait = CARD_WAIT_S
        if fresh_job and getattr(child, "job_id", "") == fresh_job:
            max_age, wait = 0.0, CHANGED_CARD_WAIT_S
        info = await _job_of(wrapper, max_age=max_age, wait=wait)
        cards.append(
            session_card(
                user,
                wrapper,
                info=info,
                profiles=offer.profiles,
                environments=offer.environments,
                now=now,
                reservations=reservations,
            )
        )
    return cards


async def _reservations(user: Any, names: list[str]) -> list[Reservation]:
    """Slurm's reservations as the shared look at the cluster last saw them (none without a
    session job to warn about: then Slurm is not asked)."""
    sessions = [user.spawners[name].session for name in names]
    running = [session for session in sessions if session is not None and session.job_id]
    if not running:
        return []
    child = running[0]
    snapshots = capacity.snapshot(
        hub_state(user),
        bin_dir=child.slurm_bin_dir,
        timeout=child.slurm_timeout,
        ttl=child.capacity_ttl,
    )
    snapshot = await snapshots.get_within(CARD_WAIT_S)
    return snapshot.reservations if snapshot is not None else []


class SessionsHandler(JsonHandler):
    """GET /hub/gpuportal/sessions: the logged-in user's sessions as cards."""

    @web.authenticated
    async def get(self) -> None:
        if not self.require_scope("read:servers"):
            return
        self.send({"sessions": await user_cards(self.current_user)})


class ExtendHandler(JsonHandler):
    """POST /hub/gpuportal/extend: raise a running session's time limit, within its maximum."""

    @web.authenticated
    async def post(self) -> None:
        user = self.current_user
        try:
            body = self.json_body()
            server, add = body.get("server", ""), parse_runtime(str(body.get("add", "")))
        except ValueError:  # RuntimeFormatError too
            self.send({"error": 'send {"server": "", "add": "01:00:00"} (add as HH:MM:SS)'}, 400)
            return
        # A token for this one server will do (servers!server=alice/train), as for its stop.
        if not self.require_scope("servers", server=server if isinstance(server, str) else ""):
            return
        # The database's list, not user.spawners: that holds only the servers this hub process
        # has touched since it started.
        if not isinstance(server, str) or server not in user.orm_user.orm_spawners:
            self.send({"error": f"you have no session named {str(server)[:40]!r}"}, 404)
            return
        wrapper = user.spawners[server]
        child = wrapper.session
        if not wrapper.ready or child is None or not child.job_id:
            self.send({"error": "only a running session can be extended"}, 409)
            return
        try:
            await self._extend(user, wrapper, child, add)
        except ExtendRefused as refused:
            self.send({"error": str(refused)}, 400)
            return
        except SlurmError as error:
            self.log.error("Extending job %s failed: %s", child.job_id, error.message)
            self.send({"error": f"Slurm did not take the new limit: {error.message}"}, 503)
            return
        self.send({"sessions": await user_cards(user, fresh_job=child.job_id)})

    async def _extend(self, user: Any, wrapper: Any, child: GpuSlurmSpawner, add: int) -> None:
        info = await child.poller.job(child.job_id, max_age=0.0)
        # The job id comes from the user's own server; the tag proves it is still that job.
        if info is None or info.comment != child.tag or info.user != user.name:
            raise ExtendRefused("this session's job has ended")
        offer = await wrapper.offer()
        options = wrapper.user_options if isinstance(wrapper.user_options, dict) else {}
        profile = find_profile(offer.profiles, str(options.get("profile", "")))
        if profile is None:
            raise ExtendRefused("this session's profile is no longer offered to you")
        limit = SessionClock.of(info).limit
        new = extended_limit(
            limit=limit, add=add, maximum=profile.max_runtime, profile=profile.slug
        )
        await child.slurm.set_time_limit(child.job_id, new)
        audit(
            "extend",
            user=user.name,
            server=wrapper.name,
            job=child.job_id,
            limit_before=format_runtime(limit or 0),
            limit_after=format_runtime(new),
            profile=profile.slug,
        )
        # One line per privileged act, for the operators.
        self.log.info(
            "Audit: extend user=%s server=%r job=%s limit=%s->%s profile=%s",
            user.name,
            wrapper.name,
            child.job_id,
            format_runtime(limit or 0),
            format_runtime(new),
            profile.slug,
        )
