"""A session's GPU use over its whole life, for its efficiency once it has ended.

The GPU reader (gpuportal_session.gpu_activity) hands every reading here: per GPU the mean and
peak utilisation and the peak memory, as Princeton's jobstats reports them. The summary is
written after each reading to a private file of the job's in the user's home,
~/.cache/gpuportal/gpu-use/JOBID.json, which the portal reads as the user once the job has ended
(gpuportal_portal.use_collector): a session killed by its time limit has still left its last
minute's summary, and the hub need not be up when it ends. The portal only reads (it runs
nothing as users that could remove a file); each session's start removes summaries older
than KEEP_DAYS, long read by then. A session that could not read its
GPUs writes why ("nvidia-smi is not installed on gpu01"), so the portal says "not measured"
with the reason rather than nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuportal_adapters.whole_file import replace_whole

FOLDER = Path(".cache") / "gpuportal" / "gpu-use"  # in the user's home
KEEP_DAYS = 7


@dataclass(frozen=True)
class GpuReading:
    """One GPU at one moment: utilisation in percent, memory in MiB (None: not reported)."""

    utilisation: int
    memory_used_mib: int | None = None
    memory_total_mib: int | None = None


@dataclass
class GpuTally:
    samples: int = 0
    utilisation_sum: int = 0
    utilisation_peak: int = 0
    memory_peak_mib: int | None = None
    memory_total_mib: int | None = None

    def add(self, reading: GpuReading) -> None:
        self.samples += 1
        self.utilisation_sum += reading.utilisation
        self.utilisation_peak = max(self.utilisation_peak, reading.utilisation)
        if reading.memory_used_mib is not None:
            self.memory_peak_mib = max(self.memory_peak_mib or 0, reading.memory_used_mib)
        if reading.memory_total_mib is not None:
            self.memory_total_mib = reading.memory_total_mib

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean_percent": round(self.utilisation_sum / self.samples, 1) if self.samples else 0,
            "peak_percent": self.utilisation_peak,
            "memory_peak_mib": self.memory_peak_mib,
            "memory_total_mib": self.memory_total_mib,
        }


@dataclass
class GpuSummary:
    """The readings so far, per GPU in the order nvidia-smi lists the job's GPUs; `note` says
    why the last reading failed (a summary of no reading is "not measured")."""

    gpus: list[GpuTally] = field(default_factory=list)
    samples: int = 0
    note: str = ""

    def take(self, readings: list[GpuReading]) -> None:
        if len(readings) != len(self.gpus):  # the first reading (a GPU cannot come or go)
            self.gpus = [GpuTally() for _ in readings]
        for tally, reading in zip(self.gpus, readings, strict=True):
            tally.add(reading)
        self.samples += 1
        self.note = ""

    def missed(self, why: str) -> None:
        self.note = why

    def as_dict(self, job_id: str) -> dict[str, Any]:
        return {
            "job_id": job_id,
            "measured": self.samples > 0,
            "samples": self.samples,
            "note": self.note if not self.samples else "",
            "gpus": [tally.as_dict() for tally in self.gpus],
        }


def summary_path(home: str | Path, job_id: str) -> Path:
    return Path(home) / FOLDER / f"{job_id}.json"


def write_summary(home: str | Path, job_id: str, summary: dict[str, Any]) -> None:
    """The summary, replaced whole (a reader never sees half a file), readable by the user
    alone."""
    path = summary_path(home, job_id)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    replace_whole(path, json.dumps(summary))


def remove_old_summaries(home: str | Path, now: float, keep_days: int = KEEP_DAYS) -> int:
    """Earlier sessions' summaries older than keep_days; how many were removed."""
    removed = 0
    for path in (Path(home) / FOLDER).glob("*.json"):
        try:
            if now - path.stat().st_mtime > keep_days * 86400:
                path.unlink()
                removed += 1
        except OSError:  # gone meanwhile, or not ours to remove: nothing to do
            continue
    return removed
