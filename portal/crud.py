"""Reading and writing profiles, each write with its audit record, in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from gpuportal_core.profiles import (
    ProfileSpec,
    ResourceProfile,
    default_profile_config,
    spec_values,
)
from gpuportal_portal.audit_stream import audit_on_commit
from gpuportal_portal.models import AuditRecord, Environment, Profile, utcnow
from gpuportal_portal.schemas import EnvironmentPublic, ProfilePublic


class VersionConflict(Exception):
    """The row changed since the editor loaded it; carries the current one."""

    def __init__(self, current: Profile | Environment) -> None:
        super().__init__(f"{current.slug} is at version {current.version}")
        self.current = current


class SlugTaken(Exception):
    """A profile or environment with this slug exists."""

    def __init__(self, kind: str, slug: str) -> None:
        super().__init__(f"a {kind} with slug {slug!r} exists")
        self.kind = kind
        self.slug = slug


def editable_values(profile: Profile) -> dict[str, Any]:
    """The profile's spec as the API shows it (runtimes as HH:MM:SS); a field added to the
    spec since the profile was saved reads as its default."""
    return spec_values(ProfileSpec.model_validate(profile.spec))


def to_public(profile: Profile) -> ProfilePublic:
    return ProfilePublic(
        slug=profile.slug,
        position=profile.position,
        version=profile.version,
        updated_at=profile.updated_at,
        updated_by=profile.updated_by,
        **profile.spec,
    )


def to_resource_profile(profile: Profile) -> ResourceProfile:
    """The spawner's view of a stored profile."""
    return ResourceProfile.model_validate({**profile.spec, "slug": profile.slug})


def list_profiles(session: Session) -> list[Profile]:
    return list(session.scalars(select(Profile).order_by(Profile.position, Profile.id)))


def get_profile(session: Session, *, slug: str) -> Profile | None:
    return session.scalar(select(Profile).where(Profile.slug == slug))


def _audit(
    session: Session,
    *,
    actor: str,
    action: str,
    subject: str,
    changes: dict[str, Any],
    kind: str = "profile",
) -> None:
    session.add(
        AuditRecord(actor=actor, action=action, kind=kind, subject=subject, changes=changes)
    )
    audit_on_commit(
        session, f"{kind}_edit", user=actor, change=action, subject=subject, changes=changes
    )


Versioned = TypeVar("Versioned", Profile, Environment)


def _insert(
    session: Session,
    row: Versioned,
    *,
    kind: str,
    actor: str,
    shown: Callable[[Versioned], dict[str, Any]],
) -> Versioned:
    """Add a row at the end of its list, with its audit record; SlugTaken if the slug is used."""
    model = type(row)
    if session.scalar(select(model).where(model.slug == row.slug)) is not None:
        raise SlugTaken(kind, row.slug)
    last = session.scalar(select(func.max(model.position)))
    row.position = (last if last is not None else -1) + 1
    row.updated_by = actor
    row.updated_at = utcnow()
    session.add(row)
    session.flush()
    changes = {name: [None, value] for name, value in shown(row).items()}
    _audit(session, actor=actor, action="create", subject=row.slug, kind=kind, changes=changes)
    session.commit()
    return row


def _update(
    session: Session,
    *,
    row: Versioned,
    kind: str,
    before: dict[str, Any],
    changes: dict[str, Any],
    expected_version: int,
    actor: str,
    write: Callable[[Versioned, dict[str, Any]], None] | None = None,
) -> Versioned:
    """Write the fields that differ, with their audit record; VersionConflict if the row moved
    on since `expected_version` was read (checked again by the database at commit)."""
    if row.version != expected_version:
        raise VersionConflict(row)
    differing = {name: value for name, value in changes.items() if before[name] != value}
    if not differing:
        return row
    if write is not None:
        write(row, differing)
    else:
        for name, value in differing.items():
            setattr(row, name, value)
    row.updated_by = actor
    row.updated_at = utcnow()
    _audit(
        session,
        actor=actor,
        action="update",
        subject=row.slug,
        kind=kind,
        changes={name: [before[name], value] for name, value in differing.items()},
    )
    try:
        # The version column makes this UPDATE match only the version read before, so a save
        # racing in between (another worker, another admin) fails here instead of being lost.
        session.commit()
    except StaleDataError:
        session.rollback()
        session.expire_all()
        current = session.scalar(select(type(row)).where(type(row).slug == row.slug))
        raise VersionConflict(current if current is not None else row) from None
    return row


