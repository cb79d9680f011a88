"""The portal's pages: the home page, and the admin pages for profiles and their history."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from gpuportal_core.profiles import DEFAULT_CULL_LIMITS, EXTRA_SBATCH_OPTIONS
from gpuportal_core.slurm_time import format_runtime
from gpuportal_portal import crud, notice_service, pages, profile_service
from gpuportal_portal.admin_forms import AdminForm
from gpuportal_portal.deps import (
    FormDep,
    IdentityDep,
    PageAdmin,
    PageCaller,
    PartitionsDep,
    SessionDep,
    SettingsDep,
)
from gpuportal_portal.identity import Caller
from gpuportal_portal.models import Notice, Profile, utcnow
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.schemas import NoticeCreate, ProfileCreate, ProfileUpdate
from gpuportal_portal.waste import week_waste

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


def _profile_form(profile: Profile | None, partition: str = "gpu") -> dict[str, Any]:
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
            "partition": partition,
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
    return _admin_page(request, session, admin)


def _admin_page(
    request: Request,
    session: Session,
    admin: Caller,
    *,
    notice_errors: dict[str, str] | None = None,
    notice_form: dict[str, str] | None = None,
) -> HTMLResponse:
    return pages.render(
        request,
        "admin.html",
        {
            "caller": admin,
            "profiles": crud.list_profiles(session),
            "environments": crud.list_environments(session),
            "notices": [notice_service.public(n) for n in notice_service.not_ended(session)],
            "notice_errors": notice_errors or {},
            "notice_form": notice_form or {"level": "info"},
            "audit": crud.list_audit(session, limit=50),
            "waste": week_waste(session, utcnow()),
            "runtime": crud.editable_values,
            "saved": pages.saved_note(request),
        },
        status_code=422 if notice_errors else 200,
    )


@router.post("/admin/notices", response_class=HTMLResponse)
def post_notice(
    request: Request,
    form: FormDep,
    session: SessionDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    sent = {
        k: str(form.get(k, "")).strip() for k in ("text", "level", "starts_at", "ends_at", "groups")
    }
    try:
        data = NoticeCreate.model_validate(
            {
                "text": sent["text"],
                "level": sent["level"] or "info",
                "starts_at": sent["starts_at"] or None,
                "ends_at": sent["ends_at"],
                "groups": [g.strip() for g in sent["groups"].split(",") if g.strip()],
            }
        )
        notice = notice_service.create(session, data=data, actor=admin.name)
    except (ValidationError, RuleViolation) as error:
        # Each refusal under its field; the page puts the address back to the admin page's.
        errors = pages.field_errors(error)
        return _admin_page(request, session, admin, notice_errors=errors, notice_form=sent)
    return pages.after_save(request, "notice", str(notice.id))


@router.post("/admin/notices/{notice_id}/remove", response_class=HTMLResponse)
def remove_notice(
    notice_id: int,
    request: Request,
    form: FormDep,
    session: SessionDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    notice = session.get(Notice, notice_id)
    if notice is None:
        return pages.not_found(request, "notice", str(notice_id))
    notice_service.remove(session, notice=notice, actor=admin.name)
    return pages.after_save(request, "removed", str(notice_id))


PROFILE_FORM: AdminForm[Profile] = AdminForm(
    kind="profile",
    template="profile_form.html",
    blank=lambda: _profile_form(None),
    stored=_profile_form,
    read=lambda form, creating: _form_values(form, creating=creating),
)


@router.get("/admin/profiles/new", response_class=HTMLResponse)
def new_profile_page(request: Request, admin: PageAdmin, settings: SettingsDep) -> HTMLResponse:
    blank = _profile_form(None, settings.default_partition)
    return PROFILE_FORM.page(request, admin, creating=True, form=blank)


@router.post("/admin/profiles/new", response_class=HTMLResponse)
def new_profile(
    request: Request,
    form: FormDep,
    session: SessionDep,
    partitions: PartitionsDep,
    identity: IdentityDep,
    admin: PageAdmin,
    settings: SettingsDep,
) -> Response:
    def save(values: dict[str, Any]) -> str:
        data = ProfileCreate.model_validate(values)
        made = profile_service.create(
            session,
            partitions,
            data=data,
            actor=admin.name,
            default_partition=settings.default_partition,
        )
        return made.slug

    return PROFILE_FORM.create(request, form, identity, admin, save)


@router.get("/admin/profiles/{slug}", response_class=HTMLResponse)
def edit_profile_page(
    slug: str, request: Request, session: SessionDep, admin: PageAdmin
) -> HTMLResponse:
    profile = crud.get_profile(session, slug=slug)
    if profile is None:
        return pages.not_found(request, "profile", slug)
    return PROFILE_FORM.page(request, admin, creating=False, form=_profile_form(profile))


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
    def save(profile: Profile, values: dict[str, Any]) -> Profile:
        data = ProfileUpdate.model_validate(values)
        return profile_service.update(
            session, partitions, profile=profile, data=data, actor=admin.name
        )

    current = crud.get_profile(session, slug=slug)
    return PROFILE_FORM.edit(request, form, identity, admin, slug=slug, current=current, save=save)


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
