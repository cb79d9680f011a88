"""REST API for resource profiles: read what the caller may use; admins write."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Response, status

from gpuportal_portal import crud, profile_service
from gpuportal_portal.api_errors import declared
from gpuportal_portal.deps import ApiAdmin, ApiCaller, PartitionsDep, SessionDep, SettingsDep
from gpuportal_portal.identity import Caller
from gpuportal_portal.models import Profile
from gpuportal_portal.schemas import ProfileCreate, ProfileOrder, ProfilePublic, ProfileUpdate

router = APIRouter(prefix="/api", tags=["profiles"], responses=declared(401, 403, 404, 409, 503))


def _visible(profile: Profile, caller: Caller) -> bool:
    spec = crud.to_resource_profile(profile)
    if caller.kind == "hub":
        # The spawner gets every enabled profile with its groups and filters per user itself.
        return spec.enabled
    return spec.enabled and spec.visible_to(caller.groups)


@router.get("/profiles", response_model=list[ProfilePublic])
def list_profiles(session: SessionDep, caller: ApiCaller, all: bool = False) -> list[ProfilePublic]:
    """The profiles the caller may spawn, in order; `all=true` (admins) adds hidden and disabled."""
    if all and not caller.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Only admins may list every profile.")
    profiles = crud.list_profiles(session)
    return [crud.to_public(p) for p in profiles if all or _visible(p, caller)]


@router.get("/profiles/{slug}", response_model=ProfilePublic)
def get_profile(slug: str, session: SessionDep, caller: ApiCaller) -> ProfilePublic:
    profile = crud.get_profile(session, slug=slug)
    if profile is None or not (caller.is_admin or _visible(profile, caller)):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No profile {slug!r} for you.")
    return crud.to_public(profile)


@router.post("/profiles", response_model=ProfilePublic, status_code=status.HTTP_201_CREATED)
def create_profile(
    data: ProfileCreate,
    session: SessionDep,
    partitions: PartitionsDep,
    admin: ApiAdmin,
    settings: SettingsDep,
) -> ProfilePublic:
    """Add a profile; it is checked against the cluster's partitions first. Without a
    partition it gets the deployment's (PORTAL_DEFAULT_PARTITION)."""
    profile = profile_service.create(
        session,
        partitions,
        data=data,
        actor=admin.name,
        default_partition=settings.default_partition,
        kind_rules=settings.gpu_kinds,
    )
    return crud.to_public(profile)


@router.patch("/profiles/{slug}", response_model=ProfilePublic)
def update_profile(
    slug: str, data: ProfileUpdate, session: SessionDep, partitions: PartitionsDep, admin: ApiAdmin
) -> ProfilePublic:
    """Change fields of a profile. `version` must be the one you read: if someone saved since,
    the answer is 409 with the current profile, and nothing is changed."""
    profile = crud.get_profile(session, slug=slug)
    if profile is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No profile {slug!r}.")
    updated = profile_service.update(
        session, partitions, profile=profile, data=data, actor=admin.name
    )
    return crud.to_public(updated)


@router.delete("/profiles/{slug}", status_code=status.HTTP_204_NO_CONTENT)
def delete_profile(
    slug: str,
    session: SessionDep,
    admin: ApiAdmin,
    version: Annotated[int, Query(description="The version you read (409 if it moved on).")],
) -> Response:
    """Remove a profile. Sessions started with it run on (their Extend is no longer offered);
    spawn pages drop it at once. To keep it for later, disable it instead (`enabled: false`)."""
    profile = crud.get_profile(session, slug=slug)
    if profile is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No profile {slug!r}.")
    crud.delete_profile(session, profile=profile, expected_version=version, actor=admin.name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.put("/profiles-order", response_model=list[ProfilePublic])
def reorder_profiles(
    order: ProfileOrder, session: SessionDep, admin: ApiAdmin
) -> list[ProfilePublic]:
    """Set the order of the spawn page: every slug once."""
    try:
        profiles = crud.reorder_profiles(session, slugs=order.slugs, actor=admin.name)
    except ValueError as error:
        # In the shape of every other 422: a list of field problems.
        problem = {"loc": ["body", "slugs"], "msg": str(error), "type": "rule"}
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, [problem]) from None
    return [crud.to_public(p) for p in profiles]
