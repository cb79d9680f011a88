"""Multi-node jobs: check, render, submit as the user, and follow them in Slurm.

Submission runs `sbatch` as the requesting user (sudo -u USER, argv, no shell), never as the
portal's own account. The record is written before sbatch runs, so a retried request with the
same idempotency key finds it instead of submitting a second job.
"""

from __future__ import annotations

import asyncio
import logging
import pwd
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from gpuportal_adapters.image_archive import archive_problem
from gpuportal_adapters.slurm import SlurmClient, SlurmError, SlurmUnavailable
from gpuportal_core.batch import (
    BatchJob,
    BatchJobError,
    Container,
    render_batch_script,
    split_command,
)
from gpuportal_core.environments import EnvironmentSpecError, SoftwareEnvironment
from gpuportal_core.slurm_time import format_runtime, parse_runtime, slurm_time_with_zone
from gpuportal_core.states import job_state
from gpuportal_core.tags import batch_tag
from gpuportal_core.words import count
from gpuportal_portal import crud, db
from gpuportal_portal.audit_stream import audit
from gpuportal_portal.cluster import PartitionCatalog
from gpuportal_portal.job_environments import SiteEnvironment, job_environment, site_environments
from gpuportal_portal.job_output import OutputFolders
from gpuportal_portal.job_schemas import JobCreate
from gpuportal_portal.metrics import JOB_SUBMISSIONS
from gpuportal_portal.models import JobRecord, aware_utc, utcnow
from gpuportal_portal.profile_rules import Problem, no_such_kind
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.settings import PortalSettings

log = logging.getLogger(__name__)


def settled(state: str) -> bool:
    """Nothing will change any more (gpuportal_core.states): the record need not be asked again.

    NODE_FAIL and PREEMPTED are not settled: Slurm requeues such jobs by default, so their
    records keep being refreshed and can still be cancelled.
    """
    return job_state(state).final


class JobRejected(Exception):
    """Slurm refused the job; the message is Slurm's own."""


class IdempotencyMismatch(Exception):
    """The key was used before for a different request."""


@dataclass(frozen=True)
class Submitted:
    record: JobRecord
    created: bool


def _home(user: str) -> str:
    return pwd.getpwnam(user).pw_dir


def build_job(
    data: JobCreate,
    *,
    user: str,
    home: str,
    settings: PortalSettings,
    site: Sequence[SiteEnvironment] = (),
) -> BatchJob:
    """The checked core job for a request; BatchJobError names the field that is wrong.
    `site`: the site's environments, where a launcher's program is looked for."""
    environment = None
    chosen = job_environment(data, site)
    if chosen is not None:
        try:
            environment = SoftwareEnvironment(
                slug="job",
                title="job",
                kind=chosen.kind,
                prefix=chosen.prefix,
                modules=tuple(chosen.modules),
            )
        except EnvironmentSpecError as error:
            raise BatchJobError("environment", error.message) from None
    container = Container(data.container.kind, data.container.image) if data.container else None
    if container is not None and container.kind == "podman" and container.image.startswith("/"):
        # The archive looked into as the environments page does (cached per version of it).
        problem = archive_problem(container.image)
        if problem:
            raise BatchJobError("container", problem)
    script = data.script
    command = split_command(data.command) if data.command.strip() else ()
    if not command and not script:
        raise BatchJobError("command", "give a command to run, or a script")
    workdir = data.workdir or (home if command else script.rsplit("/", 1)[0] or "/")
    cores_per_gpu, mem_per_gpu_gb = settings.per_gpu(data.gpu_type)
    return BatchJob(
        user=user,
        name=data.name,
        launcher=data.launcher,
        nodes=data.nodes,
        gpus_per_node=data.gpus_per_node,
        gpu_type=data.gpu_type,
        cores_per_gpu=cores_per_gpu,
        mem_per_gpu_gb=mem_per_gpu_gb,
        runtime=parse_runtime(data.runtime),
        partition=data.partition or settings.default_partition,
        script=script,
        args=tuple(data.args),
        workdir=workdir,
        # An array's tasks each write their own file: name-ARRAYID_TASK.out.
        output=settings.job_output_dir.format(home=home)
        + ("/%x-%A_%a.out" if data.array.strip() else "/%x-%j.out"),
        environment=environment,
        container=container,
        allowed_roots=(home, *settings.project_roots),
        command=command,
        array=data.array.strip(),
        session_venv=settings.session_venv,
    )


