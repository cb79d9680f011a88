"""Rendering of sbatch scripts from allow-listed, validated values (never from raw user input)."""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

from gpuportal_core.environments import (
    OWN_PYTHON_KINDS,
    EnvironmentSpecError,
    SoftwareEnvironment,
    check_environment_fields,
)
from gpuportal_core.gres import GPU_KIND_RE, gres_request
from gpuportal_core.profiles import SLUG_RE, SLURM_NAME_RE, ProfileError, check_sbatch_option
from gpuportal_core.request import SpawnRequest
from gpuportal_core.resources import TEMPLATES_DIR
from gpuportal_core.slurm_time import format_runtime

USERNAME_RE = re.compile(r"[a-z_][a-z0-9_.-]{0,31}")
# Absolute paths made of a conservative alphabet: they go into #SBATCH lines and the shell.
PATH_RE = re.compile(r"/[A-Za-z0-9_./%-]*")
ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ARG_RE = re.compile(r"[^\x00-\x1f\x7f]*")
TAG_RE = re.compile(r"[A-Za-z0-9:._@+-]+")
# Environment variables that hold the server's hub token.
TOKEN_VARS = frozenset({"JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN"})


class ScriptError(ValueError):
    """A value that must not go into a batch script."""


def _check(pattern: re.Pattern[str], value: str, what: str) -> str:
    if not pattern.fullmatch(value):
        raise ScriptError(f"{what} {value!r} is not allowed in a batch script")
    return value


@dataclass(frozen=True)
class SingleUserJob:
    """Everything the single-user job script needs, each value checked on construction."""

    user: str
    profile: str
    partition: str
    gpus: int
    cores: int
    mem_gb: int
    runtime: int
    output: str
    workdir: str
    export_vars: tuple[str, ...]
    command: tuple[str, ...]
    venv: str = ""
    token_file: str = ""
    extra_options: tuple[tuple[str, str], ...] = ()
    environment: SoftwareEnvironment | None = None
    # Sourced before `module load` when the environment is a list of modules.
    modules_init: str = "/etc/profile.d/lmod.sh"
    # sbatch --comment: names hub, user and server, so the job is found again by its tag.
    tag: str = ""
    # The GPUs' kind (gres.conf's Type, a MIG slice's profile); "" for any.
    gpu_type: str = ""
    # Folders a podman container session mounts besides the home and the shared folder (the
    # project areas), where they exist on the node.
    container_mounts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check(USERNAME_RE, self.user, "user name")
        if self.tag:
            _check(TAG_RE, self.tag, "job tag")
        _check(SLUG_RE, self.profile, "profile")
        _check(SLURM_NAME_RE, self.partition, "partition")
        if self.gpu_type:
            _check(GPU_KIND_RE, self.gpu_type, "GPU kind")
        _check(PATH_RE, self.output, "output path")
        _check(PATH_RE, self.workdir, "working directory")
        if self.venv:
            _check(PATH_RE, self.venv, "venv path")
        for mount in self.container_mounts:
            _check(PATH_RE, mount, "container mount")
        if self.runs_in_podman and not self.venv:
            # The node's session venv runs gpuportal_session.container, outside the image.
            raise ScriptError("a podman environment needs the session venv on the nodes")
        if self.token_file:
            _check(PATH_RE, self.token_file, "token file")
            if TOKEN_VARS & set(self.export_vars):
                raise ScriptError("the token goes in token_file, not in the exported environment")
        for name in self.export_vars:
            _check(ENV_NAME_RE, name, "environment variable name")
        if not self.command:
            raise ScriptError("the job needs a command")
        for arg in self.command:
            _check(ARG_RE, arg, "command argument")
        for number, what in ((self.gpus, "gpus"), (self.cores, "cores"), (self.mem_gb, "mem_gb")):
            if number < 1:
                raise ScriptError(f"{what} must be at least 1")
        if self.runtime < 60:
            raise ScriptError("runtime must be at least one minute")
        _check(PATH_RE, self.modules_init, "modules init script")
        if self.environment is not None:
            try:  # re-checked here: these values go straight into bash
                check_environment_fields(
                    kind=self.environment.kind,
                    prefix=self.environment.prefix,
                    modules=self.environment.modules,
                    image=self.environment.image,
                    engine=self.environment.engine,
                )
            except EnvironmentSpecError as error:
                raise ScriptError(str(error)) from None
        for option, value in self.extra_options:
            try:
                check_sbatch_option(option, value, where="extra option")
            except ProfileError as error:
                raise ScriptError(str(error)) from None

    @property
    def runs_in_podman(self) -> bool:
        env = self.environment
        return env is not None and env.kind == "container" and env.engine == "podman"

    @classmethod
    def from_request(
        cls,
        request: SpawnRequest,
        *,
        user: str,
        output: str,
        workdir: str,
        export_vars: Sequence[str],
        command: Sequence[str],
        venv: str = "",
        token_file: str = "",
        modules_init: str = "/etc/profile.d/lmod.sh",
        tag: str = "",
        container_mounts: Sequence[str] = (),
    ) -> SingleUserJob:
        profile = request.profile
        return cls(
            user=user,
            profile=profile.slug,
            partition=profile.partition,
            gpus=profile.gpus,
            gpu_type=profile.gpu_type,
            cores=profile.cores,
            mem_gb=profile.mem_gb,
            runtime=request.runtime,
            output=output,
            workdir=workdir,
            export_vars=tuple(sorted(set(export_vars))),
            command=tuple(command),
            venv=venv,
            token_file=token_file,
            extra_options=tuple(sorted(profile.sbatch_options.items())),
            environment=request.environment,
            container_mounts=tuple(container_mounts),
            modules_init=modules_init,
            tag=tag,
        )


