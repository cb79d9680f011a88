"""Job records kept in step with Slurm by one loop: each step one read of every job's state (the
hub's reader's too: gpuportal_adapters.queue_reader) for the records of those the portal tagged
(notebook sessions, their Dask workers, batch jobs) and of the users' own while they have a
session, scontrol for those that ended, new sessions and own jobs recorded
(gpuportal_portal.session_history), and every live record brought up to date.

Routes only read the records. A route that has just changed a job (a cancel) asks for a step
and waits for it (`JobWatcher.look_now`), so its answer says what Slurm says now. No database
session is open while Slurm is asked, and the database is used from a worker thread, never on
the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio.to_thread
from sqlalchemy import select

from gpuportal_adapters.queue_reader import QueueReader
from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_core.jobs import JobDetail, JobInfo, array_summary
from gpuportal_core.slurm_time import time_limit_hms, time_or_blank
from gpuportal_core.states import FINAL_STATES, Phase, phase_of
from gpuportal_core.tags import parse_tag
from gpuportal_portal.background import repeat
from gpuportal_portal.db import Database
from gpuportal_portal.job_service import mark_submitted, record_tag, settled
from gpuportal_portal.models import JobRecord, aware_utc, utcnow
from gpuportal_portal.session_history import (
    forget_old_removals,
    own_job_candidates,
    record_own_jobs,
    record_sessions,
)
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
    """What a step needs of one live record: its job id, or the tag of a submission that
    sbatch never answered."""

    record_id: int
    job_id: str = ""
    array: bool = False
    tag: str = ""
    # A session already ended when the step first saw it (one shorter than the interval): its
    # times and exit code are read from scontrol once, though its state is final.
    first_seen: bool = False


@dataclass
class Answers:
    """What Slurm said. A job id in neither `queue` nor `ended` got no answer (Slurm trouble):
    its record keeps its last state, for unknown is never gone."""

    queue: dict[str, JobInfo] = field(default_factory=dict)
    # scontrol's (or sacct's) records of jobs no longer queued or running: [] when Slurm has
    # forgotten the job entirely.
    ended: dict[str, list[JobDetail]] = field(default_factory=dict)
    # Tag -> job id of every tagged job Slurm lists.
    tagged: dict[str, str] = field(default_factory=dict)


class JobWatcher:
    """Keeps every live job record in step with Slurm, whoever looks at it and however often:
    `run_forever` steps every `every` seconds (or at once when a route asks, `look_now`)."""

    def __init__(
        self,
        database: Database,
        slurm: SlurmClient,
        *,
        settings: PortalSettings,
        every: float,
        queue: QueueReader | None = None,
    ) -> None:
        self._database = database
        self._slurm = slurm
        # Every job's state, read with the hub (gpuportal_adapters.queue_reader).
        self._queue = queue or QueueReader(slurm)
        # A route's look_now asks for a read started after it asked; the loop's own steps take
        # one at most half a step old (the hub's, if it read meanwhile).
        self._fresh_after = 0.0
        self._settings = settings
        self._every = every
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._running = False
        # Routes waiting for a step that starts after they asked (look_now).
        self._waiters: list[asyncio.Future[None]] = []
        # A submission still in flight is not "uncertain" yet: give sbatch its whole timeout.
        self._settle_after = 3 * settings.slurm_timeout

    async def run_forever(self) -> None:
        """The portal's one loop over job states (started with the app)."""
        self._running = True
        try:
            await repeat(
                self.step,
                every=self._every,
                done="Recorded %d new session(s) in the job history",
                what="bring job records up to date with Slurm",
                wake=self._wake,
            )
        finally:
            self._running = False

    async def look_now(self, timeout: float | None = None) -> None:
        """Wait for a step that starts after this call: a route's answer after it changed a
        job. Without the loop running (a portal that watches nothing), the step runs here."""
        self._fresh_after = time.time()
        if not self._running:
            await self.step()
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._wake.set()
        with contextlib.suppress(TimeoutError):
            # Slurm asked at most twice per job: squeue, then scontrol.
            await asyncio.wait_for(waiter, timeout or 3 * self._settings.slurm_timeout)

    async def step(self) -> int:
        """One look at Slurm for every live record; how many new sessions it recorded."""
        async with self._lock:
            waiters, self._waiters = self._waiters, []
            try:
                return await self._step()
            finally:
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(None)

    async def _step(self) -> int:
        try:
            read = await self._queue.read(max_age=self._every / 2, newer_than=self._fresh_after)
        except (SlurmError, OSError) as error:
            # Slurm trouble is "unknown for now", never "gone": every record keeps its state.
            log.warning("Could not ask squeue about jobs: %s", error)
            return 0
        queue = list(read.jobs.values())
        own = await anyio.to_thread.run_sync(self._own_jobs, queue)
        names = await self._slurm.job_names(job.job_id for job in own) if own else {}
        jobs = [job for job in queue if parse_tag(job.comment) is not None]
        added, wanted = await anyio.to_thread.run_sync(self._record_and_list, jobs, own, names)
        # The users' own jobs are followed as the tagged ones are, from the same squeue.
        answers = await self.look(wanted, queue)
        await anyio.to_thread.run_sync(self._apply_and_commit, answers, wanted)
        return added

    def _own_jobs(self, queue: list[JobInfo]) -> list[JobInfo]:
        with self._database.sessions() as session:
            return own_job_candidates(session, queue)

    def _record_and_list(
        self, jobs: list[JobInfo], own: list[JobInfo], names: dict[str, str]
    ) -> tuple[int, list[Wanted]]:
        """New sessions (and users' own jobs) recorded, and what the step must ask about (a
        worker thread)."""
        with self._database.sessions() as session:
            added = record_sessions(session, jobs, hub_id=self._settings.hub_id)
            added += record_own_jobs(session, own, names)
            forget_old_removals(session)
            session.commit()
            live = session.scalars(select(JobRecord).where(JobRecord.state.notin_(FINAL_STATES)))
            ended = [
                Wanted(record_id=r.id, job_id=r.slurm_job_id, first_seen=True)
                for r in added
                if settled(r.state)
            ]
            return len(added), self.wanted(list(live)) + ended

    def wanted(self, records: Sequence[JobRecord]) -> list[Wanted]:
        wanted = [
            Wanted(record_id=r.id, job_id=r.slurm_job_id, array=is_array(r))
            for r in records
            if r.slurm_job_id and not settled(r.state)
        ]
        wanted += [
            Wanted(record_id=r.id, tag=record_tag(r, self._settings))
            for r in records
            if self._uncertain(r)
        ]
        return wanted

    def _uncertain(self, record: JobRecord) -> bool:
        if record.slurm_job_id or record.state != "SUBMITTING":
            return False
        return (utcnow() - aware_utc(record.updated_at)).total_seconds() > self._settle_after

    async def look(self, wanted: list[Wanted], jobs: list[JobInfo]) -> Answers:
        """Slurm's answers for the jobs wanted, given squeue's lines of every job: a job
        squeue no longer shows as waiting or running is asked of scontrol."""
        seen = {job.job_id: job for job in jobs}
        answers = Answers(tagged={job.comment: job.job_id for job in jobs if job.comment})
        for job in wanted:
            if not job.job_id:
                continue
            info = seen.get(job.job_id)
            # An array's tasks each have their own line and id: scontrol reads them all.
            if not job.array and info is not None and phase_of(info.state) is not Phase.ENDED:
                answers.queue[job.job_id] = info
                continue
            details = await self._details(job.job_id)
            if details is not None:
                answers.ended[job.job_id] = details
        return answers

    async def _details(self, job_id: str) -> list[JobDetail] | None:
        """scontrol's records of the job (each task of an array), else sacct's; None when
        Slurm could not say."""
        try:
            details = await self._slurm.job_details(job_id)
        except (SlurmError, OSError) as error:
            # Slurm trouble is "unknown for now", never "gone": keep the last state seen.
            log.warning("Could not ask scontrol about job %s: %s", job_id, error)
            return None
        if details:
            return details
        # The controller forgot it (MinJobAge after its end): accounting still knows.
        try:
            return await self._slurm.accounting(job_id)
        except (SlurmError, OSError) as error:
            log.info("No accounting record of job %s: %s", job_id, error)
            return []

    def _apply_and_commit(self, answers: Answers, wanted: list[Wanted]) -> None:
        """The answers onto the records as they are now (a worker thread): a record removed
        meanwhile is left out."""
        if not wanted:
            return
        first_seen = {w.record_id for w in wanted if w.first_seen}
        with self._database.sessions() as session:
            query = select(JobRecord).where(JobRecord.id.in_([w.record_id for w in wanted]))
            self.apply(list(session.scalars(query)), answers, first_seen=first_seen)
            session.commit()

    def apply(
        self,
        records: Sequence[JobRecord],
        answers: Answers,
        *,
        first_seen: frozenset[int] | set[int] = frozenset(),
    ) -> None:
        """Copy Slurm's answers onto the records (no commit)."""
        for record in records:
            if not record.slurm_job_id:
                if self._uncertain(record):
                    job_id = answers.tagged.get(record_tag(record, self._settings))
                    if job_id:
                        mark_submitted(record, job_id)
                    else:
                        record.state, record.updated_at = "NOT_SUBMITTED", utcnow()
                continue
            if settled(record.state) and record.id not in first_seen:
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
