"""The portal's audit stream (gpuportal_adapters.audit): audit-portal.jsonl, beside the hub's
audit-hub.jsonl.

Profile and environment edits are written once their transaction commits (a save refused by a
version conflict leaves no line); job submissions and cancels as they happen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from gpuportal_adapters.audit import AuditStream

_stream = AuditStream("portal")
audit = _stream.write
PENDING = "audit_lines"


def configure(folder: str) -> None:
    """Write to FOLDER/audit-portal.jsonl; an empty folder turns the stream off."""
    _stream.configure(Path(folder) if folder else None)


def audit_on_commit(session: Session, action: str, *, user: str, **fields: Any) -> None:
    """A line written when `session` commits, and dropped if it rolls back."""
    session.info.setdefault(PENDING, []).append((action, user, fields))


@event.listens_for(Session, "after_commit")
def _flush(session: Session) -> None:
    for action, user, fields in session.info.pop(PENDING, []):
        audit(action, user=user, **fields)


@event.listens_for(Session, "after_rollback")
def _drop(session: Session) -> None:
    session.info.pop(PENDING, None)
