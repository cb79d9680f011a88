"""What the profile API takes and gives: each field checked where it comes in, named in errors.

Rules that need more than one field, or the cluster, live in gpuportal_portal.profile_rules.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from gpuportal_core.profiles import (
    DEFAULT_CORES_PER_GPU,
    DEFAULT_MEM_PER_GPU_GB,
    GROUP_RE,
    SLUG_RE,
    SLURM_NAME_RE,
    ProfileError,
    check_sbatch_option,
)
from gpuportal_core.slurm_time import RuntimeFormatError, parse_runtime


def _with_zone(moment: datetime) -> datetime:
    # SQLite hands back timestamps without their zone; every one the portal stores is UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# A timestamp as the API gives it: always with its time zone (RFC 3339 date-time).
UtcDateTime = Annotated[datetime, AfterValidator(_with_zone)]


def _runtime(text: str) -> str:
    try:
        seconds = parse_runtime(text)
    except RuntimeFormatError:
        raise ValueError("must be HH:MM:SS, e.g. 08:00:00") from None
    if seconds < 60:
        raise ValueError("must be at least 00:01:00")
    return text


def _limit(text: str) -> str:
    try:
        seconds = parse_runtime(text)
    except RuntimeFormatError:
        raise ValueError("must be HH:MM:SS, e.g. 01:00:00, or 00:00:00 for never") from None
    if 0 < seconds < 60:
        raise ValueError("must be 00:00:00 (never) or at least 00:01:00")
    return text


def _one_line(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    if "\n" in text or "\r" in text:
        raise ValueError("must be one line")
    return text.strip()


def _slurm_name(text: str) -> str:
    if not SLURM_NAME_RE.fullmatch(text):
        raise ValueError("must be a Slurm name: letters, digits and _ . - (up to 64)")
    return text


def _slug(text: str) -> str:
    if not SLUG_RE.fullmatch(text):
        raise ValueError("must be 1-40 lowercase letters, digits and inner dashes, e.g. gpu-2")
    return text


def _groups(groups: list[str]) -> list[str]:
    for group in groups:
        if not GROUP_RE.fullmatch(group):
            raise ValueError(f"{group!r} is not a group name (letters, digits and _ . -)")
    return sorted(set(groups))


def _sbatch_options(options: dict[str, str]) -> dict[str, str]:
    for option, value in options.items():
        try:
            check_sbatch_option(option, value, where="sbatch_options")
        except ProfileError as error:
            raise ValueError(str(error).removeprefix("sbatch_options: ")) from None
    return dict(sorted(options.items()))


Runtime = Annotated[str, AfterValidator(_runtime)]
# A culling limit: HH:MM:SS, 00:00:00 for never.
Limit = Annotated[str, AfterValidator(_limit)]
Title = Annotated[str, Field(max_length=100), AfterValidator(_one_line)]
Description = Annotated[str, Field(max_length=500)]
Slug = Annotated[str, AfterValidator(_slug)]
PartitionName = Annotated[str, AfterValidator(_slurm_name)]
Groups = Annotated[list[str], AfterValidator(_groups)]
SbatchOptions = Annotated[dict[str, str], AfterValidator(_sbatch_options)]
Gpus = Annotated[int, Field(ge=1, le=64)]
CoresPerGpu = Annotated[int, Field(ge=1, le=512)]
MemPerGpu = Annotated[int, Field(ge=1, le=4096)]


class ProfileCreate(BaseModel):
    """A new profile. Runtimes are HH:MM:SS; cores and memory are per GPU."""

    model_config = ConfigDict(extra="forbid")

    slug: Slug
    title: Title
    description: Description = ""
    gpus: Gpus
    cores_per_gpu: CoresPerGpu = DEFAULT_CORES_PER_GPU
    mem_per_gpu_gb: MemPerGpu = DEFAULT_MEM_PER_GPU_GB
    default_runtime: Runtime = "08:00:00"
    max_runtime: Runtime = "24:00:00"
    # None: the deployment's partition (PORTAL_DEFAULT_PARTITION), as the seeded profiles have.
    partition: PartitionName | None = None
    sbatch_options: SbatchOptions = Field(default_factory=dict)
    groups: Groups = Field(default_factory=list)
    enabled: bool = True
    # Culling: HH:MM:SS, 00:00:00 for never.
    idle_limit: Limit = "01:00:00"
    gpu_idle_limit: Limit = "02:00:00"
    queue_limit: Limit = "04:00:00"


class ProfileUpdate(BaseModel):
    """Changes to a profile; `version` is the one the editor saw (a newer one means a 409)."""

    model_config = ConfigDict(extra="forbid")

    version: int
    title: Title | None = None
    description: Description | None = None
    gpus: Gpus | None = None
    cores_per_gpu: CoresPerGpu | None = None
    mem_per_gpu_gb: MemPerGpu | None = None
    default_runtime: Runtime | None = None
    max_runtime: Runtime | None = None
    partition: PartitionName | None = None
    sbatch_options: SbatchOptions | None = None
    groups: Groups | None = None
    enabled: bool | None = None
    idle_limit: Limit | None = None
    gpu_idle_limit: Limit | None = None
    queue_limit: Limit | None = None


class ProfileOrder(BaseModel):
    """Every profile's slug, in the order the spawn page should show them."""

    model_config = ConfigDict(extra="forbid")

    slugs: list[Slug]


