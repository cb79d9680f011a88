"""A notebook session's Slurm job as the hub sees it: found by its tag, polled, stopped.

The half of the spawner that every server needs after its job exists (poll, stop, state); the
start and the wait for JupyterLab are in gpuportal_spawner.slurm_spawner.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

from gpuportal_adapters.poller import JobPoller
from gpuportal_adapters.queue_reader import QueueReader
from gpuportal_adapters.slurm import SlurmClient, SlurmError, SlurmUnavailable
from gpuportal_core.culling import CullLimits, GpuUse, Reason
from gpuportal_core.jobs import JobInfo
from gpuportal_core.lifecycle import QUIET, Do, Event, Seen, Session, Stage, Step, poll_answer
from gpuportal_core.states import Phase
from gpuportal_core.tags import dask_tag as worker_tag
from gpuportal_core.tags import session_tag
from gpuportal_spawner.audit import audit, stop_requested_by
from gpuportal_spawner.errors import spawn_error
from gpuportal_spawner.hub_state import hub_state
from gpuportal_spawner.job_files import JobFiles
from gpuportal_spawner.metrics import CULLS
from gpuportal_spawner.session_settings import SessionJobSettings
from gpuportal_spawner.unused_traits import refuse_unused

# How long a poll waits for a running JupyterLab to accept a connection before the session is
# called unreachable (a connect on a healthy network takes well under a millisecond).
LAB_PROBE_S = 3.0
# How often a stop looks whether its job has ended, through the hub's shared poller: the stops
# under way at once (300 at the end of a course) share one squeue a round instead of one each.
STOP_CHECK_S = 0.5
# How long a poll waits for a fresh look at a job it has seen before (see _look).
POLL_WAIT_S = 1.0


async def _knock(host: str, port: int, timeout: float) -> str:
    """One TCP connect, no bytes sent (a TLS server closes it without a word in its log):
    "accepted", "refused" (the node is there, nothing listens) or "silent" (a timeout, or no
    route to it)."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except ConnectionRefusedError:
        return "refused"
    except (OSError, TimeoutError):
        return "silent"
    writer.close()
    return "accepted"


async def lab_answers(host: str, port: int, timeout: float) -> bool:
    """Whether JupyterLab accepts a connection there within `timeout`."""
    return await _knock(host, port, timeout) == "accepted"


async def node_answers(host: str, port: int, timeout: float) -> bool:
    """Whether the node answers over the network at all: a refusal counts (JupyterLab is
    starting, or has stopped, which Slurm tells); only silence is a network fault."""
    return await _knock(host, port, timeout) != "silent"


