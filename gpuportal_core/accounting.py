"""Group GPU limits from Slurm's accounting, and how much of its limit a group uses now.

Real clusters put each group's limit on its Slurm account (GrpTRES=gres/gpu=6) or its QOS, and
Slurm enforces it: a job over it waits with AssocGrpGRES. The spawn page says so before the user
picks: "Your group ds uses 4 of its 6 GPUs (you: 4)", and a profile that would go over it
"waits for your group's GPU limit".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from gpuportal_core.capacity import GpuJob
from gpuportal_core.words import count

# One line per association: the account's own (no user), then one per user in it.
ASSOC_FORMAT = "account,user,grptres"
_GPU_LIMIT = re.compile(r"(?:^|,)gres/gpu(?::[^=,]+)?=(\d+)")


@dataclass(frozen=True)
class Associations:
    """Each account's GPU limit (absent: none) and each user's accounts, first the default."""

    gpu_limits: dict[str, int] = field(default_factory=dict)
    accounts: dict[str, list[str]] = field(default_factory=dict)

    def account_of(self, user: str) -> str:
        return next(iter(self.accounts.get(user, [])), "")


def parse_associations(text: str) -> Associations:
    """`sacctmgr -n -P show assoc format=ASSOC_FORMAT` output."""
    limits: dict[str, int] = {}
    accounts: dict[str, list[str]] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 3 or not parts[0]:
            continue
        account, user, tres = parts[:3]
        if user:
            accounts.setdefault(user, []).append(account)
            continue
        match = _GPU_LIMIT.search(tres)
        if match:
            limits[account] = int(match.group(1))
    return Associations(limits, accounts)


@dataclass(frozen=True)
class GroupUse:
    """A group's GPUs in use (its running jobs), its limit, and the user's own share."""

    account: str
    used: int
    limit: int
    mine: int

    def describe(self) -> str:
        return (
            f"Your group {self.account} uses {self.used} of its {count(self.limit, 'GPU')} "
            f"(you: {self.mine}). A job that would take it over the limit waits until enough "
            "of them are free again."
        )

    def fits(self, gpus: int) -> bool:
        return self.used + gpus <= self.limit

    def waits(self, gpus: int) -> str:
        """The spawn page's line for a profile that would go over the limit."""
        return (
            f"Waits for your group's GPU limit: {self.used} of {self.limit} in use, this needs "
            f"{gpus}; it starts as your group's other jobs end"
        )


def group_use(assocs: Associations, user: str, jobs: Iterable[GpuJob]) -> GroupUse | None:
    """The user's group's use of its limit; None where its account has no GPU limit."""
    account = assocs.account_of(user)
    limit = assocs.gpu_limits.get(account)
    if not account or limit is None:
        return None
    running = [job for job in jobs if job.running and job.account == account]
    return GroupUse(
        account=account,
        used=sum(job.gpus for job in running),
        limit=limit,
        mine=sum(job.gpus for job in running if job.user == user),
    )