async def check_against_cluster(job: BatchJob, catalog: PartitionCatalog) -> list[Problem]:
    partitions = await catalog.partitions()
    partition = partitions.get(job.partition)
    if partition is None:
        known = ", ".join(sorted(partitions)) or "none"
        return [
            Problem("partition", f"no partition {job.partition!r} on the cluster; known: {known}")
        ]
    problems = []
    kind = job.gpu_type
    fit = partition.fit(
        gpus=job.gpus_per_node,
        cores_per_gpu=job.cores_per_gpu,
        mem_per_gpu_gb=job.mem_per_gpu_gb,
        runtime=job.runtime,
        gpu_type=kind,
    )
    if fit.no_such_kind:
        problems.append(Problem("gpu_type", no_such_kind(partition, kind)))
    elif fit.too_many_gpus:
        problems.append(
            Problem(
                "gpus_per_node",
                f"the nodes of partition {job.partition} have at most "
                f"{count(partition.max_gpus_of(kind), f'{kind} GPU' if kind else 'GPU')}",
            )
        )
    elif job.nodes > fit.nodes_that_fit:
        fitting = fit.nodes_that_fit
        problems.append(
            Problem(
                "nodes",
                f"partition {job.partition} has {fitting} "
                f"node{'' if fitting == 1 else 's'} that can hold {job.gpus_per_node} "
                f"GPU{'' if job.gpus_per_node == 1 else 's'} each; asked for {job.nodes}",
            )
        )
    if fit.over_max_time and partition.max_time is not None:
        problems.append(
            Problem(
                "runtime",
                f"is over partition {job.partition}'s MaxTime of "
                f"{format_runtime(partition.max_time)}",
            )
        )
    return problems


async def check_paths(
    slurm: SlurmClient, job: BatchJob, *, workdir_given: bool = True
) -> list[Problem]:
    """What the job will look for when it runs, looked for now, as the user (home folders may
    be root-squashed NFS): its working directory, and its script, readable, and executable
    unless Python runs it. A check that cannot run (sudo, a slow file server) is skipped:
    Slurm's own error then says it, as before.

    A working directory the user left empty is the script's folder: when that folder is not
    there, the one mistake is the script's path, said once, at the script."""
    workdir_field = "workdir" if workdir_given or not job.script else "script"
    checks = [(workdir_field, ["test", "-d", job.workdir, "-a", "-x", job.workdir])]
    if job.script:
        checks.append(("script", ["test", "-f", job.script, "-a", "-r", job.script]))
        if not job.script.endswith(".py"):
            checks.append(("script", ["test", "-x", job.script]))
    problems: list[Problem] = []
    for field, argv in checks:
        if any(problem.field == field for problem in problems):
            continue
        try:
            result = await slurm.run_as_user(job.user, argv)
        except (SlurmError, OSError) as error:
            log.warning("Could not check %s of %s's job: %s", field, job.user, error)
            continue
        if result.returncode != 0:
            problems.append(Problem(field, _missing(field, argv, job)))
    return problems


def _missing(field: str, argv: list[str], job: BatchJob) -> str:
    if argv[1] == "-d" and field == "script":
        return f"there is no folder {job.workdir} that you can use; check the script's path"
    if field == "workdir":
        return f"{job.workdir} is not a folder you can use; make it first, or leave this empty"
    if argv[1] == "-x":
        return (
            f"{job.script} is not executable: run `chmod +x {job.script}`, or give a .py "
            "script (run with Python)"
        )
    return f"there is no file {job.script} that you can read; check the path"


async def prepare(
    data: JobCreate,
    *,
    user: str,
    settings: PortalSettings,
    catalog: PartitionCatalog,
    slurm: SlurmClient | None = None,
    home: str | None = None,
    site: Sequence[SiteEnvironment] = (),
) -> tuple[BatchJob, str]:
    """The checked job and its script; RuleViolation if anything is wrong. Submits nothing.
    With `slurm`, the job's folder and script are looked for as the user too."""
    if home is None:
        home = await asyncio.to_thread(_home, user)
    try:
        # In a thread: a podman archive is looked into (seconds, the first time).
        job = await asyncio.to_thread(
            build_job, data, user=user, home=home, settings=settings, site=site
        )
    except BatchJobError as error:
        raise RuleViolation([Problem(error.field, error.message)]) from None
    problems = await check_against_cluster(job, catalog)
    if slurm is not None:
        problems += await check_paths(slurm, job, workdir_given=bool(data.workdir))
    if problems:
        raise RuleViolation(problems)
    return job, render_batch_script(job)


def _existing(session: Session, user: str, key: str) -> JobRecord | None:
    query = select(JobRecord).where(JobRecord.user == user, JobRecord.idempotency_key == key)
    return session.scalar(query)