class SessionJob(SessionJobSettings):
    """The job of one server: the Slurm boundary, its files, poll, stop and saved state."""

    # batchspawner's trait (its classes are Any to mypy): "" while the server has no job.
    job_id: str

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        refuse_unused(self.config)
        self._port_ready = asyncio.Event()
        self._info: JobInfo | None = None
        self._queued_since = time.monotonic()  # for "waiting N min so far"
        self._was_unreachable = False  # the last check could not reach JupyterLab's node
        # The session's stage and what the user is told of it (the spawn-pending page while
        # it starts, the home page once it is suspended, requeued or ended):
        # gpuportal_core.lifecycle.
        self.session = Session()
        # Whether a job of this server may exist that it does not know the id of: a spawn that
        # failed before trying sbatch (the scheduler did not answer its ping) made none, and its
        # stop and poll need not ask a silent Slurm (20 s each) for one.
        self.may_have_a_job = True
        # Culling (gpuportal_core.culling): the profile's limits, the session's last GPU reading,
        # and the rule the idle culler was told is due (with when), which the next stop reports.
        self.cull_limits = CullLimits()
        self.gpu_use: GpuUse | None = None
        self.cull_mark: tuple[Reason, float] | None = None
        # Under internal TLS: the session's key and certificate and the CAs, by the path the
        # job reads them at, from move_certs until the token's hand-over writes them.
        self.tls_texts: dict[str, str] = {}

    @property
    def stage(self) -> Stage:
        return self.session.stage

    @property
    def note(self) -> str:
        return self.session.note

    @property
    def progress_percent(self) -> int:
        return self.session.progress

    @property
    def tag(self) -> str:
        return str(session_tag(hub=self.hub_id, user=self.user.name, server=self.name))

    @property
    def dask_tag(self) -> str:
        """The tag of the Dask workers this session's notebooks start (gpuportal_session.dask_setup
        puts it on them): its stop cancels them with its own job."""
        return str(worker_tag(hub=self.hub_id, user=self.user.name, server=self.name))

    # -- the Slurm boundary -------------------------------------------------------------

    @property
    def slurm(self) -> SlurmClient:
        return SlurmClient(
            run_as=self.run_as, timeout=self.slurm_timeout, bin_dir=self.slurm_bin_dir
        )

    @property
    def poller(self) -> JobPoller:
        # One poller per Slurm configuration, shared by every spawner of this hub.
        pollers = hub_state(self.user).pollers
        key = (tuple(self.run_as), self.slurm_timeout, self.slurm_bin_dir, self.queue_file)
        if key not in pollers:
            shared = Path(self.queue_file) if self.queue_file else None
            pollers[key] = JobPoller(QueueReader(self.slurm, shared=shared))
        return pollers[key]

    async def _ask(self, max_age: float, job_id: str | None = None) -> Seen:
        """Slurm's word on the job (job_id: the one this look is for, bound when a look is
        made to go on in the background: a stop meanwhile clears self.job_id, and an empty id
        once reached the shared poller and failed every look of every server)."""
        job_id = self.job_id if job_id is None else job_id
        try:
            info = await self.poller.job(job_id, max_age=max_age)
        except SlurmUnavailable as error:
            self.log.warning("Job %s: Slurm not answering (%s)", job_id, error.message)
            return Seen(Event.SLURM_SILENT)
        if job_id == self.job_id:  # a look that outlived its job changes nothing
            self._info = info
        return Seen(Event.SLURM, info, port_known=self._port_ready.is_set())

    async def job_now(self, *, max_age: float, job_id: str | None = None) -> JobInfo | None:
        """The job as the shared poller saw it within max_age s (asked afresh if older); while
        Slurm is silent, the last answer (the session card says what it knew)."""
        job_id = self.job_id if job_id is None else job_id
        with contextlib.suppress(SlurmUnavailable):
            info = await self.poller.job(job_id, max_age=max_age)
            if job_id == self.job_id:
                self._info = info
        return self._info

    async def job_within(self, seconds: float, *, max_age: float) -> JobInfo | None:
        """As job_now, but a page never waits longer than `seconds` for it: then the last
        answer, and the look goes on for the next page. During a burst of 300 spawns the
        poller's squeue waited its turn behind the sbatch calls and home pages took up to 21 s
        (bench/scale.py)."""
        look = asyncio.shield(self.job_now(max_age=max_age, job_id=self.job_id))
        try:
            return await asyncio.wait_for(look, seconds)
        except TimeoutError:
            return self._info

    def _advance(self, seen: Seen, *, hub_check: bool = False) -> Step:
        before = self.stage
        result = self.session.advance(seen, job_id=self.job_id, hub_check=hub_check)
        if result.stage is not before:
            self.log.info(
                "Job %s of %s: %s -> %s", self.job_id or "-", self.user.name, before, result.stage
            )
        return result

    async def _own_jobs(self) -> list[JobInfo]:
        """The live jobs carrying this server's tag; a spawn-time error if Slurm is silent.
        A read started now, not one under way for the stops: a server started again right after
        its stop must not see its cancelled job as still queued and take it over."""
        try:
            return await self.poller.tagged.of(
                self.user.name, self.tag, max_age=0.0, newer_than=time.time()
            )
        except SlurmUnavailable as error:
            raise scheduler_silent(error) from None

    # -- the job's files: its log and the token hand-over ----------------------------------

    @property
    def files(self) -> JobFiles:
        return JobFiles(
            self.slurm,
            user=self.user.name,
            server=self.name,
            log_dir_template=self.log_dir,
            hub=self.hub_id,
        )

    async def _hand_over_token(self, log_dir: str) -> None:
        """Write this spawn's hub token where only the user (and so the job) can read it."""
        try:
            await self.files.write_token(log_dir, self.api_token, beside=self.tls_texts)
        except OSError as error:
            raise spawn_error(str(error), reason="log_dir", status_code=500) from None
        except SlurmUnavailable:  # the write, as the user through sudo, did not end in time
            raise spawn_error(
                "The login host is too busy to prepare your session just now; please try "
                "again in a minute.",
                reason="busy",
                status_code=503,
            ) from None
        self.tls_texts = {}  # the key is in the user's file now; the hub keeps no copy

    def get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = super().get_state()
        if self.job_id:
            state["stage"] = self.stage.value
            state["cull_limits"] = self.cull_limits.as_state()
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)
        # "reachable": the state the previous release saved for a server that was up.
        self.session = Session.restored(
            state.get("stage") or ("ready" if state.get("reachable") else None)
        )
        self.cull_limits = CullLimits.from_state(state.get("cull_limits"))

    def clear_state(self) -> None:
        super().clear_state()
        self.session = Session()
        self.gpu_use, self.cull_mark = None, None

    async def poll(self) -> int | None:
        return await self.poll_session()

    async def poll_session(self, *, hub_check: bool = False) -> int | None:
        """The hub's poll, carried out by the lifecycle (hub_check: the hub is starting up)."""
        said = self.note
        result = self._advance(await self._look(hub_check=hub_check), hub_check=hub_check)
        if result.stage is Stage.READY and result.do is Do.KEEP and not hub_check:
            result = await self._check_reachable(said)
        if result.do is Do.DETACH:
            self.log.info(
                "Job %s was starting when the hub stopped; kept for the resume", self.job_id
            )
        elif result.do is Do.CANCEL:
            await self._cancel(self.job_id)
        if result.do in (Do.END, Do.CANCEL, Do.FAIL) and self.job_id:
            self.log.info("%s: %s", self.tag, result.message)
            info = self._info
            audit(
                "stop",
                user=self.user.name,
                server=self.name,
                job=self.job_id,
                why=result.message or "the job ended",
                slurm_state=info.state if info is not None else "gone",
            )
            await self._forget()
        return poll_answer(result)

    async def _look(self, *, hub_check: bool = False) -> Seen:
        """What a poll knows of the job: Slurm's answer, found by id or else by its tag."""
        if self.stage in QUIET:
            return Seen(Event.NOT_ASKED)
        if not self.job_id:
            if not self.may_have_a_job:
                return Seen(Event.NO_JOB)
            # A spawn stopped before sbatch answered, or a hub that stopped before it saved the
            # job id: the tag finds the job if there is one.
            try:
                jobs = await self.poller.tagged.of(self.user.name, self.tag, max_age=0.0)
            except SlurmUnavailable:
                return Seen(Event.SLURM_SILENT)
            if not jobs:
                return Seen(Event.NO_JOB)
            self.job_id = jobs[0].job_id
        if hub_check or self._info is None:
            return await self._ask(self.poll_max_age)
        # JupyterHub polls on every home page load too: a page waits POLL_WAIT_S at most for a
        # busy Slurm, then the last answer stands until the next poll (the look goes on).
        look = asyncio.shield(self._ask(self.poll_max_age, self.job_id))
        try:
            return await asyncio.wait_for(look, POLL_WAIT_S)
        except TimeoutError:
            return Seen(Event.SLURM, self._info, port_known=self._port_ready.is_set())

    async def _check_reachable(self, said: str) -> Step:
        """Slurm says the job runs: can the hub reach its node over the network? (`said`: the
        note before this poll, to log a change once.)"""
        info = self._info
        if info is None or not info.host or not self.port:
            return Step(self.stage, Do.KEEP, self.note)
        reached = await node_answers(info.host, self.port, LAB_PROBE_S)
        result = self._advance(Seen(Event.LAB_ANSWERED if reached else Event.LAB_UNREACHABLE, info))
        if not reached and result.message != said:
            self.log.warning("%s: %s", self.tag, result.message)
        elif reached and self._was_unreachable:
            # Only after it was not: every first check of a new session answered "again".
            self.log.info("%s: %s answers again", self.tag, info.host)
        self._was_unreachable = not reached
        return result

    async def _forget(self) -> None:
        self.poller.untrack(self.job_id)
        await self.files.remove_token()

    async def _cancel(self, job_id: str) -> bool:
        """scancel, retried while Slurm is silent; False if the job may still run."""
        delay = 0.5
        for attempt in range(5):
            try:
                await self.slurm.cancel(job_id, user=self.user.name)
                return True
            except SlurmUnavailable as error:
                self.log.warning("scancel %s failed (try %d): %s", job_id, attempt + 1, error)
                await asyncio.sleep(delay)
                delay *= 2
            except SlurmError as error:
                # Slurm refuses: the job has ended already (or was never the user's).
                self.log.warning("scancel %s: %s", job_id, error.message)
                return True
        self.log.error("Job %s could not be cancelled; it ends at its time limit", job_id)
        return False

    async def stop(self, now: bool = False) -> None:
        asked = stop_requested_by(self.user.name, self.name)  # taken even if nothing is left
        culled = self._culled()
        limit = self.cull_limits.limit(culled) if culled is not None else 0
        if self._advance(Seen(Event.STOP, culled=culled, limit=limit)).do is Do.LET_GO:
            return  # handed over at a hub start-up: the job is the resume's (see poll_session)
        job_ids = {self.job_id} if self.job_id else set()
        if job_ids or self.may_have_a_job:
            with contextlib.suppress(SlurmUnavailable):
                # A submission still in flight when the stop came is found by its tag; the
                # session's Dask workers by theirs, so that none outlives it.
                # One squeue shared by the stops under way at once (300 at the end of a course).
                tagged = self.poller.tagged.of(
                    self.user.name, self.tag, self.dask_tag, max_age=STOP_CHECK_S
                )
                job_ids |= {job.job_id for job in await tagged}
        if culled is not None:
            CULLS.labels(culled.value).inc()
        if job_ids:
            audit(
                "stop",
                user=self.user.name,
                server=self.name,
                job=",".join(sorted(job_ids)),
                why=f"culled: {culled.value}" if culled is not None else "stopped on the hub",
                **({"by": "culler" if culled is not None else "hub"} | asked),
            )
        left_running = []
        for job_id in sorted(job_ids):
            self.log.info("Stopping job %s (%s)", job_id, self.tag)
            if not await self._cancel(job_id):
                left_running.append(job_id)
        if not now:
            await self._wait_gone(job_ids)
        await self._forget()
        # What stays said of the stopped session (the card, the home page) comes from the
        # lifecycle: why the portal ended it, or that its job could not be cancelled.
        done = Seen(Event.CANCELLED, culled=culled, limit=limit, left_running=tuple(left_running))
        self._advance(done)

    def _culled(self) -> Reason | None:
        """The cull rule behind this stop: one the culler was told of in the last 5 minutes
        (its DELETE follows at once), or the queue limit, which the spawner applies itself."""
        mark, self.cull_mark = self.cull_mark, None
        if mark is None or time.time() - mark[1] > 300:
            return None
        return mark[0]

    async def _wait_gone(self, job_ids: set[str]) -> None:
        """Until Slurm says every job ended (or forgot it), 10 s at most."""
        try:
            for look in range(20):
                # The first look is fresh (a queued job is gone at once: a lone stop ends
                # then); the next ones share the poller's answer with the other stops.
                max_age = STOP_CHECK_S if look else 0.0
                seen = [await self.poller.job(job_id, max_age=max_age) for job_id in job_ids]
                if all(info is None or info.phase is Phase.ENDED for info in seen):
                    return
                await asyncio.sleep(STOP_CHECK_S)
        except SlurmUnavailable:
            return
        finally:
            for job_id in job_ids:
                self.poller.untrack(job_id)


def scheduler_silent(error: SlurmError) -> Exception:
    return scheduler_silent_for(error.message)


def scheduler_silent_for(detail: str) -> Exception:
    error: Exception = spawn_error(
        f"The scheduler is not answering ({detail}); try again in a minute.",
        reason="slurm_unavailable",
        status_code=503,
    )
    return error
