"""Multi-node training jobs: a checked request, and its sbatch script for one launcher.

Each launcher has its own template under templates/sbatch/launchers/, all extending
templates/sbatch/batch_job.sh.j2, rendered with the same Jinja environment as the single-user
script. Every value is checked here before it can reach a template.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuportal_core.environments import (
    PODMAN_IMAGE_RE,
    EnvironmentSpecError,
    SoftwareEnvironment,
    check_environment_fields,
)
from gpuportal_core.gres import GPU_KIND_RE, gres_request
from gpuportal_core.launchers import LAUNCHERS, Launcher, one_of
from gpuportal_core.notebook_params import ParameterError, parse_parameters
from gpuportal_core.profiles import SLURM_NAME_RE, ProfileError, check_sbatch_option
from gpuportal_core.resources import TEMPLATES_DIR
from gpuportal_core.sbatch import (
    ARG_RE,
    PATH_RE,
    USERNAME_RE,
    ScriptError,
    template_environment,
)
from gpuportal_core.slurm_time import format_runtime

JOB_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# Pyxis (enroot) image references, e.g. nvcr.io#nvidia/pytorch:24.10-py3 or docker://ubuntu:22.04.
PYXIS_IMAGE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+/:@#-]{0,250}|/[A-Za-z0-9_.+/-]{1,250}")
APPTAINER_IMAGE_RE = re.compile(r"(?:/|docker://|oras://|library://)[A-Za-z0-9_.+/:@-]{1,250}")
CONTAINER_KINDS = ("pyxis", "apptainer", "podman")
# The first word of a command: a program on PATH (hostname, python) or an absolute path.
PROGRAM_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}|/[A-Za-z0-9_./+-]{1,250}")
# A Slurm array: indexes and ranges (with a step), and at most N at once: 0-15:2,20%4.
_ARRAY_ITEM = r"\d{1,6}(?:-\d{1,6}(?::\d{1,6})?)?"
BEGIN_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
ARRAY_RE = re.compile(rf"{_ARRAY_ITEM}(?:,{_ARRAY_ITEM}){{0,49}}(?:%\d{{1,4}})?")
MAX_ARRAY_TASKS = 1000
# Programs that start a job's tasks: the launcher already runs one of them, so a command that
# starts with one asks for a launch inside a launch (srun within srun waits for ever for a step
# on nodes its own step holds: "Requested nodes are busy").
LAUNCH_PROGRAMS = frozenset(
    {launcher.program for launcher in LAUNCHERS.values()}
    | {"srun", "mpirun", "mpiexec", "sbatch", "salloc"}
)


def split_command(command: str) -> tuple[str, ...]:
    """The words of a command line, as a shell would split them (quotes kept together).

    The command runs as given, without a shell: `|`, `>` and `$VAR` are plain characters.
    """
    try:
        words = tuple(shlex.split(command))
    except ValueError as error:  # "No closing quotation"
        raise BatchJobError("command", f"cannot be split into words: {error}") from None
    if not words:
        raise BatchJobError("command", "is empty: give a program and its arguments")
    if not PROGRAM_RE.fullmatch(words[0]):
        raise BatchJobError(
            "command",
            "must start with a program name (hostname, python) or an absolute path, "
            f"not {words[0]!r}",
        )
    for word in words:
        if not ARG_RE.fullmatch(word) or len(word) > 1000:
            raise BatchJobError("command", "each word must be one line of printable text")
    return words


def check_not_a_launch(command: Sequence[str], launcher: str) -> None:
    """Refuse a command that starts with a launch program: the launcher does that part."""
    program = posixpath.basename(command[0])
    if program not in LAUNCH_PROGRAMS:
        return
    rest = shlex.join(command[1:])
    if program in ("sbatch", "salloc"):
        raise BatchJobError(
            "command", f"is run inside the job: give what the job should run, not {program}"
        )
    raise BatchJobError(
        "command",
        f"the {launcher} launcher starts the command on every node itself: leave out "
        f"{program!r} and give what it should run"
        + (f" ({rest!r})" if rest and not rest.startswith("-") else ""),
    )


def array_size(spec: str) -> int:
    """How many tasks a Slurm --array value makes; BatchJobError if it is not one."""
    if not ARRAY_RE.fullmatch(spec):
        raise BatchJobError(
            "array", "must be indexes and ranges such as 0-3, 1,5,9 or 0-15:2, optionally %N"
        )
    count = 0
    for item in spec.split("%", 1)[0].split(","):
        first, _, rest = item.partition("-")
        last, _, step = rest.partition(":")
        if last and int(last) < int(first):
            raise BatchJobError("array", f"the range {item} ends before it starts")
        count += (int(last or first) - int(first)) // int(step or 1) + 1
    if count > MAX_ARRAY_TASKS:
        raise BatchJobError("array", f"makes {count} tasks; at most {MAX_ARRAY_TASKS}")
    return count


class BatchJobError(ValueError):
    """A job request that breaks a rule of one field; nothing is submitted."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Container:
    kind: str  # pyxis or apptainer
    image: str

    def __post_init__(self) -> None:
        if self.kind not in CONTAINER_KINDS:
            raise BatchJobError(
                "container", f"kind must be pyxis, apptainer or podman, not {self.kind!r}"
            )
        rules = {
            "pyxis": (
                PYXIS_IMAGE_RE,
                "image must be a registry reference such as nvcr.io#nvidia/pytorch:24.10-py3",
            ),
            "apptainer": (
                APPTAINER_IMAGE_RE,
                "image must be an absolute .sif path or a docker:// reference",
            ),
            "podman": (
                PODMAN_IMAGE_RE,
                "image must be an OCI archive's absolute path (/srv/images/session.tar) or a "
                "registry reference such as registry.example.org/team/session:1",
            ),
        }
        rule, message = rules[self.kind]
        if not rule.fullmatch(self.image):
            raise BatchJobError("container", message)


