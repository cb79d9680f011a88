"""Admin pages for software environments (listed on the admin page with the profiles)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from gpuportal_portal import crud, environment_service, pages
from gpuportal_portal.deps import FormDep, IdentityDep, PageAdmin, SessionDep
from gpuportal_portal.models import Environment
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.schemas import EnvironmentCreate, EnvironmentUpdate

router = APIRouter(include_in_schema=False)


def _form_values(form: FormData, *, creating: bool) -> dict[str, Any]:
    text = {key: str(value).strip() for key, value in form.multi_items() if isinstance(value, str)}
    values: dict[str, Any] = {
        name: text.get(name, "") for name in ("title", "description", "kind", "prefix", "image")
    }
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
            "prefix": "",
            "modules": [],
            "image": "",
            "profiles": [],
            "enabled": True,
        }
    values = crud.environment_values(environment)
    return {"slug": environment.slug, "version": environment.version, **values}


def _page(
    request: Request,
    session: SessionDep,
    admin: Any,
    *,
    creating: bool,
    form: dict[str, Any],
    errors: dict[str, str],
    status_code: int = 200,
    conflict: dict[str, Any] | None = None,
) -> HTMLResponse:
    return pages.render(
        request,
        "environment_form.html",
        {
            "caller": admin,
            "creating": creating,
            "form": form,
            "errors": errors,
            "conflict": conflict,
            "profile_slugs": [p.slug for p in crud.list_profiles(session)],
        },
        status_code=status_code,
    )


@router.get("/admin/environments/new", response_class=HTMLResponse)
def new_environment_page(request: Request, session: SessionDep, admin: PageAdmin) -> HTMLResponse:
    return _page(request, session, admin, creating=True, form=_form(None), errors={})


@router.post("/admin/environments/new", response_class=HTMLResponse)
def new_environment(
    request: Request, form: FormDep, session: SessionDep, identity: IdentityDep, admin: PageAdmin
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    values = _form_values(form, creating=True)
    try:
        data = EnvironmentCreate.model_validate(values)
        environment_service.create(session, data=data, actor=admin.name)
    except (ValidationError, RuleViolation) as error:
        errors = pages.field_errors(error)
    except crud.SlugTaken:
        errors = {"slug": "an environment with this slug exists; choose another"}
    else:
        return pages.after_save(request, "environment", data.slug)
    return _page(
        request,
        session,
        admin,
        creating=True,
        form={**_form(None), **values},
        errors=errors,
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


@router.get("/admin/environments/{slug}", response_class=HTMLResponse)
def edit_environment_page(
    slug: str, request: Request, session: SessionDep, admin: PageAdmin
) -> HTMLResponse:
    environment = crud.get_environment(session, slug=slug)
    if environment is None:
        return pages.not_found(request, "environment", slug)
    return _page(request, session, admin, creating=False, form=_form(environment), errors={})


@router.post("/admin/environments/{slug}", response_class=HTMLResponse)
def edit_environment(
    slug: str,
    request: Request,
    form: FormDep,
    session: SessionDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    environment = crud.get_environment(session, slug=slug)
    if environment is None:
        return pages.not_found(request, "environment", slug)
    values = _form_values(form, creating=False)
    try:
        data = EnvironmentUpdate.model_validate(values)
        environment_service.update(session, environment=environment, data=data, actor=admin.name)
    except (ValidationError, RuleViolation) as error:
        errors = pages.field_errors(error)
    except crud.VersionConflict as stale:
        current = stale.current if isinstance(stale.current, Environment) else environment
        return _page(
            request,
            session,
            admin,
            creating=False,
            form=_form(current),
            errors={},
            conflict={"by": current.updated_by, "yours": values},
            status_code=status.HTTP_409_CONFLICT,
        )
    else:
        return pages.after_save(request, "environment", slug)
    return _page(
        request,
        session,
        admin,
        creating=False,
        form={**_form(environment), **values, "slug": slug},
        errors=errors,
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )
