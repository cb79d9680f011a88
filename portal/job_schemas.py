"""What the jobs API takes and gives. Values are checked again by gpuportal_core.batch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from gpuportal_core.launchers import LAUNCHERS
from gpuportal_core.profile_fields import GpuKind
from gpuportal_core.profile_fields import RuntimeText as Runtime
from gpuportal_portal.schemas import UtcDateTime

if TYPE_CHECKING:
    LauncherName = str
else:
    # One of the registry's names (gpuportal_core.launchers), as a Literal built from it: the
    # OpenAPI schema lists them and pydantic names them in its error. mypy cannot read a
    # Literal made at run time, so it sees a str.
    LauncherName = Literal[tuple(LAUNCHERS)]


class JobEnvironment(BaseModel):
    """What the job activates first: a venv or conda prefix, or modules to load."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["venv", "conda", "modules"]
    prefix: str = Field("", max_length=250, examples=["/home/alice/envs/torch"])
    modules: list[str] = Field(default_factory=list, max_length=20, examples=[["cuda/12.4"]])


class JobContainer(BaseModel):
    """Run the workers in a container: Pyxis (`srun --container-image`), Apptainer, or podman
    (rootless as you, each task in the image: an OCI archive's path or a registry reference)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["pyxis", "apptainer", "podman"]
    image: str = Field(max_length=300, examples=["nvcr.io#nvidia/pytorch:24.10-py3"])


class JobCreate(BaseModel):
    """A multi-node job: a command (`hostname`, `python -m pkg.train`) run as given, or a script
    in your home or a project area. Cores and memory follow the per-GPU rule of the partition."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=64, examples=["resnet50"])
    launcher: LauncherName
    nodes: Annotated[int, Field(ge=1, le=1024)]
    gpus_per_node: Annotated[int, Field(ge=1, le=64)]
    gpu_type: GpuKind = Field(
        "",
        examples=["a100"],
        description="The GPUs' kind, as the nodes' gres.conf names it (a100, 1g.10gb for a MIG "
        "slice); empty: any kind. Cores and memory follow that kind's rule.",
    )
    runtime: Runtime = "01:00:00"
    partition: str = Field("", max_length=64, description="Empty: the portal's default.")
    script: str = Field(
        "",
        max_length=500,
        examples=["/home/alice/project/train.py"],
        description="A script in your home or a project area; or empty, and give a command.",
    )
    command: str = Field(
        "",
        max_length=2000,
        examples=["hostname"],
        description="A program and its arguments, run as given without a shell (like `srun "
        "hostname`); or leave it empty and give a script.",
    )
    args: list[str] = Field(default_factory=list, max_length=100)
    workdir: str = Field(
        "", max_length=500, description="Empty: the script's directory, or your home for a command."
    )
    array: str = Field(
        "",
        max_length=100,
        examples=["0-3"],
        description="Run it as a job array (sbatch --array): one job per index, e.g. 0-3, 1,5,9, "
        "0-15:2 or 0-99%10 (at most 10 at once). Each task sees SLURM_ARRAY_TASK_ID.",
    )
    environment: JobEnvironment | None = None
    container: JobContainer | None = None
    begin: AwareDatetime | None = Field(
        None,
        examples=["2026-12-01T03:00:00+01:00"],
        description="Start no earlier than this time, with its zone (sbatch --begin); empty: "
        "as soon as Slurm can. The job waits in the queue until then.",
    )


class NotebookOutputsPublic(BaseModel):
    """Where a notebook job's run wrote its executed notebook and HTML."""

    folder: str
    notebook: str = Field(description="The executed notebook, written after every cell.")
    html: str = Field(description="Its HTML (GET /jobs/{id}/report); empty: the run wrote none.")
    lab_path: str = Field(
        description="The executed notebook's path in your JupyterLab (from your home); empty "
        "when it is outside your home."
    )