def _checked_spec(values: dict[str, Any]) -> dict[str, Any]:
    """The spec as stored: checked once more, every field written out (API form)."""
    return spec_values(ProfileSpec.model_validate({k: v for k, v in values.items() if k != "slug"}))


def _write_spec(profile: Profile, changes: dict[str, Any]) -> None:
    profile.spec = _checked_spec({**profile.spec, **changes})


def create_profile(session: Session, *, values: dict[str, Any], actor: str) -> Profile:
    """Add a profile at the end of the list; SlugTaken if the slug is in use."""
    return _insert(
        session,
        Profile(slug=values["slug"], spec=_checked_spec(values)),
        kind="profile",
        actor=actor,
        shown=editable_values,
    )


def update_profile(
    session: Session,
    *,
    profile: Profile,
    changes: dict[str, Any],
    expected_version: int,
    actor: str,
) -> Profile:
    """Apply changes made on `expected_version`; VersionConflict if the profile moved on."""
    return _update(
        session,
        row=profile,
        kind="profile",
        before=editable_values(profile),
        changes=changes,
        expected_version=expected_version,
        actor=actor,
        write=_write_spec,
    )


def delete_profile(
    session: Session, *, profile: Profile, expected_version: int, actor: str
) -> None:
    """Remove a profile read at `expected_version` (VersionConflict if it moved on since), with
    its audit record. Sessions started with it run on; spawn pages drop it at once."""
    if profile.version != expected_version:
        raise VersionConflict(profile)
    changes = {name: [value, None] for name, value in editable_values(profile).items()}
    _audit(
        session, actor=actor, action="remove", subject=profile.slug, kind="profile", changes=changes
    )
    session.delete(profile)
    session.commit()


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


def seed_defaults(
    session: Session, *, partition: str, extra: Sequence[Mapping[str, Any]] = ()
) -> None:
    """The shipped gpu-1, gpu-2, gpu-4 (on `partition`), then the site's `extra` ones
    (PORTAL_SEED_PROFILES), on a database that has no profiles yet."""
    if session.scalar(select(func.count()).select_from(Profile)):
        return
    entries = [{**entry, "partition": partition} for entry in default_profile_config()]
    entries += [{"partition": partition, **entry} for entry in extra]
    for position, entry in enumerate(entries):
        session.add(
            Profile(
                slug=str(entry["slug"]),
                spec=_checked_spec(entry),
                position=position,
                updated_by="(seeded)",
            )
        )
    _audit(
        session,
        actor="(seeded)",
        action="create",
        subject="*",
        changes={"profiles": [None, [entry["slug"] for entry in entries]]},
    )
    session.commit()


# -- software environments ----------------------------------------------------------------

ENVIRONMENT_EDITABLE = (
    "title",
    "description",
    "kind",
    "engine",
    "prefix",
    "modules",
    "image",
    "profiles",
    "enabled",
)


def environment_values(environment: Environment) -> dict[str, Any]:
    return {name: getattr(environment, name) for name in ENVIRONMENT_EDITABLE}


def to_environment_public(environment: Environment) -> EnvironmentPublic:
    return EnvironmentPublic(
        slug=environment.slug,
        position=environment.position,
        version=environment.version,
        updated_at=environment.updated_at,
        updated_by=environment.updated_by,
        **environment_values(environment),
    )


def list_environments(session: Session) -> list[Environment]:
    query = select(Environment).order_by(Environment.position, Environment.id)
    return list(session.scalars(query))


def get_environment(session: Session, *, slug: str) -> Environment | None:
    return session.scalar(select(Environment).where(Environment.slug == slug))


def create_environment(session: Session, *, values: dict[str, Any], actor: str) -> Environment:
    return _insert(
        session, Environment(**values), kind="environment", actor=actor, shown=environment_values
    )


def update_environment(
    session: Session,
    *,
    environment: Environment,
    changes: dict[str, Any],
    expected_version: int,
    actor: str,
) -> Environment:
    return _update(
        session,
        row=environment,
        kind="environment",
        before=environment_values(environment),
        changes=changes,
        expected_version=expected_version,
        actor=actor,
    )


def seed_environments(session: Session, *, entries: list[dict[str, Any]]) -> None:
    """Environments named in the settings, on a database that has none yet."""
    if not entries or session.scalar(select(func.count()).select_from(Environment)):
        return
    for position, entry in enumerate(entries):
        session.add(Environment(**entry, position=position, updated_by="(seeded)"))
    _audit(
        session,
        actor="(seeded)",
        action="create",
        subject="*",
        kind="environment",
        changes={"environments": [None, [entry["slug"] for entry in entries]]},
    )
    session.commit()
