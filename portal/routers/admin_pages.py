"""The portal's pages: the home page, and the admin pages for profiles and their history."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session

from gpuportal_core.partitions import Partition
from gpuportal_core.profiles import culling_fields
from gpuportal_portal import crud, notice_service, pages, profile_form, profile_service
from gpuportal_portal.admin_forms import AdminForm
from gpuportal_portal.cluster import ClusterUnavailable
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
from gpuportal_portal.settings import PortalSettings
from gpuportal_portal.waste import week_waste

router = APIRouter(include_in_schema=False)


def _profile_form(profile: Profile) -> dict[str, Any]:
    return {"slug": profile.slug, "version": profile.version, **crud.editable_values(profile)}


@router.get("/", response_class=HTMLResponse)
def home(request: Request, session: SessionDep, caller: PageCaller) -> HTMLResponse:
    profiles = [crud.to_resource_profile(p) for p in crud.list_profiles(session)]
    shown = [p for p in profiles if p.enabled and p.visible_to(caller.groups)]
    return pages.render(request, "home.html", {"caller": caller, "profiles": shown})


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
            "profiles": [
                crud.to_public(p).model_dump(mode="json") for p in crud.list_profiles(session)
            ],
            # The list's culling column, from the spec's culling fields: (word, field).
            "culling": [(word, name) for name, word in culling_fields().values()],
            "environments": crud.list_environments(session),
            "notices": [notice_service.public(n) for n in notice_service.not_ended(session)],
            "notice_errors": notice_errors or {},
            "notice_form": notice_form or {"level": "info"},
            "audit": crud.list_audit(session, limit=50),
            "waste": week_waste(session, utcnow()),
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
    blank=lambda: profile_form.blank_form("gpu"),
    stored=_profile_form,
    read=lambda form, creating: profile_form.read_form(form, creating=creating),
    context=lambda: {"fields": profile_form.form_fields(), "suggestions": {}},
)


def _kinds(
    partitions: dict[str, Partition] | ClusterUnavailable, settings: PortalSettings
) -> dict[str, Any]:
    """The GPU kinds the form offers, each filling in its figures per GPU (none while Slurm is
    silent: the field then takes a kind as typed, checked when saved)."""
    if isinstance(partitions, ClusterUnavailable):
        return {}
    offers = profile_form.kind_offers(partitions, settings.gpu_kinds)
    return {
        "suggestions": {
            "gpu_type": [
                {
                    "value": offer.kind,
                    "said": offer.said,
                    "fill": {
                        "cores_per_gpu": offer.cores_per_gpu,
                        "mem_per_gpu_gb": offer.mem_per_gpu_gb,
                        # A kind of one partition only (MIG slices in theirs) picks it too.
                        **(
                            {"partition": offer.partitions[0]} if len(offer.partitions) == 1 else {}
                        ),
                    },
                }
                for offer in offers
            ]
        }
    }


@router.get("/admin/profiles/new", response_class=HTMLResponse)
def new_profile_page(
    request: Request, admin: PageAdmin, settings: SettingsDep, partitions: PartitionsDep
) -> HTMLResponse:
    blank = profile_form.blank_form(settings.default_partition)
    return PROFILE_FORM.page(
        request, admin, creating=True, form=blank, extra=_kinds(partitions, settings)
    )


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
            kind_rules=settings.gpu_kinds,
        )
        return made.slug

    return PROFILE_FORM.create(
        request, form, identity, admin, save, extra=_kinds(partitions, settings)
    )


@router.get("/admin/profiles/{slug}", response_class=HTMLResponse)
def edit_profile_page(
    slug: str,
    request: Request,
    session: SessionDep,
    admin: PageAdmin,
    settings: SettingsDep,
    partitions: PartitionsDep,
) -> HTMLResponse:
    profile = crud.get_profile(session, slug=slug)
    if profile is None:
        return pages.not_found(request, "profile", slug)
    return PROFILE_FORM.page(
        request,
        admin,
        creating=False,
        form=_profile_form(profile),
        extra=_kinds(partitions, settings),
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
    settings: SettingsDep,
) -> Response:
    def save(profile: Profile, values: dict[str, Any]) -> Profile:
        data = ProfileUpdate.model_validate(values)
        return profile_service.update(
            session, partitions, profile=profile, data=data, actor=admin.name
        )

    current = crud.get_profile(session, slug=slug)
    return PROFILE_FORM.edit(
        request,
        form,
        identity,
        admin,
        slug=slug,
        current=current,
        save=save,
        extra=_kinds(partitions, settings),
    )


@router.post("/admin/profiles/{slug}/delete", response_class=HTMLResponse)
def delete_profile(
    slug: str,
    request: Request,
    form: FormDep,
    session: SessionDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    profile = crud.get_profile(session, slug=slug)
    if profile is None:
        return pages.not_found(request, "profile", slug)
    version = str(form.get("version", ""))
    if not version.isdigit() or int(version) != profile.version:
        return pages.render(
            request,
            "message.html",
            {
                "title": "Not deleted",
                "message": f"Profile {slug} was changed since you opened it: open it again, "
                "look, and delete it then if you still mean to.",
            },
            status_code=status.HTTP_409_CONFLICT,
        )
    crud.delete_profile(session, profile=profile, expected_version=int(version), actor=admin.name)
    return pages.after_save(request, "deleted", slug)


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
