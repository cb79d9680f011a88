"""What the jobs API takes and gives. Values are checked again by core.batch."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from portal.schemas import Runtime, UtcDateTime

Launcher = Literal["torchrun", "deepspeed", "horovod", "mpi", "srun"]


class JobEnvironment(BaseModel):
    """What the job activates first: a venv or conda prefix, or modules to load."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["venv", "conda", "modules"]
    prefix: str = Field("", max_length=250, examples=["/home/alice/envs/torch"])
    modules: list[str] = Field(default_factory=list, max_length=20, examples=[["cuda/12.4"]])


class JobContainer(BaseModel):
    """Run the workers in a container: Pyxis (`srun --container-image`) or Apptainer."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["pyxis", "apptainer"]
    image: str = Field(max_length=300, examples=["nvcr.io#nvidia/pytorch:24.10-py3"])


class JobCreate(BaseModel):
    """A multi-node training job. Cores and memory follow the per-GPU rule of the partition."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=64, examples=["resnet50"])
    launcher: Launcher
    nodes: Annotated[int, Field(ge=1, le=1024)]
    gpus_per_node: Annotated[int, Field(ge=1, le=64)]
    runtime: Runtime = "01:00:00"
    partition: str = Field("", max_length=64, description="Empty: the portal's default.")
    script: str = Field(max_length=500, examples=["/home/alice/project/train.py"])
    args: list[str] = Field(default_factory=list, max_length=100)
    workdir: str = Field("", max_length=500, description="Empty: the script's directory.")
    environment: JobEnvironment | None = None
    container: JobContainer | None = None


class JobPublic(BaseModel):
    id: int
    user: str
    name: str
    launcher: str
    slurm_job_id: str
    state: str
    reason: str
    nodes: str
    exit_code: int | None
    submitted_at: UtcDateTime
    started_at: str
    ended_at: str
    request: dict[str, object]
    script: str


class JobDetailPublic(JobPublic):
    waiting_because: str = ""
    output_tail: list[str] = Field(default_factory=list)


class ScriptPreview(BaseModel):
    script: str
