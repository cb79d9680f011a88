"""Job records kept in step with Slurm: one squeue for all live jobs, scontrol for ended ones,
and the tag for submissions sbatch never answered."""

from __future__ import annotations

import asyncio
import logging
import time

from sqlalchemy.orm import Session

from core.jobs import JobDetail, array_summary
from core.slurm import SlurmClient, SlurmError
from core.slurm_time import time_limit_hms, time_or_blank
from core.states import Phase, phase_of
from portal.job_service import aware_utc, mark_submitted, record_tag, settled
from portal.models import JobRecord, utcnow
from portal.settings import PortalSettings

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
    state for the whole (core.jobs.array_summary)."""
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

    async def refresh(self, session: Session, records: list[JobRecord]) -> None:
        live = [r for r in records if r.slurm_job_id and not settled(r.state)]
        unsure = [r for r in records if self._uncertain(r)]
        if not live and not unsure:
            return
        async with self._lock:
            if time.monotonic() - self._last < self._min_interval:
                return
            self._last = time.monotonic()
            if unsure:
                await self._settle(unsure)
            if not live:
                session.commit()
                return
            # An array's tasks each have their own line and id: scontrol reads them all.
            for record in [r for r in live if is_array(r)]:
                await self._update_array(record)
            live = [r for r in live if not is_array(r)]
            try:
                seen = await self._slurm.jobs(r.slurm_job_id for r in live)
            except SlurmError as error:
                log.warning("Could not ask squeue about jobs: %s", error)
                session.commit()
                return
            for record in live:
                info = seen.get(record.slurm_job_id)
                if info is not None and phase_of(info.state) is not Phase.ENDED:
                    waiting = info.phase in (Phase.QUEUED, Phase.REQUEUED)
                    record.state = info.state
                    record.reason = info.reason if waiting else ""
                    record.expected_start = time_or_blank(info.start) if waiting else ""
                    # Every node of a running multi-node job, not only its batch host.
                    record.nodes = "" if waiting else (info.nodes or info.host)
                    follow_time_limit(record, info.time_limit)
                else:
                    # Ended (or gone): scontrol has the exit code and the times.
                    await self._update_from_scontrol(record)
            session.commit()

    def _uncertain(self, record: JobRecord) -> bool:
        if record.slurm_job_id or record.state != "SUBMITTING":
            return False
        return (utcnow() - aware_utc(record.updated_at)).total_seconds() > self._settle_after

    async def _settle(self, records: list[JobRecord]) -> None:
        """Records whose sbatch never answered: the job carrying the tag, or none at all."""
        try:
            found = await self._slurm.tagged(alive_only=False)
            tagged = {job.comment: job.job_id for job in found}
        except SlurmError as error:
            log.warning("Could not ask squeue about unanswered submissions: %s", error)
            return
        for record in records:
            job_id = tagged.get(record_tag(record, self._settings))
            if job_id:
                mark_submitted(record, job_id)
            else:
                record.state, record.updated_at = "NOT_SUBMITTED", utcnow()

    async def _update_from_scontrol(self, record: JobRecord) -> None:
        try:
            detail = await self._slurm.job_detail(record.slurm_job_id)
        except SlurmError as error:
            # Slurm trouble is "unknown for now", never "gone": keep the last state seen.
            log.warning("Could not ask scontrol about job %s: %s", record.slurm_job_id, error)
            return
        if detail is None:
            # The controller forgot it (MinJobAge after its end): accounting still knows.
            detail = next(iter(await self._from_accounting(record)), None)
        apply_detail(record, detail)

    async def _update_array(self, record: JobRecord) -> None:
        try:
            details = await self._slurm.job_details(record.slurm_job_id)
        except SlurmError as error:
            log.warning("Could not ask scontrol about array %s: %s", record.slurm_job_id, error)
            return
        apply_array(record, details or await self._from_accounting(record))

    async def _from_accounting(self, record: JobRecord) -> list[JobDetail]:
        """sacct's record of a job the controller forgot; none where there is no accounting."""
        try:
            return await self._slurm.accounting(record.slurm_job_id)
        except SlurmError as error:
            log.info("No accounting record of job %s: %s", record.slurm_job_id, error)
            return []

    async def refresh_one(self, session: Session, record: JobRecord) -> None:
        if not record.slurm_job_id or settled(record.state):
            return
        if is_array(record):
            await self._update_array(record)
        else:
            await self._update_from_scontrol(record)
        session.commit()
