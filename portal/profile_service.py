"""Saving profiles: field checks done, the whole-profile and cluster rules, then the store.

Shared by the REST API and the admin pages, so both refuse exactly the same things. Plain
functions: the routes that call them run in FastAPI's thread pool, so a slow database never
holds up the event loop; the partitions come from an async dependency.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.orm import Session

from gpuportal_core.partitions import Partition
from gpuportal_portal import crud
from gpuportal_portal.cluster import ClusterUnavailable
from gpuportal_portal.models import Profile
from gpuportal_portal.profile_rules import Problem, check_profile
from gpuportal_portal.schemas import ProfileCreate, ProfileUpdate


class RuleViolation(Exception):
    """The profile breaks rules; nothing was saved."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in problems))
        self.problems = problems


# The cluster's partitions as a request's dependency found them
# (gpuportal_portal.deps.PartitionsDep), or
# why Slurm could not say: raised only when a profile is checked against them.
Partitions = dict[str, Partition] | ClusterUnavailable


def _known(partitions: Partitions) -> dict[str, Partition]:
    if isinstance(partitions, ClusterUnavailable):
        raise partitions
    return partitions


def create(
    session: Session,
    partitions: Partitions,
    *,
    data: ProfileCreate,
    actor: str,
    default_partition: str,
    kind_rules: Mapping[str, tuple[int, int]] | None = None,
) -> Profile:
    """A new profile, checked against the cluster. Without cores and memory per GPU, a profile
    of a kind the site has figures for (PORTAL_GPU_KINDS) gets those, else the product's rule."""
    values = data.model_dump(mode="json")
    if "partition" not in data.model_fields_set:
        values["partition"] = default_partition
    site = (kind_rules or {}).get(data.gpu_type)
    if site is not None:
        given = data.model_fields_set
        for name, figure in zip(("cores_per_gpu", "mem_per_gpu_gb"), site, strict=True):
            if name not in given:
                values[name] = figure
    problems = check_profile(values, _known(partitions))
    if problems:
        raise RuleViolation(problems)
    return crud.create_profile(session, values=values, actor=actor)


def update(
    session: Session,
    partitions: Partitions,
    *,
    profile: Profile,
    data: ProfileUpdate,
    actor: str,
) -> Profile:
    if profile.version != data.version:
        raise crud.VersionConflict(profile)
    changes = data.model_dump(mode="json", exclude_unset=True, exclude={"version"})
    changes = {name: value for name, value in changes.items() if value is not None}
    merged = {**crud.editable_values(profile), **changes}
    problems = check_profile(merged, _known(partitions))
    if problems:
        raise RuleViolation(problems)
    return crud.update_profile(
        session, profile=profile, changes=changes, expected_version=data.version, actor=actor
    )
