"""REST API for notices: everyone reads the ones showing to them now; admins post and remove;
the hub (its own token) reads every one not ended, and picks each user's itself."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, status

from gpuportal_portal import notice_service
from gpuportal_portal.api_errors import declared
from gpuportal_portal.deps import ApiAdmin, ApiCaller, SessionDep
from gpuportal_portal.models import Notice, utcnow
from gpuportal_portal.schemas import NoticeCreate, NoticePublic

router = APIRouter(prefix="/api", tags=["notices"], responses=declared(401, 403, 404))


@router.get("/notices", response_model=list[NoticePublic])
def list_notices(session: SessionDep, caller: ApiCaller, all: bool = False) -> list[NoticePublic]:
    """The notices showing to you now; `all=true` (admins, and the hub) every one not ended
    yet, coming ones included."""
    if all and not (caller.is_admin or caller.kind == "hub"):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Only admins may list every notice.")
    notices = notice_service.not_ended(session)
    if not all:
        notices = notice_service.current_for(notices, caller.groups, utcnow())
    return [notice_service.public(n) for n in notices]


@router.post("/notices", response_model=NoticePublic, status_code=status.HTTP_201_CREATED)
def create_notice(data: NoticeCreate, session: SessionDep, admin: ApiAdmin) -> NoticePublic:
    """Post a notice; it shows from `starts_at` (default now) until `ends_at`."""
    return notice_service.public(notice_service.create(session, data=data, actor=admin.name))


# A notice's number; beyond a 64-bit integer none can exist (and SQLite cannot compare it).
NoticeId = Annotated[int, Path(ge=1, le=2**63 - 1, description="The notice's number.")]


@router.delete("/notices/{notice_id}", status_code=status.HTTP_204_NO_CONTENT)
def remove_notice(notice_id: NoticeId, session: SessionDep, admin: ApiAdmin) -> None:
    """Take a notice down at once."""
    notice = session.get(Notice, notice_id)
    if notice is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No notice {notice_id}.")
    notice_service.remove(session, notice=notice, actor=admin.name)
