"""Job records kept in step with Slurm: one squeue for all live jobs, scontrol for ended ones,
and the tag for submissions sbatch never answered.

Two halves, so that no database session waits on Slurm in the event loop: `look` asks Slurm
(async, on the loop, knowing only job ids and tags) and `apply` copies the answers onto the
records (plain code, in the route's worker thread). `refresh` joins them for a plain route.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio.from_thread
from sqlalchemy.orm import Session

from gpuportal_core.jobs import JobDetail, JobInfo, array_summary
from gpuportal_core.slurm import SlurmClient, SlurmError
from gpuportal_core.slurm_time import time_limit_hms, time_or_blank
from gpuportal_core.states import Phase, phase_of
from gpuportal_portal.job_service import mark_submitted, record_tag, settled
from gpuportal_portal.models import JobRecord, aware_utc, utcnow
from gpuportal_portal.settings import PortalSettings

log = logging.getLogger(__name__)


def apply_detail(record: JobRecord, detail: JobDetail | None) -> None:
    """Copy what Slurm says of the job onto its record."""
    if detail is None:
        if not settled(record.state):
            record.state, record.reason = "ENDED", "Slurm no longer knows this job"
        return
    record.state = detail.state
    record.reason = detail.reason if detail.phase is Phase.QUEUED else ""
    record.nodes = detail.nodes or record.nodes
    record.exit_code = detail.exit_code
    record.started_at = detail.start_time if detail.phase is not Phase.QUEUED else ""
    record.expected_start = detail.start_time if detail.phase is Phase.QUEUED else ""
    record.ended_at = detail.end_time if detail.phase is Phase.ENDED else ""
    follow_time_limit(record, detail.time_limit)
    record.updated_at = utcnow()


def follow_time_limit(record: JobRecord, limit: str) -> None:
    """A session extended on the hub: its history shows the limit Slurm has now (session
    records keep one; batch jobs keep their request as sent)."""
    limit = time_limit_hms(limit)
    if limit and record.request.get("time_limit", limit) != limit:
        # A new dict: SQLAlchemy does not see changes made inside a JSON value.
        record.request = {**record.request, "time_limit": limit}


def is_array(record: JobRecord) -> bool:
    return bool(record.request.get("array"))


def apply_array(record: JobRecord, details: list[JobDetail]) -> None:
    """Copy what Slurm says of an array's tasks onto its record: each task's state, and one
    state for the whole (gpuportal_core.jobs.array_summary)."""
    if not details:
        apply_detail(record, None)
        return
    # A range that waited ("2-3") is replaced by its tasks once they start; tasks Slurm has
    # forgotten keep their last state.
    tasks = {k: v for k, v in record.tasks.items() if k.isdigit()}
    tasks.update({d.array_task or "0": d.state for d in details})
    record.tasks = tasks
    record.state = array_summary(tasks)
    waiting = [d for d in details if d.phase is Phase.QUEUED]
    working = [d for d in details if d.phase is not Phase.QUEUED]
    record.reason = waiting[0].reason if waiting and record.state == "PENDING" else ""
    record.expected_start = waiting[0].start_time if waiting else ""
    record.nodes = ",".join(sorted({d.nodes for d in working if d.nodes})) or record.nodes
    record.started_at = min((d.start_time for d in working if d.start_time), default="")
    if phase_of(record.state) is Phase.ENDED:
        codes = [d.exit_code for d in details if d.exit_code is not None]
        record.exit_code = max(codes) if codes else record.exit_code
        record.ended_at = max((d.end_time for d in details if d.end_time), default="")
    record.updated_at = utcnow()


@dataclass(frozen=True)
class Wanted:
    """What `look` needs of one record: its job id, or the tag of a submission that sbatch
    never answered."""

    job_id: str = ""
    array: bool = False
    tag: str = ""


@dataclass
class Answers:
    """What Slurm said. A job id in neither `queue` nor `ended` got no answer (Slurm trouble):
    its record keeps its last state, for unknown is never gone."""

    queue: dict[str, JobInfo] = field(default_factory=dict)
    # scontrol's (or sacct's) records of jobs no longer queued or running: [] when Slurm has
    # forgotten the job entirely.
    ended: dict[str, list[JobDetail]] = field(default_factory=dict)
    # Tag -> job id of every tagged job; None when squeue could not be asked.
    tagged: dict[str, str] | None = None


class JobWatcher:
    """Keeps job records in step with Slurm: one squeue for all live jobs, at most every
    `min_interval` seconds however many people look at their job lists."""

    def __init__(
        self,
        slurm: SlurmClient,
        *,
        min_interval: float = 2.0,
        settings: PortalSettings | None = None,
    ) -> None:
        self._slurm = slurm
        self._min_interval = min_interval
        self._last = 0.0
        self._lock = asyncio.Lock()
        self._settings = settings or PortalSettings()
        # A submission still in flight is not "uncertain" yet: give sbatch its whole timeout.
        self._settle_after = 3 * self._settings.slurm_timeout

    def refresh(
        self, session: Session, records: Sequence[JobRecord], *, throttle: bool = True
    ) -> None:
        """Bring the records up to date and commit. Called from a plain route's worker thread:
        Slurm is asked on the event loop while the thread waits."""
        wanted = self.wanted(records)
        if not wanted:
            return
        answers = anyio.from_thread.run(self.look, wanted, throttle)
        if answers is not None:
            self.apply(records, answers)
            session.commit()

    def refresh_one(self, session: Session, record: JobRecord) -> None:
        """One job, asked about now (not throttled): a detail page, a cancel just sent."""
        self.refresh(session, [record], throttle=False)

    def wanted(self, records: Sequence[JobRecord]) -> list[Wanted]:
        wanted = [
            Wanted(job_id=r.slurm_job_id, array=is_array(r))
            for r in records
            if r.slurm_job_id and not settled(r.state)
        ]
        wanted += [Wanted(tag=record_tag(r, self._settings)) for r in records if self._uncertain(r)]
        return wanted

    def _uncertain(self, record: JobRecord) -> bool:
        if record.slurm_job_id or record.state != "SUBMITTING":
            return False
        return (utcnow() - aware_utc(record.updated_at)).total_seconds() > self._settle_after

    async def look(self, wanted: list[Wanted], throttle: bool = True) -> Answers | None:
        """Ask Slurm about the jobs wanted; None when another look was made less than
        `min_interval` ago (the records are as fresh as that one left them)."""
        async with self._lock:
            if throttle and time.monotonic() - self._last < self._min_interval:
                return None
            if throttle:
                self._last = time.monotonic()
            answers = Answers()
            if any(w.tag for w in wanted):
                answers.tagged = await self._tagged()
            # An array's tasks each have their own line and id: scontrol reads them all.
            for job in [w for w in wanted if w.job_id and w.array]:
                details = await self._details(job.job_id)
                if details is not None:
                    answers.ended[job.job_id] = details
            single = [w.job_id for w in wanted if w.job_id and not w.array]
            if not single:
                return answers
            try:
                seen = await self._slurm.jobs(single)
            except SlurmError as error:
                log.warning("Could not ask squeue about jobs: %s", error)
                return answers
            for job_id in single:
                info = seen.get(job_id)
                if info is not None and phase_of(info.state) is not Phase.ENDED:
                    answers.queue[job_id] = info
                else:
                    # Ended (or gone): scontrol has the exit code and the times.
                    details = await self._details(job_id)
                    if details is not None:
                        answers.ended[job_id] = details
            return answers

    async def _tagged(self) -> dict[str, str] | None:
        try:
            found = await self._slurm.tagged(alive_only=False)
        except SlurmError as error:
            log.warning("Could not ask squeue about unanswered submissions: %s", error)
            return None
        return {job.comment: job.job_id for job in found}

    async def _details(self, job_id: str) -> list[JobDetail] | None:
        """scontrol's records of the job (each task of an array), else sacct's; None when
        Slurm could not say."""
        try:
            details = await self._slurm.job_details(job_id)
        except SlurmError as error:
            # Slurm trouble is "unknown for now", never "gone": keep the last state seen.
            log.warning("Could not ask scontrol about job %s: %s", job_id, error)
            return None
        if details:
            return details
        # The controller forgot it (MinJobAge after its end): accounting still knows.
        try:
            return await self._slurm.accounting(job_id)
        except SlurmError as error:
            log.info("No accounting record of job %s: %s", job_id, error)
            return []

    def apply(self, records: Sequence[JobRecord], answers: Answers) -> None:
        """Copy Slurm's answers onto the records (no commit)."""
        for record in records:
            if not record.slurm_job_id:
                if answers.tagged is not None and self._uncertain(record):
                    job_id = answers.tagged.get(record_tag(record, self._settings))
                    if job_id:
                        mark_submitted(record, job_id)
                    else:
                        record.state, record.updated_at = "NOT_SUBMITTED", utcnow()
                continue
            if settled(record.state):
                continue
            info = answers.queue.get(record.slurm_job_id)
            if info is not None:
                apply_info(record, info)
            elif record.slurm_job_id in answers.ended:
                details = answers.ended[record.slurm_job_id]
                if is_array(record):
                    apply_array(record, details)
                else:
                    apply_detail(record, details[0] if details else None)


def apply_info(record: JobRecord, info: JobInfo) -> None:
    """Copy squeue's line of a job still waiting or running onto its record."""
    waiting = info.phase in (Phase.QUEUED, Phase.REQUEUED)
    record.state = info.state
    record.reason = info.reason if waiting else ""
    record.expected_start = time_or_blank(info.start) if waiting else ""
    # Every node of a running multi-node job, not only its batch host.
    record.nodes = "" if waiting else (info.nodes or info.host)
    follow_time_limit(record, info.time_limit)
