"""The portal's pages: the home page, and the admin pages for profiles and their history."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from gpuportal_core.profiles import DEFAULT_CULL_LIMITS, EXTRA_SBATCH_OPTIONS
from gpuportal_core.slurm_time import format_runtime
from gpuportal_portal import crud, pages, profile_service
from gpuportal_portal.cluster import ClusterUnavailable
from gpuportal_portal.deps import (
    FormDep,
    IdentityDep,
    PageAdmin,
    PageCaller,
    PartitionsDep,
    SessionDep,
)
from gpuportal_portal.models import Profile
from gpuportal_portal.schemas import ProfileCreate, ProfileUpdate

router = APIRouter(include_in_schema=False)


def _form_values(form: FormData, *, creating: bool) -> dict[str, Any]:
    """The form's fields as API values; empty optional inputs fall back to the defaults."""
    text = {key: str(value).strip() for key, value in form.items() if isinstance(value, str)}
    plain = [name for name in crud.EDITABLE if name not in ("sbatch_options", "groups", "enabled")]
    values: dict[str, Any] = {
        name: text[name]
        for name in plain
        if name in text and (text[name] or name in ("title", "description"))
    }
    if creating:
        values["slug"] = text.get("slug", "")
    else:
        values["version"] = text.get("version", "")
    values["sbatch_options"] = {
        option: text[f"sbatch_{option}"]
        for option in EXTRA_SBATCH_OPTIONS
        if text.get(f"sbatch_{option}")
    }
    values["groups"] = [g.strip() for g in text.get("groups", "").split(",") if g.strip()]
    values["enabled"] = "enabled" in text
    return values


def _profile_form(profile: Profile | None) -> dict[str, Any]:
    if profile is None:
        return {
            "slug": "",
            "title": "",
            "description": "",
            "gpus": 1,
            "cores_per_gpu": 8,
            "mem_per_gpu_gb": 48,
            "default_runtime": "08:00:00",
            "max_runtime": "24:00:00",
            "partition": "gpu",
            "sbatch_options": {},
            "groups": [],
            "enabled": True,
            **{name: format_runtime(seconds) for name, seconds in DEFAULT_CULL_LIMITS.items()},
        }
    return {"slug": profile.slug, "version": profile.version, **crud.editable_values(profile)}


@router.get("/", response_class=HTMLResponse)
def home(request: Request, session: SessionDep, caller: PageCaller) -> HTMLResponse:
    profiles = [
        p
        for p in crud.list_profiles(session)
        if p.enabled and (not p.groups or not caller.groups.isdisjoint(p.groups))
    ]
    return pages.render(
        request,
        "home.html",
        {"caller": caller, "profiles": [crud.to_resource_profile(p) for p in profiles]},
    )


@router.get("/admin", response_class=HTMLResponse)
def admin_home(request: Request, session: SessionDep, admin: PageAdmin) -> HTMLResponse:
    return pages.render(
        request,
        "admin.html",
        {
            "caller": admin,
            "profiles": crud.list_profiles(session),
            "environments": crud.list_environments(session),
            "audit": crud.list_audit(session, limit=50),
            "runtime": crud.editable_values,
            "saved": pages.saved_note(request),
        },
    )


@router.get("/admin/profiles/new", response_class=HTMLResponse)
def new_profile_page(request: Request, admin: PageAdmin) -> HTMLResponse:
    return pages.render(
        request,
        "profile_form.html",
        {"caller": admin, "creating": True, "form": _profile_form(None), "errors": {}},
    )


@router.post("/admin/profiles/new", response_class=HTMLResponse)
def new_profile(
    request: Request,
    form: FormDep,
    session: SessionDep,
    partitions: PartitionsDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    values = _form_values(form, creating=True)
    errors: dict[str, str] = {}
    try:
        data = ProfileCreate.model_validate(values)
        profile_service.create(session, partitions, data=data, actor=admin.name)
    except (ValidationError, profile_service.RuleViolation, ClusterUnavailable) as error:
        errors = pages.field_errors(error)
    except crud.SlugTaken:
        errors = {"slug": "a profile with this slug exists; choose another"}
    else:
        return pages.after_save(request, "profile", data.slug)
    return pages.render(
        request,
        "profile_form.html",
        {
            "caller": admin,
            "creating": True,
            "form": {**_profile_form(None), **values},
            "errors": errors,
        },
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


@router.get("/admin/profiles/{slug}", response_class=HTMLResponse)
def edit_profile_page(
    slug: str, request: Request, session: SessionDep, admin: PageAdmin
) -> HTMLResponse:
    profile = crud.get_profile(session, slug=slug)
    if profile is None:
        return pages.not_found(request, "profile", slug)
    return pages.render(
        request,
        "profile_form.html",
        {"caller": admin, "creating": False, "form": _profile_form(profile), "errors": {}},
    )


@router.post("/admin/profiles/{slug}", response_class=HTMLResponse)
def edit_profile(
    slug: str,
    request: Request,
    form: FormDep,
    session: SessionDep,
    partitions: PartitionsDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    profile = crud.get_profile(session, slug=slug)
    if profile is None:
        return pages.not_found(request, "profile", slug)
    values = _form_values(form, creating=False)
    errors: dict[str, str] = {}
    conflict: Profile | None = None
    try:
        data = ProfileUpdate.model_validate(values)
        profile_service.update(session, partitions, profile=profile, data=data, actor=admin.name)
    except (ValidationError, profile_service.RuleViolation, ClusterUnavailable) as error:
        errors = pages.field_errors(error)
    except crud.VersionConflict as stale:
        conflict = stale.current if isinstance(stale.current, Profile) else profile
    else:
        return pages.after_save(request, "profile", slug)
    if conflict is not None:
        # Show what is stored now, with the version to save against, and what this admin typed.
        return pages.render(
            request,
            "profile_form.html",
            {
                "caller": admin,
                "creating": False,
                "form": _profile_form(conflict),
                "errors": {},
                "conflict": {"by": conflict.updated_by, "yours": values},
            },
            status_code=status.HTTP_409_CONFLICT,
        )
    return pages.render(
        request,
        "profile_form.html",
        {
            "caller": admin,
            "creating": False,
            "form": {**_profile_form(profile), **values, "slug": slug},
            "errors": errors,
        },
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


@router.post("/admin/profiles/{slug}/move", response_class=HTMLResponse)
def move_profile(
    slug: str,
    request: Request,
    form: FormDep,
    session: SessionDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    slugs = [p.slug for p in crud.list_profiles(session)]
    if slug not in slugs:
        return pages.not_found(request, "profile", slug)
    index = slugs.index(slug)
    target = index - 1 if form.get("direction") == "up" else index + 1
    if 0 <= target < len(slugs):
        slugs[index], slugs[target] = slugs[target], slugs[index]
        crud.reorder_profiles(session, slugs=slugs, actor=admin.name)
    return pages.after_save(request, "order", slug)
