"""Saving software environments: the rule of each kind, and profiles that exist."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from gpuportal_adapters.image_archive import archive_problem
from gpuportal_adapters.root_owned import not_root_owned
from gpuportal_core.environments import EnvironmentSpecError, check_environment_fields
from gpuportal_portal import crud
from gpuportal_portal.models import Environment
from gpuportal_portal.profile_rules import Problem
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.schemas import EnvironmentCreate, EnvironmentUpdate


def check_environment(session: Session, values: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    try:
        check_environment_fields(
            kind=values["kind"],
            prefix=values["prefix"],
            modules=values["modules"],
            image=values["image"],
            engine=values["engine"],
        )
    except EnvironmentSpecError as error:
        problems.append(Problem(error.field, error.message))
    else:
        field, problem = owner_problem(values)
        problem = problem or image_problem(values)
        if problem:
            problems.append(Problem(field, problem))
    known = {profile.slug for profile in crud.list_profiles(session)}
    unknown = sorted(set(values["profiles"]) - known)
    if unknown:
        problems.append(
            Problem(
                "profiles",
                f"no such profile: {', '.join(unknown)}; known: {', '.join(sorted(known))}",
            )
        )
    return problems


def owner_problem(values: dict[str, Any]) -> tuple[str, str | None]:
    """The field whose path other users' sessions run, and what lets another account than
    root change it (gpuportal_adapters.root_owned); a registry reference has no path here."""
    if values["kind"] in ("venv", "conda"):
        return "prefix", not_root_owned(values["prefix"])
    if values["kind"] == "container" and values["image"].startswith("/"):
        return "image", not_root_owned(values["image"], inside=())
    return "image", None


def image_problem(values: dict[str, Any]) -> str | None:
    """A podman archive is looked into before it is offered (readable by every user, an OCI
    archive, JupyterLab and the session package inside); a registry reference is checked
    where it is pulled, at the first start in a job, which says what failed."""
    if values["kind"] != "container" or values["engine"] != "podman":
        return None
    if not values["image"].startswith("/"):
        return None
    return archive_problem(values["image"])


def create(session: Session, *, data: EnvironmentCreate, actor: str) -> Environment:
    values = data.model_dump()
    values["profiles"] = sorted(set(values["profiles"]))
    problems = check_environment(session, values)
    if problems:
        raise RuleViolation(problems)
    return crud.create_environment(session, values=values, actor=actor)


def update(
    session: Session, *, environment: Environment, data: EnvironmentUpdate, actor: str
) -> Environment:
    if environment.version != data.version:
        raise crud.VersionConflict(environment)
    changes = data.model_dump(exclude_unset=True, exclude={"version"})
    changes = {name: value for name, value in changes.items() if value is not None}
    if "profiles" in changes:
        changes["profiles"] = sorted(set(changes["profiles"]))
    merged = {**crud.environment_values(environment), **changes}
    problems = check_environment(session, merged)
    if problems:
        raise RuleViolation(problems)
    return crud.update_environment(
        session,
        environment=environment,
        changes=changes,
        expected_version=data.version,
        actor=actor,
    )