class ProfilePublic(BaseModel):
    slug: str
    title: str
    description: str
    gpus: int
    cores_per_gpu: int
    mem_per_gpu_gb: int
    default_runtime: str
    max_runtime: str
    partition: str
    sbatch_options: dict[str, str]
    groups: list[str]
    enabled: bool
    idle_limit: str
    gpu_idle_limit: str
    queue_limit: str
    position: int
    version: int
    updated_at: UtcDateTime
    updated_by: str


class AuditPublic(BaseModel):
    at: UtcDateTime
    actor: str
    action: str
    kind: str
    subject: str
    changes: dict[str, list[object]]


Modules = Annotated[list[str], Field(max_length=20)]
ProfileSlugs = Annotated[list[Slug], Field(max_length=100)]


class EnvironmentCreate(BaseModel):
    """A software environment: a venv or conda prefix, modules to load, or a container image."""

    model_config = ConfigDict(extra="forbid")

    slug: Slug
    title: Title
    description: Description = ""
    kind: Literal["venv", "conda", "modules", "container"]
    prefix: str = Field("", max_length=250)
    modules: Modules = Field(default_factory=list)
    image: str = Field("", max_length=300)
    profiles: ProfileSlugs = Field(default_factory=list)
    enabled: bool = True


class EnvironmentUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    title: Title | None = None
    description: Description | None = None
    kind: Literal["venv", "conda", "modules", "container"] | None = None
    prefix: str | None = Field(None, max_length=250)
    modules: Modules | None = None
    image: str | None = Field(None, max_length=300)
    profiles: ProfileSlugs | None = None
    enabled: bool | None = None


class EnvironmentPublic(BaseModel):
    slug: str
    title: str
    description: str
    kind: str
    prefix: str
    modules: list[str]
    image: str
    profiles: list[str]
    enabled: bool
    position: int
    version: int
    updated_at: UtcDateTime
    updated_by: str


NoticeText = Annotated[str, Field(max_length=500), AfterValidator(_one_line)]


class NoticeCreate(BaseModel):
    """A notice for every page from `starts_at` (default: now) until `ends_at`; to the members
    of `groups`, or to everyone when there are none."""

    model_config = ConfigDict(extra="forbid")

    text: NoticeText
    level: Literal["info", "warning", "danger"] = "info"
    starts_at: datetime | None = None
    ends_at: datetime
    groups: Groups = Field(default_factory=list)


class NoticePublic(BaseModel):
    id: int
    text: str
    level: str
    starts_at: datetime
    ends_at: datetime
    groups: list[str]
    created_by: str
