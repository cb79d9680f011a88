"""Resource profiles: what a user may ask for, with cores and memory derived per GPU."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuportal_core.slurm_time import describe_runtime, parse_runtime

# Slugs and Slurm names end up in sbatch options: keep them to a plain, shell-inert alphabet.
SLUG_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?")
SLURM_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

# LDAP/Unix group names, as the hub and the portal see them.
GROUP_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
# The sbatch options an admin may add to a profile, each with the values it takes. Anything
# else (--wrap, --export, --uid, ...) could change what runs or as whom, so it is not offered.
EXTRA_SBATCH_OPTIONS: dict[str, re.Pattern[str]] = {
    "account": SLURM_NAME_RE,
    "qos": SLURM_NAME_RE,
    "reservation": SLURM_NAME_RE,
    # Node features with Slurm's operators: "a100", "a100&ib", "[rack1|rack2]".
    "constraint": re.compile(r"[A-Za-z0-9_.&|,:*\[\]-]{1,200}"),
}

DEFAULT_CORES_PER_GPU = 8
DEFAULT_MEM_PER_GPU_GB = 48
DEFAULT_RUNTIME = 8 * 3600
DEFAULT_MAX_RUNTIME = 24 * 3600
# The culling limits of a profile, as its fields, the API and the admin page name them.
CULL_LIMITS = ("idle_limit", "gpu_idle_limit", "queue_limit")
# What a new profile in the portal starts with: 1 h idle, 2 h with idle GPUs, 4 h in the queue.
DEFAULT_CULL_LIMITS = {"idle_limit": 3600, "gpu_idle_limit": 7200, "queue_limit": 4 * 3600}


class ProfileError(ValueError):
    """A profile definition that breaks a rule; the message names the field and the rule."""


@dataclass(frozen=True)
class ResourceProfile:
    """One choice on the spawn page: N GPUs on one node, cores and memory following the GPUs."""

    slug: str
    title: str
    gpus: int
    partition: str = "gpu"
    cores_per_gpu: int = DEFAULT_CORES_PER_GPU
    mem_per_gpu_gb: int = DEFAULT_MEM_PER_GPU_GB
    default_runtime: int = DEFAULT_RUNTIME
    max_runtime: int = DEFAULT_MAX_RUNTIME
    description: str = ""
    # Allow-listed extra sbatch options, e.g. (("account", "ml"), ("qos", "short")).
    sbatch_options: tuple[tuple[str, str], ...] = ()
    # LDAP groups that may see and use the profile; empty means everyone.
    groups: frozenset[str] = frozenset()
    # Culling, in seconds (0: never): a session idle this long, whose GPUs sat idle this long,
    # or whose job waited in the queue this long is stopped (see gpuportal_core.culling).
    idle_limit: int = 0
    gpu_idle_limit: int = 0
    queue_limit: int = 0
    max_gpus_per_node: int = field(default=4, compare=False)

    def __post_init__(self) -> None:
        if not SLUG_RE.fullmatch(self.slug):
            raise ProfileError(
                f"slug {self.slug!r}: use 1-40 lowercase letters, digits and inner dashes"
            )
        if not self.title.strip() or "\n" in self.title:
            raise ProfileError(f"{self.slug}: title must be one non-empty line")
        if not 1 <= self.gpus <= self.max_gpus_per_node:
            raise ProfileError(
                f"{self.slug}: gpus must be between 1 and {self.max_gpus_per_node} (one node), "
                f"got {self.gpus}"
            )
        if not SLURM_NAME_RE.fullmatch(self.partition):
            raise ProfileError(f"{self.slug}: partition {self.partition!r} is not a Slurm name")
        if self.cores_per_gpu < 1 or self.mem_per_gpu_gb < 1:
            raise ProfileError(f"{self.slug}: cores and memory per GPU must be at least 1")
        if not self.max_runtime >= 60:
            raise ProfileError(f"{self.slug}: max_runtime must be at least one minute")
        if not 60 <= self.default_runtime <= self.max_runtime:
            raise ProfileError(
                f"{self.slug}: default_runtime must be between one minute and max_runtime"
            )

        for name in CULL_LIMITS:
            limit = getattr(self, name)
            if limit != 0 and limit < 60:
                raise ProfileError(
                    f"{self.slug}: {name} must be 00:00:00 (never) or at least one minute"
                )
        for option, value in self.sbatch_options:
            check_sbatch_option(option, value, where=self.slug)
        for group in self.groups:
            if not GROUP_RE.fullmatch(group):
                raise ProfileError(f"{self.slug}: {group!r} is not a group name")

    def visible_to(self, groups: Iterable[str]) -> bool:
        """Whether a member of these groups may see and spawn the profile."""
        return not self.groups or not self.groups.isdisjoint(groups)

    @property
    def cores(self) -> int:
        return self.gpus * self.cores_per_gpu

    @property
    def mem_gb(self) -> int:
        return self.gpus * self.mem_per_gpu_gb

    def summary(self) -> str:
        """The line the spawn page shows under the title."""
        gpu_word = "GPU" if self.gpus == 1 else "GPUs"
        return (
            f"{self.gpus} {gpu_word} · {self.cores} CPU cores · {self.mem_gb} GB memory · "
            f"default {describe_runtime(self.default_runtime)}, "
            f"up to {describe_runtime(self.max_runtime)}"
        )


def check_sbatch_option(option: str, value: str, *, where: str) -> None:
    """Refuse an extra sbatch option outside the allow-list, or a value outside its alphabet."""
    rule = EXTRA_SBATCH_OPTIONS.get(option)
    if rule is None:
        raise ProfileError(
            f"{where}: sbatch option {option!r} is not allowed; "
            f"allowed: {', '.join(EXTRA_SBATCH_OPTIONS)}"
        )
    if not rule.fullmatch(value):
        raise ProfileError(
            f"{where}: {option} value {value!r} may only hold letters, digits and _ . -"
            + (" & | , : * [ ]" if option == "constraint" else "")
        )


def visible_profiles(
    profiles: Sequence[ResourceProfile], groups: Iterable[str]
) -> list[ResourceProfile]:
    """The profiles a member of these groups may see, in order."""
    member_of = frozenset(groups)
    return [profile for profile in profiles if profile.visible_to(member_of)]


def profile_from_config(
    entry: Mapping[str, Any],
    *,
    cores_per_gpu: int = DEFAULT_CORES_PER_GPU,
    mem_per_gpu_gb: int = DEFAULT_MEM_PER_GPU_GB,
    partition: str = "gpu",
    max_gpus_per_node: int = 4,
) -> ResourceProfile:
    """A profile from a config dict; runtimes there are "HH:MM:SS" strings.

    Per-GPU figures and the partition fall back to the deployment-wide values, so a profile
    entry can be as short as {"slug": "gpu-2", "title": "2 GPUs", "gpus": 2}.
    """
    known = {
        "slug",
        "title",
        "gpus",
        "partition",
        "cores_per_gpu",
        "mem_per_gpu_gb",
        "default_runtime",
        "max_runtime",
        "description",
        *CULL_LIMITS,
    }
    unknown = set(entry) - known
    if unknown:
        raise ProfileError(
            f"profile {entry.get('slug', '?')}: unknown keys {sorted(unknown)}; "
            f"allowed: {sorted(known)}"
        )
    try:
        return ResourceProfile(
            slug=str(entry["slug"]),
            title=str(entry.get("title", entry["slug"])),
            gpus=int(entry["gpus"]),
            partition=str(entry.get("partition", partition)),
            cores_per_gpu=int(entry.get("cores_per_gpu", cores_per_gpu)),
            mem_per_gpu_gb=int(entry.get("mem_per_gpu_gb", mem_per_gpu_gb)),
            default_runtime=parse_runtime(str(entry.get("default_runtime", "08:00:00"))),
            max_runtime=parse_runtime(str(entry.get("max_runtime", "24:00:00"))),
            description=str(entry.get("description", "")),
            max_gpus_per_node=max_gpus_per_node,
            idle_limit=_limit(entry, "idle_limit"),
            gpu_idle_limit=_limit(entry, "gpu_idle_limit"),
            queue_limit=_limit(entry, "queue_limit"),
        )
    except KeyError as missing:
        raise ProfileError(f"profile entry {dict(entry)!r} lacks {missing}") from None
    except ValueError as bad:
        if isinstance(bad, ProfileError):
            raise
        raise ProfileError(f"profile {entry.get('slug', '?')}: {bad}") from None


def profile_from_record(record: Mapping[str, Any]) -> ResourceProfile:
    """A profile from the portal's API answer (runtimes "HH:MM:SS", options and groups).

    The portal checked it against the cluster when it was saved; it is checked again here, as
    everything that reaches an sbatch script is.
    """
    try:
        return ResourceProfile(
            slug=str(record["slug"]),
            title=str(record["title"]),
            gpus=int(record["gpus"]),
            partition=str(record["partition"]),
            cores_per_gpu=int(record["cores_per_gpu"]),
            mem_per_gpu_gb=int(record["mem_per_gpu_gb"]),
            default_runtime=parse_runtime(str(record["default_runtime"])),
            max_runtime=parse_runtime(str(record["max_runtime"])),
            description=str(record.get("description", "")),
            sbatch_options=tuple(sorted(dict(record.get("sbatch_options") or {}).items())),
            groups=frozenset(record.get("groups") or ()),
            max_gpus_per_node=int(record["gpus"]),
            idle_limit=_limit(record, "idle_limit"),
            gpu_idle_limit=_limit(record, "gpu_idle_limit"),
            queue_limit=_limit(record, "queue_limit"),
        )
    except (KeyError, TypeError) as error:
        raise ProfileError(f"profile record {record.get('slug', '?')!r} lacks {error}") from None
    except ValueError as bad:
        if isinstance(bad, ProfileError):
            raise
        raise ProfileError(f"profile {record.get('slug', '?')}: {bad}") from None


def _limit(entry: Mapping[str, Any], name: str) -> int:
    """A culling limit in a config entry or API record ("HH:MM:SS"; absent: never)."""
    return parse_runtime(str(entry.get(name) or "00:00:00"))


def default_profile_config() -> list[dict[str, Any]]:
    """The shipped profiles: 1, 2 and 4 GPUs on one node."""
    return [
        {"slug": "gpu-1", "title": "1 GPU", "gpus": 1, "description": "Notebooks, debugging"},
        {"slug": "gpu-2", "title": "2 GPUs", "gpus": 2, "description": "Data-parallel training"},
        {"slug": "gpu-4", "title": "4 GPUs", "gpus": 4, "description": "A whole node"},
    ]


def load_profiles(entries: Iterable[Mapping[str, Any]], **defaults: Any) -> list[ResourceProfile]:
    """Profiles from config, with duplicate slugs refused (the slug is the user's handle)."""
    profiles = [profile_from_config(entry, **defaults) for entry in entries]
    if not profiles:
        raise ProfileError("at least one resource profile is needed")
    slugs = [p.slug for p in profiles]
    duplicates = sorted({s for s in slugs if slugs.count(s) > 1})
    if duplicates:
        raise ProfileError(f"duplicate profile slugs: {duplicates}")
    return profiles


def find_profile(profiles: Sequence[ResourceProfile], slug: str) -> ResourceProfile | None:
    return next((p for p in profiles if p.slug == slug), None)
