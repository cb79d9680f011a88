"""Notices from the cluster team: saved, audited, and chosen for a reader.

Times are kept in UTC with their zone; a time sent without one is the portal host's local time
(as the admin page's date fields send it).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from gpuportal_portal.audit_stream import audit_on_commit
from gpuportal_portal.models import AuditRecord, Notice, aware_utc, utcnow
from gpuportal_portal.profile_rules import Problem
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.schemas import NoticeCreate, NoticePublic


def aware(moment: datetime) -> datetime:
    """A time sent with a zone, or without one (this host's local time), in UTC."""
    return (moment if moment.tzinfo else moment.astimezone()).astimezone(UTC)


def create(session: Session, *, data: NoticeCreate, actor: str) -> Notice:
    try:
        starts = aware(data.starts_at) if data.starts_at else utcnow()
        ends = aware(data.ends_at)
    except (ValueError, OverflowError):  # a time at the very edge of the calendar
        raise RuleViolation([Problem("ends_at", "is not a time a notice can have")]) from None
    if ends <= starts:
        raise RuleViolation([Problem("ends_at", "must be after the start")])
    if ends <= utcnow():
        raise RuleViolation([Problem("ends_at", "is already past: the notice would never show")])
    notice = Notice(
        text=data.text,
        level=data.level,
        starts_at=starts,
        ends_at=ends,
        groups=list(data.groups),
        created_by=actor,
    )
    session.add(notice)
    session.flush()
    _audit(session, notice, actor=actor, action="create")
    session.commit()
    return notice


def remove(session: Session, *, notice: Notice, actor: str) -> None:
    _audit(session, notice, actor=actor, action="delete")
    session.delete(notice)
    session.commit()


def _audit(session: Session, notice: Notice, *, actor: str, action: str) -> None:
    shown = public(notice).model_dump(mode="json", exclude={"id", "created_by"})
    changes = (
        {k: [None, v] for k, v in shown.items()}
        if action == "create"
        else {k: [v, None] for k, v in shown.items()}
    )
    subject = str(notice.id)
    session.add(
        AuditRecord(actor=actor, action=action, kind="notice", subject=subject, changes=changes)
    )
    audit_on_commit(
        session, "notice_edit", user=actor, change=action, subject=subject, changes=changes
    )


def not_ended(session: Session, now: datetime | None = None) -> list[Notice]:
    """Every notice that has not ended yet (admins see the coming ones too), soonest first."""
    moment = now or utcnow()
    query = select(Notice).where(Notice.ends_at > moment).order_by(Notice.starts_at, Notice.id)
    return list(session.scalars(query))


def current_for(notices: Iterable[Notice], groups: Iterable[str], now: datetime) -> list[Notice]:
    """The ones showing now to a member of `groups` (None: every group, as the hub asks)."""
    mine = set(groups)
    return [
        n
        for n in notices
        if aware_utc(n.starts_at) <= now < aware_utc(n.ends_at)
        and (not n.groups or mine & set(n.groups))
    ]


def public(notice: Notice) -> NoticePublic:
    return NoticePublic(
        id=notice.id,
        text=notice.text,
        level=notice.level,
        starts_at=aware_utc(notice.starts_at),
        ends_at=aware_utc(notice.ends_at),
        groups=list(notice.groups),
        created_by=notice.created_by,
    )
