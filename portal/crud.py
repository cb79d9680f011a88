"""Reading and writing profiles, each write with its audit record, in one transaction."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from portal.models import AuditRecord, Profile, utcnow
from portal.schemas import ProfilePublic
from spawner.core.profiles import (
    DEFAULT_CORES_PER_GPU,
    DEFAULT_MAX_RUNTIME,
    DEFAULT_MEM_PER_GPU_GB,
    DEFAULT_RUNTIME,
    ResourceProfile,
    default_profile_config,
)
from spawner.core.runtime import format_runtime, parse_runtime

# Fields an admin edits; runtimes travel as HH:MM:SS and are stored in seconds.
EDITABLE = (
    "title",
    "description",
    "gpus",
    "cores_per_gpu",
    "mem_per_gpu_gb",
    "default_runtime",
    "max_runtime",
    "partition",
    "sbatch_options",
    "groups",
    "enabled",
)
RUNTIME_FIELDS = ("default_runtime", "max_runtime")


class VersionConflict(Exception):
    """The profile changed since the editor loaded it; carries the current one."""

    def __init__(self, current: Profile) -> None:
        super().__init__(f"profile {current.slug} is at version {current.version}")
        self.current = current


class SlugTaken(Exception):
    pass


def editable_values(profile: Profile) -> dict[str, Any]:
    """The profile's editable fields as the API shows them (runtimes as HH:MM:SS)."""
    values = {name: getattr(profile, name) for name in EDITABLE}
    for name in RUNTIME_FIELDS:
        values[name] = format_runtime(values[name])
    return values


def to_public(profile: Profile) -> ProfilePublic:
    return ProfilePublic(
        slug=profile.slug,
        position=profile.position,
        version=profile.version,
        updated_at=profile.updated_at,
        updated_by=profile.updated_by,
        **editable_values(profile),
    )


def to_resource_profile(profile: Profile) -> ResourceProfile:
    """The spawner's view of a stored profile."""
    return ResourceProfile(
        slug=profile.slug,
        title=profile.title,
        gpus=profile.gpus,
        partition=profile.partition,
        cores_per_gpu=profile.cores_per_gpu,
        mem_per_gpu_gb=profile.mem_per_gpu_gb,
        default_runtime=profile.default_runtime,
        max_runtime=profile.max_runtime,
        description=profile.description,
        sbatch_options=tuple(sorted(profile.sbatch_options.items())),
        groups=frozenset(profile.groups),
        # The node-size rule was checked against sinfo when the profile was saved.
        max_gpus_per_node=profile.gpus,
    )


def list_profiles(session: Session) -> list[Profile]:
    return list(session.scalars(select(Profile).order_by(Profile.position, Profile.id)))


def get_profile(session: Session, *, slug: str) -> Profile | None:
    return session.scalar(select(Profile).where(Profile.slug == slug))


def _stored(values: dict[str, Any]) -> dict[str, Any]:
    stored = dict(values)
    for name in RUNTIME_FIELDS:
        if name in stored:
            stored[name] = parse_runtime(stored[name])
    return stored


def _audit(
    session: Session, *, actor: str, action: str, subject: str, changes: dict[str, Any]
) -> None:
    session.add(
        AuditRecord(actor=actor, action=action, kind="profile", subject=subject, changes=changes)
    )


def create_profile(session: Session, *, values: dict[str, Any], actor: str) -> Profile:
    """Add a profile at the end of the list; SlugTaken if the slug is in use."""
    if get_profile(session, slug=values["slug"]) is not None:
        raise SlugTaken(values["slug"])
    last = session.scalar(select(func.max(Profile.position)))
    profile = Profile(
        **_stored(values),
        position=(last if last is not None else -1) + 1,
        updated_by=actor,
        updated_at=utcnow(),
    )
    session.add(profile)
    session.flush()
    _audit(
        session,
        actor=actor,
        action="create",
        subject=profile.slug,
        changes={name: [None, value] for name, value in editable_values(profile).items()},
    )
    session.commit()
    return profile


def update_profile(
    session: Session,
    *,
    profile: Profile,
    changes: dict[str, Any],
    expected_version: int,
    actor: str,
) -> Profile:
    """Apply changes made on `expected_version`; VersionConflict if the profile moved on."""
    if profile.version != expected_version:
        raise VersionConflict(profile)
    before = editable_values(profile)
    differing = {name: value for name, value in changes.items() if before[name] != value}
    if not differing:
        return profile
    for name, value in _stored(differing).items():
        setattr(profile, name, value)
    profile.updated_by = actor
    profile.updated_at = utcnow()
    _audit(
        session,
        actor=actor,
        action="update",
        subject=profile.slug,
        changes={name: [before[name], value] for name, value in differing.items()},
    )
    try:
        # The version column makes this UPDATE match only the version read above, so a save
        # racing in between (another worker, another admin) fails here instead of being lost.
        session.commit()
    except StaleDataError:
        session.rollback()
        session.expire_all()
        current = get_profile(session, slug=profile.slug)
        raise VersionConflict(current if current is not None else profile) from None
    return profile


def reorder_profiles(session: Session, *, slugs: list[str], actor: str) -> list[Profile]:
    """Put the profiles in this order; every slug must be named once. ValueError otherwise."""
    profiles = list_profiles(session)
    by_slug = {profile.slug: profile for profile in profiles}
    if sorted(slugs) != sorted(by_slug):
        raise ValueError(f"name every profile once, in the new order: {', '.join(sorted(by_slug))}")
    before = [profile.slug for profile in profiles]
    if before == slugs:
        return profiles
    for position, slug in enumerate(slugs):
        by_slug[slug].position = position
    _audit(session, actor=actor, action="reorder", subject="*", changes={"order": [before, slugs]})
    session.commit()
    return list_profiles(session)


def list_audit(session: Session, *, limit: int = 200) -> list[AuditRecord]:
    query = select(AuditRecord).order_by(AuditRecord.at.desc(), AuditRecord.id.desc())
    return list(session.scalars(query.limit(limit)))


def seed_defaults(session: Session, *, partition: str) -> None:
    """The shipped gpu-1, gpu-2, gpu-4 on a database that has no profiles yet."""
    if session.scalar(select(func.count()).select_from(Profile)):
        return
    for position, entry in enumerate(default_profile_config()):
        session.add(
            Profile(
                slug=entry["slug"],
                title=entry["title"],
                description=entry["description"],
                gpus=entry["gpus"],
                cores_per_gpu=DEFAULT_CORES_PER_GPU,
                mem_per_gpu_gb=DEFAULT_MEM_PER_GPU_GB,
                default_runtime=DEFAULT_RUNTIME,
                max_runtime=DEFAULT_MAX_RUNTIME,
                partition=partition,
                sbatch_options={},
                groups=[],
                enabled=True,
                position=position,
                updated_by="(seeded)",
            )
        )
    _audit(
        session,
        actor="(seeded)",
        action="create",
        subject="*",
        changes={"profiles": [None, [entry["slug"] for entry in default_profile_config()]]},
    )
    session.commit()
