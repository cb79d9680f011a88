"""A job request checked and its sbatch script rendered, as the user who asks: the fields, the
cluster (partition, GPU kinds, node counts), and the paths, looked for as the user. Nothing is
submitted here (gpuportal_portal.job_service submits)."""

from __future__ import annotations

import asyncio
import logging
import pwd
from collections.abc import Sequence
from datetime import timedelta

from gpuportal_adapters.image_archive import archive_problem
from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_core.batch import (
    BatchJob,
    BatchJobError,
    Container,
    render_batch_script,
    split_command,
)
from gpuportal_core.environments import EnvironmentSpecError, SoftwareEnvironment
from gpuportal_core.slurm_time import format_runtime, parse_runtime
from gpuportal_core.words import count
from gpuportal_portal.cluster import PartitionCatalog
from gpuportal_portal.job_environments import SiteEnvironment, job_environment
from gpuportal_portal.job_schemas import JobCreate
from gpuportal_portal.models import utcnow
from gpuportal_portal.profile_rules import Problem, no_such_kind
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.settings import PortalSettings

log = logging.getLogger(__name__)


def home_of(user: str) -> str:
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
    if data.begin is not None and data.begin > utcnow() + timedelta(days=settings.begin_max_days):
        # A job held in the queue for years (9999-01-01) counts against the user's and the
        # cluster's limits all that time.
        raise BatchJobError(
            "begin", f"is over {settings.begin_max_days} days ahead: choose a nearer time"
        )
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
        # Slurm reads --begin in the cluster's local time, which is this host's.
        begin=data.begin.astimezone().strftime("%Y-%m-%dT%H:%M:%S") if data.begin else "",
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
        # Run by itself, unless Python or the notebook runner reads it.
        if not job.script.endswith((".py", ".ipynb")):
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
        home = await asyncio.to_thread(home_of, user)
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
