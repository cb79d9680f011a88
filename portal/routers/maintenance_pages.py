"""The admins' maintenance page: Slurm's maintenance windows, a form to plan one, Cancel."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError

from gpuportal_adapters.slurm import SlurmError
from gpuportal_portal import maintenance_service, pages
from gpuportal_portal.deps import FormDep, IdentityDep, PageAdmin, SessionDep, SlurmDep
from gpuportal_portal.identity import Caller
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.schemas import MaintenanceCreate

router = APIRouter(include_in_schema=False)
PAGE = "/admin/maintenance"
BLANK = {"starts_at": "", "ends_at": "", "nodes": "ALL", "notice": "yes"}


async def _page(
    request: Request,
    slurm: SlurmDep,
    admin: Caller,
    *,
    errors: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
    problem: str = "",
) -> HTMLResponse:
    windows, slurm_error, names = [], problem, []
    try:
        windows = await maintenance_service.list_windows(slurm, datetime.now())
        names = sorted(await maintenance_service.node_names(slurm))
    except SlurmError as error:
        slurm_error = f"Slurm did not answer ({error.message}); the list may be incomplete."
    saved = request.query_params.get("saved", "")
    return pages.render(
        request,
        "maintenance.html",
        {
            "caller": admin,
            "windows": windows,
            "slurm_error": slurm_error,
            "errors": errors or {},
            "form": form or BLANK,
            "example_nodes": ", ".join(names[:2]) or "gpu01, gpu02",
            "saved": saved_note(saved, {w.name for w in windows}),
        },
        status_code=422 if errors else 409 if problem else 200,
    )


def saved_note(saved: str, names: set[str]) -> str:
    """The line after a change: only for a window's own name, never free text."""
    what, _, name = saved.partition(":")
    if what == "planned" and name in names:
        return f"Planned {name}: from now, no job starts there that would run into it."
    if what == "cancelled" and name.startswith("maint-") and name not in names:
        return f"Cancelled {name}; its notice is gone too."
    return ""


@router.get("/admin/maintenance", response_class=HTMLResponse)
async def maintenance_page(request: Request, slurm: SlurmDep, admin: PageAdmin) -> HTMLResponse:
    return await _page(request, slurm, admin)


@router.post("/admin/maintenance", response_class=HTMLResponse)
async def plan_window(
    request: Request,
    form: FormDep,
    session: SessionDep,
    slurm: SlurmDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    sent = {k: str(form.get(k, "")).strip() for k in ("starts_at", "ends_at", "nodes", "notice")}
    try:
        data = MaintenanceCreate.model_validate(
            {
                "starts_at": sent["starts_at"] or None,
                "ends_at": sent["ends_at"],
                "nodes": sent["nodes"] or "ALL",
                "notice": sent["notice"] == "yes",
            }
        )
        made = await maintenance_service.schedule(
            session, slurm, data=data, actor=admin.name, now=datetime.now()
        )
    except (ValidationError, RuleViolation) as error:
        return await _page(request, slurm, admin, errors=pages.field_errors(error), form=sent)
    return pages.after_save(request, "planned", made.name, page=PAGE)


@router.post("/admin/maintenance/{name}/cancel", response_class=HTMLResponse)
async def cancel_window(
    name: str,
    request: Request,
    form: FormDep,
    session: SessionDep,
    slurm: SlurmDep,
    identity: IdentityDep,
    admin: PageAdmin,
) -> Response:
    if not pages.csrf_ok(request, form, identity):
        return pages.forbidden_form(request)
    try:
        await maintenance_service.cancel(
            session, slurm, name=name, actor=admin.name, now=datetime.now()
        )
    except maintenance_service.NoSuchWindow:
        return pages.not_found(request, "maintenance window", name)
    except maintenance_service.CancelRefused as refused:
        return await _page(request, slurm, admin, problem=str(refused))
    return pages.after_save(request, "cancelled", name, page=PAGE)
