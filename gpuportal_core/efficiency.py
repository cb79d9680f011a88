"""How much of what a job asked for it used, from Slurm's accounting (sacct), as jobstats and
seff tell it: time (Elapsed against Timelimit), CPU (TotalCPU against the cores times Elapsed)
and memory (the largest MaxRSS of its steps against what it asked for).

CPU and memory are measured by Slurm's job accounting gatherer on the nodes
(JobAcctGatherType); a cluster without one records no use, and the figures then say "not
measured" rather than 0 %.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuportal_core.slurm_time import SlurmTimeError, parse_slurm_time
from gpuportal_core.usage import gpus_by_kind, gpus_of

# sacct -n -P -j ID --format=SACCT_USE_FORMAT: the job's line, then one per step.
SACCT_USE_FORMAT = "JobID,State,Elapsed,Timelimit,TotalCPU,NCPUS,ReqMem,MaxRSS,AllocTRES,Account"
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGTP]?)(?:[nc])?$")
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
# A job this short may end before the accounting gatherer's first sample (30 s by default).
SAMPLED_AFTER_S = 60
_CPU_TIME = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class StepUse:
    """One step of a job (the batch script, an srun: torchrun's, MPI's), as sacct has it."""

    step: str  # "batch", "0", "1"...
    elapsed_s: int
    cores: int
    cpu_s: float | None
    max_rss_bytes: int | None

    @property
    def cpu_percent(self) -> float | None:
        if self.cpu_s is None or not self.cores or not self.elapsed_s:
            return None
        return 100.0 * self.cpu_s / (self.cores * self.elapsed_s)

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "elapsed_s": self.elapsed_s,
            "cores": self.cores,
            "cpu_s": _round(self.cpu_s),
            "cpu_percent": _round(self.cpu_percent),
            "max_rss_bytes": self.max_rss_bytes,
        }


@dataclass(frozen=True)
class Efficiency:
    """Use against request; a use of None was not measured (no accounting gatherer)."""

    elapsed_s: int
    limit_s: int | None
    cores: int
    cpu_s: float | None
    requested_bytes: int | None
    max_rss_bytes: int | None
    gpus: int = 0
    account: str = ""
    # The GPUs' kind where Slurm's accounting tracks kinds ("mixed" for several, "" untracked).
    gpu_type: str = ""
    # Where a job has several steps (a batch script and its sruns), each one's use.
    steps: tuple[StepUse, ...] = ()

    @property
    def gpu_hours(self) -> float:
        """GPU-hours held: what Slurm charges, whatever ran on them."""
        return self.gpus * self.elapsed_s / 3600

    @property
    def time_percent(self) -> float | None:
        return 100.0 * self.elapsed_s / self.limit_s if self.limit_s else None

    @property
    def cpu_percent(self) -> float | None:
        if self.cpu_s is None or not self.cores or not self.elapsed_s:
            return None
        return 100.0 * self.cpu_s / (self.cores * self.elapsed_s)

    @property
    def memory_percent(self) -> float | None:
        if self.max_rss_bytes is None or not self.requested_bytes:
            return None
        return 100.0 * self.max_rss_bytes / self.requested_bytes

    def as_dict(self) -> dict[str, Any]:
        return {
            "elapsed_s": self.elapsed_s,
            "limit_s": self.limit_s,
            "time_percent": _round(self.time_percent),
            "cores": self.cores,
            "cpu_s": _round(self.cpu_s),
            "cpu_percent": _round(self.cpu_percent),
            "requested_bytes": self.requested_bytes,
            "max_rss_bytes": self.max_rss_bytes,
            "memory_percent": _round(self.memory_percent),
            "gpus": self.gpus,
            "gpu_type": self.gpu_type,
            "gpu_hours": round(self.gpu_hours, 3),
            "account": self.account,
            "steps": [step.as_dict() for step in self.steps],
            "summary": self.summary(),
        }

    def summary(self) -> str:
        """In words, e.g. "Used 25 % of its 4 cores, 0.5 GB of its 8.0 GB of memory (6 %) and 1 min
        of its 10 min."."""
        ran = (
            f"{_duration(self.elapsed_s)} of its {_duration(self.limit_s)}" if self.limit_s else ""
        )
        used = []
        if self.cpu_percent is not None:
            used.append(f"{self.cpu_percent:.0f} % of its {self.cores} cores")
        if self.memory_percent is not None and self.requested_bytes:
            used.append(
                f"{_gb(self.max_rss_bytes or 0)} of its {_gb(self.requested_bytes)} of memory "
                f"({self.memory_percent:.0f} %)"
            )
        if not used:
            # Why, as far as this record can tell: the gatherer samples a job every
            # JobAcctGatherFrequency (30 s by default), so a short job may have no figures on a
            # cluster that gathers them; it is not a claim about the cluster.
            why = (
                "too short for Slurm's accounting to measure its CPU and memory use."
                if self.elapsed_s < SAMPLED_AFTER_S
                else "Slurm's accounting has no CPU or memory figures for it."
            )
            return (f"Ran {ran}; " if ran else "") + (why if ran else why[:1].upper() + why[1:])
        return "Used " + ", ".join(used) + (f" and {ran}." if ran else ".")