def singleuser_command(
    args: Sequence[str], *, environment: SoftwareEnvironment | None, session_venv: str
) -> list[str]:
    """The job's command: the port reporter, which then runs jupyterhub-singleuser and args.

    It runs with the Python that should run JupyterLab: the chosen environment's own (a venv,
    conda prefix or container), else the session venv's, named in full so that modules loaded
    on top cannot put another Python first on PATH.
    """
    own_python = environment is not None and environment.kind in OWN_PYTHON_KINDS
    python = "python" if own_python or not session_venv else f"{session_venv}/bin/python"
    return [python, "-m", "gpuportal_session.singleuser", "jupyterhub-singleuser", *args]


@functools.cache
def template_environment(templates_dir: Path = TEMPLATES_DIR) -> jinja2.Environment:
    """The Jinja environment every sbatch script is rendered with (shell_quote, strict).

    One per folder, kept: Jinja compiles a template once per environment, and a new one per
    spawn compiled the script's template again each time (6 ms, in the hub's event loop; 300
    spawns at once spent seconds there, bench/scale.py under py-spy). A template edited on disk
    is still picked up: Jinja checks its modification time (auto_reload).
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # a shell script, not HTML; values are pre-checked instead
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["shell_quote"] = shlex.quote
    return env


def render_singleuser_script(job: SingleUserJob, *, templates_dir: Path = TEMPLATES_DIR) -> str:
    """The sbatch script for one JupyterLab job."""
    template = template_environment(templates_dir).get_template("sbatch/singleuser.sh.j2")
    return template.render(
        user=job.user,
        profile=job.profile,
        job_name=f"jupyterhub-{job.user}",
        partition=job.partition,
        gres=gres_request(job.gpu_type, job.gpus),
        cores=job.cores,
        mem_gb=job.mem_gb,
        time=format_runtime(job.runtime),
        output=job.output,
        workdir=job.workdir,
        export=",".join(job.export_vars) if job.export_vars else "NONE",
        venv=job.venv,
        token_file=job.token_file,
        command=shlex.join(job.command),
        extra_options=job.extra_options,
        environment=job.environment,
        podman=job.runs_in_podman,
        container_mounts=job.container_mounts,
        modules_init=job.modules_init,
        tag=job.tag,
    )
