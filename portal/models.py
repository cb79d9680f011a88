"""The portal's tables (SQLAlchemy 2). Alembic migrations under portal/migrations create them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import JSON, DateTime, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware_utc(moment: datetime) -> datetime:
    """A stored time, in UTC: SQLite hands the time back without its zone."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        dict[str, str]: JSON,
        list[str]: JSON,
    }


class Profile(Base):
    """A resource profile users pick on the spawn page: its slug, its place in the list, and
    its spec (gpuportal_core.profiles.ProfileSpec, as the API writes it) in one column, so that
    a new field of the spec needs no new column."""

    __tablename__ = "profiles"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(40), unique=True)
    spec: Mapped[dict[str, Any]]
    position: Mapped[int] = mapped_column(default=0)
    # Bumped by every save; a save that names an older version is refused (409), so two admins
    # editing from stale pages never silently overwrite each other.
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_by: Mapped[str] = mapped_column(String(100), default="")

    __mapper_args__ = {"version_id_col": version}  # noqa: RUF012 (SQLAlchemy reads it as is)


class AuditRecord(Base):
    """One change by one person: what it touched, and each changed field before and after."""

    __tablename__ = "audit_records"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(20))  # create, update, reorder
    kind: Mapped[str] = mapped_column(String(20))  # profile, environment
    subject: Mapped[str] = mapped_column(String(100))  # the slug, or "*" for a reorder
    # {"field": [before, after], ...}; before is null on create.
    changes: Mapped[dict[str, Any]] = mapped_column(default=dict)


class Environment(Base):
    """A software environment the spawn page offers with some profiles (empty: with all)."""

    __tablename__ = "environments"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(40), unique=True)
    title: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(Text, default="")
    kind: Mapped[str] = mapped_column(String(20))  # venv, conda, modules, container
    prefix: Mapped[str] = mapped_column(String(250), default="")
    modules: Mapped[list[str]] = mapped_column(default=list)
    image: Mapped[str] = mapped_column(String(300), default="")
    # A container's engine (gpuportal_core.environments.ENGINES); apptainer for the others.
    engine: Mapped[str] = mapped_column(String(20), default="apptainer")
    profiles: Mapped[list[str]] = mapped_column(default=list)
    enabled: Mapped[bool] = mapped_column(default=True)
    position: Mapped[int] = mapped_column(default=0)
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_by: Mapped[str] = mapped_column(String(100), default="")

    __mapper_args__ = {"version_id_col": version}  # noqa: RUF012 (SQLAlchemy reads it as is)


class JobRecord(Base):
    """A multi-node job submitted through the portal: who, what script, when, its Slurm id."""

    __tablename__ = "jobs"
    __table_args__ = (
        # A retried POST with the same key finds the first submission instead of a second job.
        UniqueConstraint("user", "idempotency_key", name="uq_jobs_user_idempotency_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user: Mapped[str] = mapped_column(String(64), index=True)
    name: Mapped[str] = mapped_column(String(64))
    launcher: Mapped[str] = mapped_column(String(20))
    request: Mapped[dict[str, Any]] = mapped_column(default=dict)  # the checked submission
    script: Mapped[str] = mapped_column(Text)
    output: Mapped[str] = mapped_column(String(300))  # with %x/%j already filled in
    idempotency_key: Mapped[str | None] = mapped_column(String(100), nullable=True)
    slurm_job_id: Mapped[str] = mapped_column(String(20), default="", index=True)
    # The last state seen from Slurm; kept after Slurm forgets the job.
    state: Mapped[str] = mapped_column(String(30), default="SUBMITTING")
    reason: Mapped[str] = mapped_column(String(100), default="")
    nodes: Mapped[str] = mapped_column(String(200), default="")
    exit_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    submitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[str] = mapped_column(String(30), default="")
    ended_at: Mapped[str] = mapped_column(String(30), default="")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # While it waits: when Slurm expects to start it (blank when Slurm cannot tell yet).
    expected_start: Mapped[str] = mapped_column(String(30), default="")
    # An array job's tasks and their states, {"0": "COMPLETED", "2-3": "PENDING"}; {} if none.
    tasks: Mapped[dict[str, str]] = mapped_column(default=dict)
    # Once it has ended: what it used (gpuportal_portal.use_collector); None until read.
    use: Mapped[dict[str, Any] | None] = mapped_column(nullable=True, default=None)
    # A run of a notebook job definition (NotebookSchedule.id); None for a job of its own.
    schedule_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    # A notebook job's executed notebook and HTML, looked for once it has ended
    # (gpuportal_portal.notebook_outputs); None until then, {} when its run made none.
    outputs: Mapped[dict[str, Any] | None] = mapped_column(nullable=True, default=None)


class NotebookSchedule(Base):
    """A notebook job definition on a schedule: the job request each run submits, the cron
    schedule in its time zone, and the run waiting in Slurm's queue for its time
    (gpuportal_portal.schedule_service keeps one queued while it is active)."""

    __tablename__ = "notebook_schedules"

    id: Mapped[int] = mapped_column(primary_key=True)
    user: Mapped[str] = mapped_column(String(64), index=True)
    name: Mapped[str] = mapped_column(String(64))
    request: Mapped[dict[str, Any]] = mapped_column(default=dict)  # a JobCreate, without begin
    schedule: Mapped[str] = mapped_column(String(100))
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    active: Mapped[bool] = mapped_column(default=True)
    # The queued run (a JobRecord's id); None while paused, or before the first is queued.
    next_record_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Why the last run could not be queued (Slurm's or the checks' words); "" when it was.
    problem: Mapped[str] = mapped_column(String(300), default="")
    # How many times in a row the next run could not be queued: at the site's limit
    # (PORTAL_SCHEDULE_PAUSE_AFTER) the definition is paused, not retried for ever.
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RemovedSession(Base):
    """A session record its user removed while Slurm still listed the ended job: the session
    scan (gpuportal_portal.session_history) must not record it again. Kept a week, long past Slurm's
    MinJobAge."""

    __tablename__ = "removed_sessions"

    slurm_job_id: Mapped[str] = mapped_column(String(20), primary_key=True)
    removed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Notice(Base):
    """A message from the cluster team shown on every page (hub, portal, JupyterLab) and in the
    CLI between its start and end, to everyone or to members of its groups."""

    __tablename__ = "notices"

    id: Mapped[int] = mapped_column(primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    level: Mapped[str] = mapped_column(String(10))  # info, warning, danger (Bootstrap's words)
    starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    ends_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    groups: Mapped[list[str]] = mapped_column(default=list)  # none: everyone
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    created_by: Mapped[str] = mapped_column(String(100))
