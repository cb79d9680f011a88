"""The audit for admins: GET /api/audit/events (REST) and the /admin/audit page, and the
profile and environment history (GET /api/audit).

Both read the hub's and the portal's JSON-lines files (gpuportal_adapters.audit), newest first,
filtered by user, action and time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import AfterValidator

from gpuportal_adapters.audit import ACTIONS, Filter, parse_since, read_events
from gpuportal_portal import crud, pages
from gpuportal_portal.api_errors import declared
from gpuportal_portal.deps import ApiAdmin, PageAdmin, SessionDep, SettingsDep
from gpuportal_portal.schemas import AuditPublic
from gpuportal_portal.settings import PortalSettings

router = APIRouter()

UserQuery = Annotated[str, Query(max_length=64, description="Only this user's events.")]
ActionQuery = Annotated[
    str, Query(max_length=40, description=f"One of: {', '.join(sorted(ACTIONS))}.")
]
SinceQuery = Annotated[
    str,
    Query(
        max_length=40, description="Only events at or after this UTC time, e.g. 2026-11-23T07:00"
    ),
]
# The API's: a "since" that is not a time is a 422 naming the field, as FastAPI answers any
# other bad parameter (the page says it at its field instead).
ApiSinceQuery = Annotated[str, AfterValidator(parse_since), SinceQuery]
LimitQuery = Annotated[int, Query(ge=1, le=5000)]
PageQuery = Annotated[int, Query(ge=1, le=1000, description="Which page of PAGE_SIZE events.")]
PAGE_SIZE = 50
# The page reads at most this many matching events (newest first); the filters narrow it.
PAGE_READ = 5000


def _files(settings: PortalSettings) -> list[Path]:
    if not settings.audit_dir:
        return []
    return sorted(Path(settings.audit_dir).glob("audit-*.jsonl"))


async def _events(settings: PortalSettings, keep: Filter) -> list[dict[str, Any]]:
    return await asyncio.to_thread(read_events, _files(settings), keep)


@router.get("/api/audit/events", tags=["audit"], responses=declared(401, 403))
async def audit_events(
    admin: ApiAdmin,
    settings: SettingsDep,
    user: UserQuery = "",
    action: ActionQuery = "",
    since: ApiSinceQuery = "",
    limit: LimitQuery = 200,
) -> list[dict[str, Any]]:
    """Logins, spawns and stops (with why), extends, shares, profile and environment edits,
    job submissions and cancels, newest first (admins)."""
    return await _events(settings, Filter(user=user, action=action, since=since, limit=limit))


@router.get("/admin/audit", response_class=HTMLResponse, include_in_schema=False)
async def audit_page(
    request: Request,
    admin: PageAdmin,
    settings: SettingsDep,
    user: UserQuery = "",
    action: ActionQuery = "",
    since: SinceQuery = "",
    page: PageQuery = 1,
) -> HTMLResponse:
    try:
        since_at, since_error = parse_since(since), ""
    except ValueError as error:
        # Said at the field; the other filters still apply.
        since_at, since_error = "", str(error)
    keep = Filter(user=user, action=action, since=since_at, limit=PAGE_READ)
    found = await _events(settings, keep)
    first = (page - 1) * PAGE_SIZE
    return pages.render(
        request,
        "audit.html",
        {
            "caller": admin,
            "events": found[first : first + PAGE_SIZE],
            "total": len(found),
            "first": first,
            "page": page,
            "more": len(found) > first + PAGE_SIZE,
            "actions": sorted(ACTIONS),
            "keep": {"user": user, "action": action, "since": since},
            "since_error": since_error,
            "enabled": bool(settings.audit_dir),
        },
        status_code=422 if since_error else 200,
    )


@router.get(
    "/api/audit", response_model=list[AuditPublic], tags=["audit"], responses=declared(401, 403)
)
def list_audit(session: SessionDep, admin: ApiAdmin, limit: int = 200) -> list[AuditPublic]:
    """Who changed which profile or environment, and how, newest first (the history on the
    admin page). Every other event (logins, sessions, jobs): GET /api/audit/events."""
    return [
        AuditPublic(
            at=r.at,
            actor=r.actor,
            action=r.action,
            kind=r.kind,
            subject=r.subject,
            changes=r.changes,
        )
        for r in crud.list_audit(session, limit=min(max(limit, 1), 1000))
    ]
