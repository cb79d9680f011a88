"""Saving profiles: field checks done, the whole-profile and cluster rules, then the store.

Shared by the REST API and the admin pages, so both refuse exactly the same things.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from portal import crud
from portal.cluster import PartitionCatalog
from portal.models import Profile
from portal.profile_rules import Problem, check_profile
from portal.schemas import ProfileCreate, ProfileUpdate


class RuleViolation(Exception):
    """The profile breaks rules; nothing was saved."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in problems))
        self.problems = problems


async def create(
    session: Session, catalog: PartitionCatalog, *, data: ProfileCreate, actor: str
) -> Profile:
    values = data.model_dump()
    problems = check_profile(values, await catalog.partitions())
    if problems:
        raise RuleViolation(problems)
    return crud.create_profile(session, values=values, actor=actor)


async def update(
    session: Session,
    catalog: PartitionCatalog,
    *,
    profile: Profile,
    data: ProfileUpdate,
    actor: str,
) -> Profile:
    if profile.version != data.version:
        raise crud.VersionConflict(profile)
    changes = data.model_dump(exclude_unset=True, exclude={"version"})
    changes = {name: value for name, value in changes.items() if value is not None}
    merged = {**crud.editable_values(profile), **changes}
    problems = check_profile(merged, await catalog.partitions())
    if problems:
        raise RuleViolation(problems)
    return crud.update_profile(
        session, profile=profile, changes=changes, expected_version=data.version, actor=actor
    )
