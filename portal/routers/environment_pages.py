"""Admin pages for software environments (listed on the admin page with the profiles)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from gpuportal_portal import crud, environment_service, pages
from gpuportal_portal.admin_forms import AdminForm
from gpuportal_portal.deps import FormDep, IdentityDep, PageAdmin, SessionDep
from gpuportal_portal.models import Environment
from gpuportal_portal.schemas import EnvironmentCreate, EnvironmentUpdate

router = APIRouter(include_in_schema=False)


def _form_values(form: FormData, *, creating: bool) -> dict[str, Any]:
    text = {key: str(value).strip() for key, value in form.multi_items() if isinstance(value, str)}
    values: dict[str, Any] = {
        name: text.get(name, "") for name in ("title", "description", "kind", "prefix", "image")
    }
    values["engine"] = text.get("engine") or "apptainer"
    values["modules"] = text.get("modules", "").split()
    values["profiles"] = [str(v) for v in form.getlist("profiles")]
    values["enabled"] = "enabled" in text
    if creating:
        values["slug"] = text.get("slug", "")
    else:
        values["version"] = text.get("version", "")
    return values


def _form(environment: Environment | None) -> dict[str, Any]:
    if environment is None:
        return {
            "slug": "",
            "title": "",
            "description": "",
            "kind": "venv",
            "engine": "podman",
            "prefix": "",
            "modules": [],
            "image": "",
            "profiles": [],
            "enabled": True,
        }
    values = crud.environment_values(environment)
    return {"slug": environment.slug, "version": environment.version, **values}


def environment_form(session: Session) -> AdminForm[Environment]:
    return AdminForm(
        kind="environment",
        template="environment_form.html",
        blank=lambda: _form(None),
        stored=_form,
        read=lambda form, creating: _form_values(form, creating=creating),
        # The profiles an environment may be offered with, as checkboxes.
        context=lambda: {"profile_slugs": [p.slug for p in crud.list_profiles(session)]},
    )


@router.get("/admin/environments/new", response_class=HTMLResponse)
def new_environment_page(request: Request, session: SessionDep, admin: PageAdmin) -> HTMLResponse:
    return environment_form(session).page(request, admin, creating=True, form=_form(None))


@router.post("/admin/environments/new", response_class=HTMLResponse)
def new_environment(
    request: Request, form: FormDep, session: SessionDep, identity: IdentityDep, admin: PageAdmin
) -> Response:
    def save(values: dict[str, Any]) -> str:
        data = EnvironmentCreate.model_validate(values)
        return environment_service.create(session, data=data, actor=admin.name).slug

    return environment_form(session).create(request, form, identity, admin, save)


@router.get("/admin/environments/{slug}", response_class=HTMLResponse)
def edit_environment_page(
    slug: str, request: Request, session: SessionDep, admin: PageAdmin
) -> HTMLResponse:
    environment = crud.get_environment(session, slug=slug)
    if environment is None:
        return pages.not_found(request, "environment", slug)
    return environment_form(session).page(request, admin, creating=False, form=_form(environment))


@router.post("/admin/environments/{slug}", response_class=HTMLResponse)
def edit_environment(
    slug: str,
    request: Request,
    form: FormDep,
    session: SessionDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    def save(environment: Environment, values: dict[str, Any]) -> Environment:
        data = EnvironmentUpdate.model_validate(values)
        return environment_service.update(
            session, environment=environment, data=data, actor=admin.name
        )

    current = crud.get_environment(session, slug=slug)
    return environment_form(session).edit(
        request, form, identity, admin, slug=slug, current=current, save=save
    )
