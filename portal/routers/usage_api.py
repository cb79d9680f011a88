"""GET /api/usage: the caller's and their groups' GPU-hours this week and month (Slurm's
accounting), and their fair-share standing in words."""

from __future__ import annotations

from datetime import datetime

import anyio
from fastapi import APIRouter
from pydantic import BaseModel

from gpuportal_core.usage import month_start, week_start
from gpuportal_portal.api_errors import declared
from gpuportal_portal.deps import ApiCaller, SlurmDep

router = APIRouter(prefix="/api", tags=["usage"], responses=declared(401, 403, 503))


class GpuHours(BaseModel):
    week: float
    month: float


class GroupUsage(BaseModel):
    account: str
    gpu_hours: GpuHours
    fair_share: float | None
    standing: str


class UsagePublic(BaseModel):
    user: str
    since_week: datetime
    since_month: datetime
    gpu_hours: GpuHours
    groups: list[GroupUsage]


@router.get("/usage", response_model=UsagePublic)
def my_usage(caller: ApiCaller, slurm: SlurmDep) -> UsagePublic:
    """GPU-hours of your jobs and sessions this week (from Monday) and this month, those of each
    Slurm account you are in, and each account's fair-share standing."""
    return anyio.from_thread.run(_usage, caller.name, slurm)


async def _usage(user: str, slurm: SlurmDep) -> UsagePublic:
    now = datetime.now()
    week, month = week_start(now), month_start(now)
    # Each window counts the jobs sacct lists for it: those that ran in it (a job that began
    # before it counts whole: an approximation on the generous side).
    mine_month = await slurm.gpu_hours(since=month, user=user)
    mine_week = await slurm.gpu_hours(since=week, user=user)
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
            )
        )
    return UsagePublic(
        user=user,
        since_week=week.astimezone(),
        since_month=month.astimezone(),
        gpu_hours=GpuHours(
            week=round(sum(mine_week.values()), 3), month=round(sum(mine_month.values()), 3)
        ),
        groups=groups,
    )