def check_user_path(path: str, *, roots: Sequence[str], what: str) -> str:
    """An absolute path inside one of the user's own areas (home, project space), normalised.

    `..` is refused outright rather than resolved: a path that needs it is not one a user types
    for their own file, and refusing keeps symlink games out of the rule.
    """
    if not path.startswith("/") or not PATH_RE.fullmatch(path) or "%" in path:
        raise BatchJobError(what, "must be an absolute path of letters, digits and _ . / -")
    if ".." in path.split("/"):
        raise BatchJobError(what, "must not contain '..'")
    normal = posixpath.normpath(path)
    for root in roots:
        root = posixpath.normpath(root)
        if normal == root or normal.startswith(root + "/"):
            return normal
    raise BatchJobError(what, f"must be inside your own areas: {', '.join(roots)}")


@dataclass(frozen=True)
class BatchJob:
    """A checked multi-node job: who, what to run, with which launcher, on what resources."""

    user: str
    name: str
    launcher: str
    nodes: int
    gpus_per_node: int
    cores_per_gpu: int
    mem_per_gpu_gb: int
    runtime: int
    partition: str
    script: str  # a script in the user's areas, or "" for a command
    args: tuple[str, ...]
    workdir: str
    output: str
    environment: SoftwareEnvironment | None = None
    container: Container | None = None
    extra_options: tuple[tuple[str, str], ...] = ()
    modules_init: str = "/etc/profile.d/lmod.sh"
    rendezvous_port_base: int = 29500
    allowed_roots: tuple[str, ...] = field(default=(), compare=False)
    command: tuple[str, ...] = ()  # a program and its arguments, run as given (no script)
    array: str = ""  # Slurm --array, e.g. 0-3: one job per index
    gpu_type: str = ""  # the GPUs' kind (gpuportal_core.gres); "" for any
    # The node's session venv: its Python runs a podman container's tasks
    # (gpuportal_session.container), outside the image.
    session_venv: str = ""
    # Not before this time (Slurm's --begin, the cluster's local time YYYY-MM-DDTHH:MM:SS):
    # a scheduled notebook job's next run waits in the queue until then.
    begin: str = ""

    def __post_init__(self) -> None:
        if not USERNAME_RE.fullmatch(self.user):
            raise BatchJobError("user", f"{self.user!r} is not a user name")
        if not JOB_NAME_RE.fullmatch(self.name):
            raise BatchJobError(
                "name", "must be 1-64 letters, digits and _ . - (starting with a letter or digit)"
            )
        if self.launcher not in LAUNCHERS:
            raise BatchJobError("launcher", f"must be {one_of()}")
        for number, what in (
            (self.nodes, "nodes"),
            (self.gpus_per_node, "gpus_per_node"),
            (self.cores_per_gpu, "cores_per_gpu"),
            (self.mem_per_gpu_gb, "mem_per_gpu_gb"),
        ):
            if number < 1:
                raise BatchJobError(what, "must be at least 1")
        if self.runtime < 60:
            raise BatchJobError("runtime", "must be at least 00:01:00")
        if not SLURM_NAME_RE.fullmatch(self.partition):
            raise BatchJobError("partition", "must be a Slurm name: letters, digits and _ . -")
        if self.gpu_type and not GPU_KIND_RE.fullmatch(self.gpu_type):
            raise BatchJobError(
                "gpu_type", "must be a GPU kind as gres.conf names it, e.g. a100 or 1g.10gb"
            )
        roots = self.allowed_roots
        if self.launcher == "notebook":
            self._check_notebook()
        elif self.script.endswith(".ipynb"):
            raise BatchJobError("script", "is a notebook: choose the notebook launcher to run it")
        if self.command:
            if self.script:
                raise BatchJobError("command", "give a command or a script, not both")
            if self.args:
                raise BatchJobError("args", "with a command, put its arguments in the command")
            split_command(shlex.join(self.command))
            check_not_a_launch(self.command, self.launcher)
        else:
            check_user_path(self.script, roots=roots, what="script")
        check_user_path(self.workdir, roots=roots, what="workdir")
        if self.array:
            array_size(self.array)
        if not PATH_RE.fullmatch(self.output):
            raise BatchJobError("output", "is not a safe path")
        for arg in self.args:
            if not ARG_RE.fullmatch(arg) or len(arg) > 1000:
                raise BatchJobError("args", "each argument must be one line of printable text")
        if self.environment is not None:
            if self.environment.kind == "container":
                raise BatchJobError("environment", "a container goes in `container`")
            try:
                check_environment_fields(
                    kind=self.environment.kind,
                    prefix=self.environment.prefix,
                    modules=self.environment.modules,
                    image=self.environment.image,
                    engine=self.environment.engine,
                )
            except EnvironmentSpecError as error:
                raise BatchJobError("environment", str(error)) from None
        if self.session_venv and not PATH_RE.fullmatch(self.session_venv):
            raise BatchJobError("session_venv", "is not a safe path")
        if self.container is not None and self.container.kind == "podman":
            if not self.session_venv:
                raise BatchJobError("container", "podman needs the session venv on the nodes")
            if self.environment is not None:
                raise BatchJobError("environment", "the image brings its own: leave it out")
        for option, value in self.extra_options:
            try:
                check_sbatch_option(option, value, where="extra option")
            except ProfileError as error:
                raise BatchJobError("extra_options", str(error)) from None
        if self.begin and not BEGIN_RE.fullmatch(self.begin):
            raise BatchJobError("begin", "must be YYYY-MM-DDTHH:MM:SS")
        if not PATH_RE.fullmatch(self.modules_init):
            raise BatchJobError("modules_init", "is not a safe path")

    def _check_notebook(self) -> None:
        """A notebook job runs one notebook once, on one node, with name=value parameters."""
        if self.command:
            raise BatchJobError("command", "a notebook job runs a notebook: give it as the script")
        if not self.script.endswith(".ipynb"):
            raise BatchJobError("script", "must be a notebook (.ipynb) for the notebook launcher")
        if self.nodes != 1:
            raise BatchJobError("nodes", "a notebook runs on one node: ask for 1")
        if self.array:
            raise BatchJobError("array", "a notebook job runs once: leave it empty")
        try:
            parse_parameters(self.args)
        except ParameterError as error:
            raise BatchJobError("args", str(error)) from None

    @property
    def launcher_entry(self) -> Launcher:
        return LAUNCHERS[self.launcher]

    @property
    def gres(self) -> str:
        """sbatch's --gres for one node: gpu:a100:2, or gpu:2 for any kind."""
        return gres_request(self.gpu_type, self.gpus_per_node)

    @property
    def tasks_per_node(self) -> int:
        return 1 if self.launcher_entry.one_task_per_node else self.gpus_per_node

    @property
    def cpus_per_task(self) -> int:
        return self.gpus_per_node * self.cores_per_gpu // self.tasks_per_node

    @property
    def program(self) -> list[str]:
        """What each worker runs: the command, or the script (a .py one with `python3`: the
        name every environment has, venvs, conda and containers, and the node's own Python
        when the job has no environment, where there is no `python`)."""
        if self.command:
            return list(self.command)
        if self.launcher == "notebook":
            notebook = [self.notebook_python, "-m", "gpuportal_session.notebook_run", self.script]
            return [*notebook, *self.args]
        base = ["python3", self.script] if self.script.endswith(".py") else [self.script]
        return [*base, *self.args]

    @property
    def notebook_python(self) -> str:
        """The Python that runs a notebook job: a venv's, conda's or image's own (they carry
        the session extras); else the nodes' session venv, as sessions use it (modules load on
        top of it)."""
        own = self.container is not None or (
            self.environment is not None and self.environment.kind in ("venv", "conda")
        )
        if own or not self.session_venv:
            return "python3"
        return f"{self.session_venv}/bin/python"


def _entry(job: BatchJob, program: str) -> str:
    """What torchrun or deepspeed start on each GPU: the script and its arguments, or a command
    behind the launcher's no-python flag."""
    if job.command:
        return f"{job.launcher_entry.no_python_flag} {program}".strip()
    return shlex.join([job.script, *job.args])


def render_batch_script(job: BatchJob, *, templates_dir: Path = TEMPLATES_DIR) -> str:
    """The sbatch script of a multi-node job, from its launcher's template."""
    try:
        template = template_environment(templates_dir).get_template(job.launcher_entry.template)
    except Exception as error:  # a missing template is a deployment bug: say which
        raise ScriptError(f"no template for launcher {job.launcher}: {error}") from None
    quoted_program = shlex.join(job.program)
    return template.render(
        job=job,
        time=format_runtime(job.runtime),
        mem_gb=job.gpus_per_node * job.mem_per_gpu_gb,
        program=quoted_program,
        script=shlex.quote(job.script),
        entry=_entry(job, quoted_program),
        args=shlex.join(job.args),
        environment=job.environment,
        container=job.container,
        # The user's areas (home, project areas) a podman container mounts.
        container_mounts=job.allowed_roots,
        modules_init=job.modules_init,
        extra_options=job.extra_options,
    )