def _round(value: float | None) -> float | None:
    return round(value, 1) if value is not None else None


def _gb(size: int) -> str:
    """A size as people read it: "5 MB" under a GB (not "0.0 GB"), "3.5 GB", "96 GB"."""
    if size < 1024**3:
        return f"{size / 1024**2:.0f} MB"
    return f"{size / 1024**3:.1f} GB" if size < 10 * 1024**3 else f"{size / 1024**3:.0f} GB"


def _duration(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} s"
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def size_bytes(text: str) -> int | None:
    """sacct's sizes ("4G", "3500M", "1234K", "0"; Slurm before 21 added n or c): bytes."""
    match = _SIZE.match(text.strip())
    if match is None:
        return None
    number, unit = match.groups()
    return int(float(number) * _UNITS[unit])


def cpu_seconds(text: str) -> float | None:
    """sacct's TotalCPU ("00:16.123", "01:02:03", "1-00:00:00"): seconds."""
    match = _CPU_TIME.match(text.strip())
    if match is None:
        return None
    days, hours, minutes, seconds, fraction = match.groups()
    whole = ((int(days or 0) * 24 + int(hours or 0)) * 60 + int(minutes)) * 60 + int(seconds)
    return whole + (float(f"0.{fraction}") if fraction else 0.0)


def parse_use(text: str) -> Efficiency | None:
    """sacct -n -P --format=SACCT_USE_FORMAT lines for one job (its line first, then its
    steps); None without the job's line. With no gatherer sacct prints no MaxRSS and a
    TotalCPU of 0: both are "not measured" then."""
    lines = [line.split("|") for line in text.splitlines() if line.count("|") >= 7]
    jobs = [parts for parts in lines if "." not in parts[0]]
    if not jobs:
        return None
    _, _, elapsed, limit, total_cpu, ncpus, req_mem, _ = jobs[0][:8]
    tres, account = [*jobs[0][8:10], "", ""][:2]
    try:
        elapsed_s = parse_slurm_time(elapsed) or 0
        limit_s = parse_slurm_time(limit)
    except SlurmTimeError:
        return None
    rss = [size_bytes(parts[7]) for parts in lines if "." in parts[0] and parts[7]]
    measured = [value for value in rss if value is not None]
    cpu = cpu_seconds(total_cpu)
    gathered = bool(measured) and max(measured) > 0
    steps = _steps(lines, gathered)
    return Efficiency(
        elapsed_s=elapsed_s,
        limit_s=limit_s,
        cores=int(ncpus) if ncpus.isdigit() else 0,
        cpu_s=cpu if gathered else None,
        requested_bytes=size_bytes(req_mem),
        max_rss_bytes=max(measured) if gathered else None,
        gpus=gpus_of(tres),
        gpu_type=_kind(tres),
        account=account,
        steps=tuple(steps) if len(steps) > 1 else (),
    )


def _kind(tres: str) -> str:
    kinds = set(gpus_by_kind(tres)) - {""}
    return kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "")


def _steps(lines: list[list[str]], gathered: bool) -> list[StepUse]:
    """The job's steps but `extern` (Slurm's own, which runs nothing of the user's)."""
    steps = []
    for parts in lines:
        if "." not in parts[0] or parts[0].endswith(".extern"):
            continue
        try:
            elapsed_s = parse_slurm_time(parts[2]) or 0
        except SlurmTimeError:
            continue
        steps.append(
            StepUse(
                step=parts[0].split(".", 1)[1],
                elapsed_s=elapsed_s,
                cores=int(parts[5]) if parts[5].isdigit() else 0,
                cpu_s=cpu_seconds(parts[4]) if gathered else None,
                max_rss_bytes=size_bytes(parts[7]) if gathered and parts[7] else None,
            )
        )
    return steps


def gpu_summary(gpu: Mapping[str, Any], gpus: int) -> str:
    """A session's GPU readings (gpuportal_adapters.gpu_summary) in words, e.g. "Its 2 GPUs: 60 %
    busy on average (peak 90 %), at most 29 GB of their 159 GB."."""
    if not gpus:
        return ""
    if not gpu.get("measured"):
        return f"GPU use not measured: {gpu.get('note') or 'no reading'}."
    cards = list(gpu.get("gpus") or [])
    mean = mean_gpu_percent(gpu)
    peak = max((card.get("peak_percent") or 0 for card in cards), default=0)
    its = "Its GPU" if len(cards) == 1 else f"Its {len(cards)} GPUs"
    said = f"{its}: {mean:.0f} % busy on average (peak {peak} %)"
    used = [card.get("memory_peak_mib") for card in cards]
    total = [card.get("memory_total_mib") for card in cards]
    if all(isinstance(v, int) for v in used + total):
        their = "its" if len(cards) == 1 else "their"
        said += f", at most {_gb(max(used) * 1024**2)} of {their} {_gb(sum(total) * 1024**2)}"
    return said + "."


def mean_gpu_percent(gpu: Mapping[str, Any]) -> float:
    """The mean utilisation over the session and its GPUs (0 where none was measured)."""
    cards = list(gpu.get("gpus") or [])
    return sum(card.get("mean_percent") or 0 for card in cards) / len(cards) if cards else 0.0