class JobPublic(BaseModel):
    id: int
    user: str
    name: str
    launcher: str
    slurm_job_id: str
    state: str
    final: bool = Field(
        description="Whether the state is final: nothing about the job changes any more."
    )
    reason: str
    nodes: str
    exit_code: int | None
    submitted_at: UtcDateTime
    started_at: str = Field(description="ISO 8601 with the zone, or empty before it starts.")
    ended_at: str = Field(description="ISO 8601 with the zone, or empty while it runs.")
    expected_start: str = Field(
        description="While it waits: when Slurm expects to start it (ISO 8601 with the zone)."
    )
    waiting_because: str = Field(
        default="",
        description="While it waits: Slurm's reason in words (a group at its GPU limit, a "
        "maintenance window), the words the hub's waiting page uses for a session.",
    )
    queue: str = Field(
        default="",
        description="While it waits (GET /jobs and /jobs/{id}): why, its place in line, the "
        "expected start and the time waited, in the hub's waiting page's words; a job on one "
        "node gets its place in line.",
    )
    tasks: dict[str, str] = Field(description="An array job's tasks and their states.")
    request: dict[str, object]
    script: str
    use_state: str = Field(
        default="",
        description="What is known of what it used (GET /jobs/{id}/use): 'known'; 'pending', "
        "ended but not read from Slurm's accounting yet (a minute or two); 'none', the "
        "accounting has no record of it; empty while it runs.",
    )
    schedule_id: int | None = Field(
        default=None,
        description="A run of this notebook job definition (GET /schedules/{id}); null for a "
        "job of its own.",
    )
    outputs: NotebookOutputsPublic | None = Field(
        default=None,
        description="A notebook job's executed notebook and HTML, once it has ended (on "
        "GET /jobs/{id} while it runs too); null for other jobs, or not found (yet).",
    )


class JobDetailPublic(JobPublic):
    output_tail: list[str] = Field(default_factory=list)


class JobOutputPart(BaseModel):
    """A job's output from a byte offset on (GET /jobs/{id}/output): ask again from
    next_offset for what it writes next, as `gpuportal jobs follow` does."""

    text: str
    next_offset: int = Field(description="The offset to ask from next.")
    more: bool = Field(description="More was already written: ask again now, not later.")


class ScriptPreview(BaseModel):
    script: str


class GpuCardUsePublic(BaseModel):
    """One GPU over a session: utilisation in percent, memory in MiB (null: not reported)."""

    mean_percent: float
    peak_percent: int
    memory_peak_mib: int | None = None
    memory_total_mib: int | None = None


class GpuUsePublic(BaseModel):
    """A session's own GPU readings over its life; not measured, `note` says why."""

    measured: bool
    note: str = ""
    samples: int = 0
    gpus: list[GpuCardUsePublic] = []


class StepUsePublic(BaseModel):
    """One step of a job with several (its batch script, each srun)."""

    step: str
    elapsed_s: int
    cores: int
    cpu_s: float | None
    cpu_percent: float | None
    max_rss_bytes: int | None


class JobUsePublic(BaseModel):
    """What an ended job used of what it asked for (Slurm's accounting, and a session's GPU
    readings); a use of null was not measured (the cluster gathers no job accounting)."""

    elapsed_s: int
    limit_s: int | None
    time_percent: float | None
    cores: int
    cpu_s: float | None
    cpu_percent: float | None
    requested_bytes: int | None
    max_rss_bytes: int | None
    memory_percent: float | None
    gpus: int = 0
    gpu_type: str = ""  # as Slurm's accounting tracks it; "" where it does not
    gpu_hours: float = 0.0
    gpu_hours_used: float | None = None
    account: str = ""
    gpu: GpuUsePublic | None = None
    steps: list[StepUsePublic] = []  # where there are several
    summary: str


class LauncherPublic(BaseModel):
    """A launcher a job can name (gpuportal_core.launchers), with what it does."""

    name: str = Field(examples=["torchrun"])
    title: str = Field(examples=["torchrun"])
    about: str
    command_help: str = Field(description="What it does with a command (not a script).")
    one_task_per_node: bool = Field(
        description="One task per node that starts the GPUs' workers itself; else one per GPU."
    )
