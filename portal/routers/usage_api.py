"""GET /api/usage: the caller's and their groups' GPU-hours this week and month (Slurm's
accounting), and their fair-share standing in words. GET /api/usage/last-session: what the
caller's last ended session used, for the hub's home page."""

from __future__ import annotations

import time
from datetime import datetime

from fastapi import APIRouter, HTTPException, Request, status
from pydantic import BaseModel
from sqlalchemy import select

from gpuportal_adapters.slurm import SlurmError
from gpuportal_core.slurm_time import slurm_time_with_zone
from gpuportal_core.usage import hours_by_kind, limits_words, month_start, week_start
from gpuportal_portal import waste
from gpuportal_portal.api_errors import declared
from gpuportal_portal.deps import ApiAdmin, ApiCaller, SessionDep, SlurmDep
from gpuportal_portal.job_schemas import JobUsePublic
from gpuportal_portal.job_service import use_state
from gpuportal_portal.models import JobRecord, utcnow
from gpuportal_portal.session_history import SESSION_LAUNCHER

router = APIRouter(prefix="/api", tags=["usage"], responses=declared(401, 403, 503))


class KindHours(BaseModel):
    kind: str  # as the nodes' gres.conf names it; "" where the accounting does not track it
    week: float
    month: float


class GpuHours(BaseModel):
    week: float
    month: float
    # Per GPU kind, where Slurm's accounting tracks kinds (AccountingStorageTRES); empty
    # where it does not.
    kinds: list[KindHours] = []


class GroupUsage(BaseModel):
    account: str
    gpu_hours: GpuHours
    fair_share: float | None
    standing: str
    gpu_limit: int | None  # GPUs at once (GrpTRES); null: none
    gpu_hours_limit: float | None  # GrpTRESMins, in hours; null: none
    gpu_hours_counted: float | None  # Slurm's (decayed) count against it
    limits: str


class UsagePublic(BaseModel):
    user: str
    since_week: datetime
    since_month: datetime
    gpu_hours: GpuHours
    groups: list[GroupUsage]


class LastSessionPublic(BaseModel):
    id: int
    name: str
    slurm_job_id: str
    ended_at: str
    # null while the portal has not read it from Slurm's accounting yet (a few minutes after
    # the end), or where the accounting has no record of it (`recorded`: false).
    use: JobUsePublic | None
    recorded: bool = True


@router.get("/usage/last-session", response_model=LastSessionPublic | None)
def last_session(
    caller: ApiCaller, session: SessionDep, user: str = ""
) -> LastSessionPublic | None:
    """What your last ended notebook session used (null: none has ended); the last by its end,
    with a use of null while its figures are still being read. The hub asks for its users
    with `user`."""
    if user and user != caller.name and caller.kind != "hub" and not caller.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Only admins may ask about other users.")
    query = (
        select(JobRecord)
        .where(JobRecord.user == (user or caller.name), JobRecord.launcher == SESSION_LAUNCHER)
        .where(JobRecord.ended_at != "")
        # Slurm's end times, all in one ISO form: they sort as text.
        .order_by(JobRecord.ended_at.desc(), JobRecord.id.desc())
        .limit(20)
    )
    for record in session.scalars(query):
        known = use_state(record)
        if not known:
            continue  # not over yet
        return LastSessionPublic(
            id=record.id,
            name=record.name,
            slurm_job_id=record.slurm_job_id,
            ended_at=slurm_time_with_zone(record.ended_at),
            use=JobUsePublic(**record.use) if known == "known" and record.use else None,
            recorded=known != "none",
        )
    return None


class WasteRowPublic(BaseModel):
    who: str
    jobs: int
    gpu_hours: float
    gpu_hours_measured: float
    gpu_hours_used: float
    gpu_hours_wasted: float
    gpu_used_percent: float | None
    cpu_percent: float | None


