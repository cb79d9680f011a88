"""Resource profiles: what a user may ask for, with cores and memory derived per GPU.

`ProfileSpec` is the one list of a profile's fields, with their types, limits, defaults and the
words the admin form shows. Everything else derives from it: the portal's API schemas
(gpuportal_portal.schemas), its table (one JSON column, gpuportal_portal.models), the admin form
(gpuportal_portal.profile_form), and the hub's reading of profiles from its config or from the
portal (`profile_from_config`, `profile_from_record` below). docs/explanation/architecture.md
has the steps to add a field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.config import JsonDict

from gpuportal_core.profile_fields import (
    EXTRA_SBATCH_OPTIONS,
    GROUP_RE,
    SLUG_RE,
    SLURM_NAME_RE,
    Description,
    GpuKind,
    Groups,
    Limit,
    PartitionName,
    ProfileError,
    Runtime,
    SbatchOptions,
    Slug,
    Title,
    check_sbatch_option,
)
from gpuportal_core.slurm_time import describe_runtime, format_runtime

__all__ = [
    "EXTRA_SBATCH_OPTIONS",
    "GROUP_RE",
    "SLUG_RE",
    "SLURM_NAME_RE",
    "ProfileError",
    "ProfileSpec",
    "ResourceProfile",
    "check_sbatch_option",
]

DEFAULT_CORES_PER_GPU = 8
DEFAULT_MEM_PER_GPU_GB = 48


def _culling(rule: str, word: str) -> JsonDict:
    """A culling limit's field: the admin form's section, the rule of gpuportal_core.culling
    that applies it (a `Reason`'s value), and its word in the admin list of profiles."""
    return {
        "section": "Culling",
        "section_hint": "HH:MM:SS each; 00:00:00 = never",
        "cull": rule,
        "short": word,
    }


class ProfileSpec(BaseModel):
    """What an admin sets for a profile. Runtimes are seconds, written HH:MM:SS."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: Title = Field(title="Title")
    description: Description = Field("", title="Description")
    gpus: int = Field(ge=1, le=64, title="GPUs", description="on one node")
    gpu_type: GpuKind = Field(
        "",
        title="GPU kind",
        description="as the nodes' gres.conf names it (a100, 1g.10gb for a MIG slice); "
        "empty = any kind",
    )
    cores_per_gpu: int = Field(DEFAULT_CORES_PER_GPU, ge=1, le=512, title="CPU cores per GPU")
    mem_per_gpu_gb: int = Field(DEFAULT_MEM_PER_GPU_GB, ge=1, le=4096, title="Memory per GPU (GB)")
    default_runtime: Runtime = Field(8 * 3600, title="Default time limit", description="HH:MM:SS")
    max_runtime: Runtime = Field(
        24 * 3600,
        title="Maximum time limit",
        description="HH:MM:SS, within the partition's MaxTime",
    )
    # Culling (gpuportal_core.culling), 0 for never: a session idle this long, whose GPUs sat
    # idle this long, or whose job waited in the queue this long is stopped.
    idle_limit: Limit = Field(
        3600, title="Stop a session unused for", json_schema_extra=_culling("idle", "idle")
    )
    gpu_idle_limit: Limit = Field(
        2 * 3600,
        title="Stop a session whose GPUs were idle for",
        description="even with JupyterLab open; where GPU use is measured",
        json_schema_extra=_culling("gpu_idle", "GPUs idle"),
    )
    queue_limit: Limit = Field(
        4 * 3600,
        title="Cancel a session still queued after",
        json_schema_extra=_culling("queued", "queued"),
    )
    partition: PartitionName = Field("gpu", title="Partition")
    # Allow-listed extra sbatch options, e.g. {"account": "ml", "qos": "short"}.
    sbatch_options: SbatchOptions = Field(default_factory=dict, title="sbatch options")
    groups: Groups = Field(
        (), title="LDAP groups that see it", description="comma-separated; empty = everyone"
    )
    enabled: bool = Field(True, title="Enabled (offered on the spawn page)")


def culling_fields() -> dict[str, tuple[str, str]]:
    """The spec's culling limits: each rule's name (gpuportal_core.culling.Reason) to its
    field and its word in the admin list, in the spec's order."""
    found = {}
    for name, field in ProfileSpec.model_fields.items():
        extra = field.json_schema_extra
        if isinstance(extra, dict) and isinstance(extra.get("cull"), str):
            found[str(extra["cull"])] = (name, str(extra["short"]))
    return found


def spec_values(spec: ProfileSpec) -> dict[str, Any]:
    """A profile's spec fields as the API, the table and the audit record write them."""
    values: dict[str, Any] = spec.model_dump(mode="json", include=set(ProfileSpec.model_fields))
    return values


class ResourceProfile(ProfileSpec):
    """One choice on the spawn page: N GPUs on one node, cores and memory following the GPUs."""

    slug: Slug

    @model_validator(mode="after")
    def _default_within_max(self) -> Self:
        if self.default_runtime > self.max_runtime:
            raise ValueError(
                f"default_runtime {format_runtime(self.default_runtime)} must not be over "
                f"max_runtime {format_runtime(self.max_runtime)}"
            )
        return self

    def visible_to(self, groups: Iterable[str]) -> bool:
        """Whether a member of these groups may see and spawn the profile."""
        return not self.groups or not set(self.groups).isdisjoint(groups)

    @property
    def cores(self) -> int:
        return self.gpus * self.cores_per_gpu

    @property
    def mem_gb(self) -> int:
        return self.gpus * self.mem_per_gpu_gb

    def summary(self) -> str:
        """The line the spawn page shows under the title."""
        gpu_word = "GPU" if self.gpus == 1 else "GPUs"
        kind = f" ({self.gpu_type})" if self.gpu_type else ""
        return (
            f"{self.gpus} {gpu_word}{kind} · {self.cores} CPU cores · {self.mem_gb} GB memory · "
            f"default {describe_runtime(self.default_runtime)}, "
            f"up to {describe_runtime(self.max_runtime)}"
        )


def visible_profiles(
    profiles: Sequence[ResourceProfile], groups: Iterable[str]
) -> list[ResourceProfile]:
    """The profiles a member of these groups may see, in order."""
    member_of = frozenset(groups)
    return [profile for profile in profiles if profile.visible_to(member_of)]


def profile_from_config(entry: Mapping[str, Any], **site: Any) -> ResourceProfile:
    """A profile from the hub's config; ProfileError names what is wrong. `site` holds the
    deployment's own defaults (partition, per-GPU figures), which an entry may leave out:
    {"slug": "gpu-2", "title": "2 GPUs", "gpus": 2} is a whole profile."""
    slug = str(entry.get("slug", "?"))
    return _resolve({**site, "title": slug, **entry}, slug)


def profile_from_record(record: Mapping[str, Any]) -> ResourceProfile:
    """A profile from the portal's API answer, which carries its bookkeeping beside the spec
    (version, position, ...).

    The portal checked it against the cluster when it was saved; it is checked again here, as
    everything that reaches an sbatch script is.
    """
    known = {"slug", *ProfileSpec.model_fields}
    return _resolve({k: v for k, v in record.items() if k in known}, str(record.get("slug")))


def _resolve(values: Mapping[str, Any], slug: str) -> ResourceProfile:
    try:
        return ResourceProfile.model_validate(values)
    except ValidationError as error:
        raise _profile_error(error, slug) from None


def _profile_error(error: ValidationError, slug: str) -> ProfileError:
    problems = "; ".join(_said(problem) for problem in error.errors())
    return ProfileError(f"profile {slug}: {problems}")


def _said(problem: Any) -> str:
    where = ".".join(str(part) for part in problem["loc"])
    if problem["type"] == "extra_forbidden":
        return f"unknown key {where!r}; allowed: {', '.join(ResourceProfile.model_fields)}"
    if problem["type"] == "missing":
        return f"lacks {where!r}"
    message = str(problem["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def default_profile_config() -> list[dict[str, Any]]:
    """The shipped profiles: 1, 2 and 4 GPUs on one node."""
    return [
        {"slug": "gpu-1", "title": "1 GPU", "gpus": 1, "description": "Notebooks, debugging"},
        {"slug": "gpu-2", "title": "2 GPUs", "gpus": 2, "description": "Data-parallel training"},
        {"slug": "gpu-4", "title": "4 GPUs", "gpus": 4, "description": "A whole node"},
    ]


def load_profiles(
    entries: Iterable[Mapping[str, Any]], *, max_gpus_per_node: int = 4, **site: Any
) -> list[ResourceProfile]:
    """Profiles from the hub's config, with duplicate slugs refused (the slug is the user's
    handle) and each on one node of `max_gpus_per_node` GPUs."""
    profiles = [profile_from_config(entry, **site) for entry in entries]
    if not profiles:
        raise ProfileError("at least one resource profile is needed")
    slugs = [p.slug for p in profiles]
    duplicates = sorted({s for s in slugs if slugs.count(s) > 1})
    if duplicates:
        raise ProfileError(f"duplicate profile slugs: {duplicates}")
    for profile in profiles:
        if profile.gpus > max_gpus_per_node:
            raise ProfileError(
                f"{profile.slug}: gpus must be between 1 and {max_gpus_per_node} (one node), "
                f"got {profile.gpus}"
            )
    return profiles


def find_profile(profiles: Sequence[ResourceProfile], slug: str) -> ResourceProfile | None:
    return next((p for p in profiles if p.slug == slug), None)