async def submit(
    session: Session,
    *,
    data: JobCreate,
    user: str,
    idempotency_key: str | None,
    settings: PortalSettings,
    catalog: PartitionCatalog,
    slurm: SlurmClient,
    folders: OutputFolders,
) -> Submitted:
    """Check, record and submit the job. Called on the portal's loop: Slurm is awaited there,
    the database and the passwd lookup run in the thread pool, one short step each, so that a
    burst of submits holds no worker thread while sbatch runs."""
    request = data.model_dump(mode="json")
    if idempotency_key:
        earlier = await db.step(session, _existing, user, idempotency_key)
        if earlier is not None:
            if earlier.request != request:
                raise IdempotencyMismatch(idempotency_key)
            return Submitted(earlier, created=False)
    home = await run_in_threadpool(_home, user)  # one passwd lookup for the job and sbatch
    site = site_environments(await db.step(session, crud.list_environments))
    job, script = await prepare(
        data, user=user, settings=settings, catalog=catalog, slurm=slurm, home=home, site=site
    )
    record = JobRecord(
        user=user,
        name=job.name,
        launcher=job.launcher,
        request=request,
        script=script,
        output=job.output.replace("%x", job.name),
        idempotency_key=idempotency_key or None,
    )
    earlier = await db.step(session, _add, record, user, idempotency_key)
    if earlier is not None:
        return Submitted(earlier, created=False)
    tag = record_tag(record, settings)
    try:
        await folders.make(slurm, user, job.output.rsplit("/", 1)[0])
        # Nothing of the portal's environment: sudo gives sbatch the user's HOME, USER and its
        # secure PATH itself (gpuportal_core.sudo_rules).
        job_id = await slurm.submit(script, user=user, env={}, tag=tag)
    except SlurmUnavailable as error:
        # sbatch may have submitted before it was stopped: the tag says (exactly once).
        try:
            found = await slurm.tagged(tag, user=user, alive_only=False)
        except SlurmUnavailable:
            # Maybe submitted, maybe not: keep the record; the watcher settles it by its tag,
            # and a retry with the same key gets this record rather than a second job.
            record.reason = f"sbatch gave no answer ({error.message})"
            await db.step(session, Session.commit)
            JOB_SUBMISSIONS.labels(job.launcher, "uncertain").inc()
            raise SubmissionUncertain(record.id) from None
        if not found:
            await db.step(session, _drop, record)
            JOB_SUBMISSIONS.labels(job.launcher, "slurm_unavailable").inc()
            raise
        job_id = found[0].job_id
    except (SlurmError, OSError) as error:
        await db.step(session, _drop, record)
        JOB_SUBMISSIONS.labels(job.launcher, "refused").inc()
        message = error.message if isinstance(error, SlurmError) else str(error)
        raise JobRejected(message) from None
    mark_submitted(record, job_id)
    await db.step(session, Session.commit)
    JOB_SUBMISSIONS.labels(job.launcher, "submitted").inc()
    log.info("Submitted job %s (%s, %s) for %s", job_id, job.name, job.launcher, user)
    audit(
        "job_submit",
        user=user,
        record=record.id,
        job=job_id,
        name=job.name,
        launcher=job.launcher,
        nodes=job.nodes,
        gpus_per_node=job.gpus_per_node,
        gpu_type=job.gpu_type,
        partition=job.partition,
        array=job.array,
    )
    return Submitted(record, created=True)


def _add(
    session: Session, record: JobRecord, user: str, idempotency_key: str | None
) -> JobRecord | None:
    """Write the record before sbatch runs; None, or the record of the same key that raced in
    from another request (that one submits, this one reports it)."""
    session.add(record)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        earlier = _existing(session, user, idempotency_key or "")
        if earlier is None:
            raise
        return earlier
    return None


class SubmissionUncertain(Exception):
    """sbatch and squeue both gave no answer: the job may or may not have been submitted."""

    def __init__(self, record_id: int) -> None:
        super().__init__(record_id)
        self.record_id = record_id


def record_tag(record: JobRecord, settings: PortalSettings) -> str:
    # The id alone may repeat (a new database, a test's): with the time, no finished job of an
    # earlier record that Slurm still lists can be taken for this one.
    stamp = round(aware_utc(record.submitted_at).timestamp() * 1e6)  # microseconds
    return str(batch_tag(hub=settings.hub_id, user=record.user, key=f"{record.id}.{stamp}"))


def _drop(session: Session, record: JobRecord) -> None:
    # Nothing was submitted: drop the record so that a retry with the key tries again.
    session.delete(record)
    session.commit()


def mark_submitted(record: JobRecord, job_id: str) -> None:
    record.slurm_job_id = job_id
    record.output = record.output.replace("%j", job_id).replace("%A", job_id)
    record.state = "PENDING"
    record.reason = ""
    record.updated_at = utcnow()


def public_fields(record: JobRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "user": record.user,
        "name": record.name,
        "launcher": record.launcher,
        "slurm_job_id": record.slurm_job_id,
        "state": record.state,
        "final": settled(record.state),
        "reason": record.reason,
        "nodes": record.nodes,
        "exit_code": record.exit_code,
        "submitted_at": record.submitted_at,
        # Slurm's times are the cluster's local time without a zone: given with it here.
        "started_at": slurm_time_with_zone(record.started_at),
        "ended_at": slurm_time_with_zone(record.ended_at),
        "expected_start": slurm_time_with_zone(record.expected_start),
        "tasks": record.tasks,
        "request": record.request,
        "script": record.script,
        "use_state": use_state(record),
    }


def use_state(record: JobRecord) -> str:
    """What is known of what an ended job used: "known", "pending" (not read from Slurm's
    accounting yet), "none" (the accounting has no record of it); "" while it runs. The jobs
    page asks GET .../use only once known (it asked too early and got 404s)."""
    if not settled(record.state):
        return ""
    if record.use is None:
        return "pending"
    return "none" if record.use.get("recorded") is False else "known"