class WastePublic(BaseModel):
    since: datetime
    users: list[WasteRowPublic]
    groups: list[WasteRowPublic]
    kinds: list[WasteRowPublic] = []  # per GPU kind, where Slurm's accounting tracks kinds


@router.get("/usage/waste", response_model=WastePublic)
def week_waste(admin: ApiAdmin, session: SessionDep) -> WastePublic:
    """Admins: the last 7 days' largest waste of GPUs by user and by group (GPU-hours held
    against used, where sessions measured their GPUs), and their CPU efficiency."""
    week = waste.week_waste(session, utcnow())
    return WastePublic(
        since=week.since,
        users=[WasteRowPublic(**row.as_dict()) for row in week.users],
        groups=[WasteRowPublic(**row.as_dict()) for row in week.groups],
        kinds=[WasteRowPublic(**row.as_dict()) for row in week.kinds],
    )


@router.get("/usage", response_model=UsagePublic)
async def my_usage(request: Request, caller: ApiCaller, slurm: SlurmDep) -> UsagePublic:
    """GPU-hours of your jobs and sessions this week (from Monday) and this month, those of each
    Slurm account you are in, each account's fair-share standing, and its limits (GPUs at once,
    GPU-hours in all) from Slurm's accounting."""
    # Each user's last answer, kept by the app (create_app), not by this module.
    recent: dict[str, tuple[float, UsagePublic]] = request.app.state.recent_usage
    kept = recent.get(caller.name)
    if kept is not None and time.monotonic() - kept[0] < USAGE_TTL_S:
        return kept[1]
    usage = await _usage(caller.name, slurm)
    recent[caller.name] = (time.monotonic(), usage)
    return usage


# Each answer takes 7 Slurm calls or more (sacct per window and account, sshare, sacctmgr): a
# user's is kept this long, as the jobs page asks at every load. GPU-hours move slowly.
USAGE_TTL_S = 30.0


async def _usage(user: str, slurm: SlurmDep) -> UsagePublic:
    now = datetime.now()
    week, month = week_start(now), month_start(now)
    # Each window counts the jobs sacct lists for it: those that ran in it (a job that began
    # before it counts whole: an approximation on the generous side).
    mine_month = await slurm.gpu_hours(since=month, user=user)
    mine_week = await slurm.gpu_hours(since=week, user=user)
    try:
        at_once = (await slurm.associations()).gpu_limits
    except SlurmError:  # a cluster without accounting: no limits to show
        at_once = {}
    groups = []
    for share in await slurm.fair_share(user):
        of_month = await slurm.gpu_hours(since=month, account=share.account)
        of_week = await slurm.gpu_hours(since=week, account=share.account)
        groups.append(
            GroupUsage(
                account=share.account,
                gpu_hours=GpuHours(
                    week=round(sum(of_week.values()), 3), month=round(sum(of_month.values()), 3)
                ),
                fair_share=share.value,
                standing=share.words(),
                gpu_limit=at_once.get(share.account),
                gpu_hours_limit=share.gpu_hours_limit,
                gpu_hours_counted=share.gpu_hours_counted,
                limits=limits_words(share.account, at_once.get(share.account), share),
            )
        )
    return UsagePublic(
        user=user,
        since_week=week.astimezone(),
        since_month=month.astimezone(),
        gpu_hours=GpuHours(
            week=round(sum(mine_week.values()), 3),
            month=round(sum(mine_month.values()), 3),
            kinds=_kinds(mine_week, mine_month),
        ),
        groups=groups,
    )


def _kinds(
    week: dict[tuple[str, str, str], float], month: dict[tuple[str, str, str], float]
) -> list[KindHours]:
    """GPU-hours per kind, by name; none where every GPU-hour is of an untracked kind."""
    of_week, of_month = hours_by_kind(week), hours_by_kind(month)
    if set(of_month) <= {""}:
        return []
    return [
        KindHours(kind=kind, week=round(of_week.get(kind, 0.0), 3), month=round(used, 3))
        for kind, used in sorted(of_month.items())
    ]
