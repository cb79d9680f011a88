"""REST API for software environments: everyone reads the enabled ones; admins write."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status

from gpuportal_portal import crud, environment_service
from gpuportal_portal.api_errors import declared
from gpuportal_portal.deps import ApiAdmin, ApiCaller, SessionDep
from gpuportal_portal.schemas import EnvironmentCreate, EnvironmentPublic, EnvironmentUpdate

router = APIRouter(prefix="/api", tags=["environments"], responses=declared(401, 403, 404, 409))


@router.get("/environments", response_model=list[EnvironmentPublic])
def list_environments(
    session: SessionDep, caller: ApiCaller, all: bool = False
) -> list[EnvironmentPublic]:
    """Enabled environments, each with the profiles that offer it; `all=true` (admins) adds
    disabled ones."""
    if all and not caller.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Only admins may list every environment.")
    return [
        crud.to_environment_public(env)
        for env in crud.list_environments(session)
        if all or env.enabled
    ]


@router.post("/environments", response_model=EnvironmentPublic, status_code=status.HTTP_201_CREATED)
def create_environment(
    data: EnvironmentCreate, session: SessionDep, admin: ApiAdmin
) -> EnvironmentPublic:
    environment = environment_service.create(session, data=data, actor=admin.name)
    return crud.to_environment_public(environment)


@router.patch("/environments/{slug}", response_model=EnvironmentPublic)
def update_environment(
    slug: str, data: EnvironmentUpdate, session: SessionDep, admin: ApiAdmin
) -> EnvironmentPublic:
    """Change an environment; a stale `version` is a 409 with the current values."""
    environment = crud.get_environment(session, slug=slug)
    if environment is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No environment {slug!r}.")
    updated = environment_service.update(
        session, environment=environment, data=data, actor=admin.name
    )
    return crud.to_environment_public(updated)
