"""Maintenance windows: Slurm reservations with the MAINT flag (gpuportal_core.maintenance), made
and cancelled by admins from the portal as its own Slurm account (an operator), each with a
notice to users until it ends, and audited.

Slurm is the only record of a window: the portal keeps none of its own, so a window made or
removed with scontrol by hand shows here as well, and nothing can disagree with Slurm.
"""

from __future__ import annotations

from datetime import datetime

import hostlist  # type: ignore[import-untyped]
from sqlalchemy.orm import Session

from gpuportal_adapters.slurm import SlurmClient, SlurmError, SlurmUnavailable
from gpuportal_core import maintenance
from gpuportal_core.maintenance import ALL_NODES, Window, WindowRefused
from gpuportal_core.reservations import Reservation
from gpuportal_portal import db, notice_service
from gpuportal_portal.audit_stream import audit
from gpuportal_portal.profile_rules import Problem
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.schemas import MaintenanceCreate, MaintenancePublic, NoticeCreate


class NoSuchWindow(LookupError):
    pass


class CancelRefused(RuntimeError):
    """Slurm's words for a window it would not delete."""


async def node_names(slurm: SlurmClient) -> set[str]:
    """Every node Slurm knows (one sinfo)."""
    return {node.name for node in await slurm.gpu_nodes()}


async def _windows(slurm: SlurmClient, now: datetime) -> list[Reservation]:
    found = await slurm.reservations()
    return sorted((r for r in found if r.maintenance and r.end > now), key=lambda r: r.start)


def _window_of(reservation: Reservation) -> Window:
    whole = "ALL_NODES" in reservation.flags
    nodes = ALL_NODES if whole else hostlist.collect_hostlist(list(reservation.nodes))
    return Window(reservation.start, reservation.end, nodes)


def _cluster_time(moment: datetime, field: str) -> datetime:
    """A time as Slurm reads it, the cluster's local time without a zone: one sent with a zone
    (an API client's UTC, say) is turned into it; one without is taken as it is."""
    if moment.tzinfo is None:
        return moment
    try:
        return moment.astimezone().replace(tzinfo=None)
    except (OverflowError, ValueError):  # at the very edge of the calendar
        raise WindowRefused({field: "is not a time a window can have"}) from None


def public(reservation: Reservation, now: datetime) -> MaintenancePublic:
    return MaintenancePublic(
        name=reservation.name,
        # With the cluster's offset: Slurm's times are its local time, without a zone.
        starts_at=reservation.start.astimezone(),
        ends_at=reservation.end.astimezone(),
        nodes=list(reservation.nodes),
        whole_cluster="ALL_NODES" in reservation.flags,
        running_now=reservation.start <= now,
    )


async def list_windows(slurm: SlurmClient, now: datetime) -> list[MaintenancePublic]:
    """Every maintenance window not over yet, the next first."""
    return [public(r, now) for r in await _windows(slurm, now)]


async def schedule(
    session: Session, slurm: SlurmClient, *, data: MaintenanceCreate, actor: str, now: datetime
) -> MaintenancePublic:
    """Make the window in Slurm, then its notice; RuleViolation (per field) when refused.
    Slurm is awaited, the notice written in the thread pool."""
    known = await node_names(slurm)
    try:
        starts = _cluster_time(data.starts_at, "starts_at") if data.starts_at else None
        window = maintenance.check_window(
            starts, _cluster_time(data.ends_at, "ends_at"), data.nodes, known=known, now=now
        )
    except WindowRefused as refused:
        raise RuleViolation([Problem(f, m) for f, m in refused.problems.items()]) from None
    if any(r.name == window.name for r in await slurm.reservations()):
        problem = Problem("starts_at", f"another window, {window.name}, starts then already")
        raise RuleViolation([problem])
    try:
        await slurm.change_reservation(maintenance.create_argv(window))
    except SlurmUnavailable:
        raise
    except SlurmError as error:  # nodes already reserved then, say: Slurm's words, at the form
        raise RuleViolation([Problem("form", f"Slurm refused it: {error.message}")]) from None
    audit(
        "maintenance_create",
        user=actor,
        name=window.name,
        start=window.start.isoformat(),
        end=window.end.isoformat(),
        nodes=window.nodes,
    )
    if data.notice:
        text = maintenance.notice_text(window, known)
        notice = NoticeCreate(text=text, level="warning", ends_at=window.end)
        await db.step(session, notice_service.create, data=notice, actor=actor)
    made = next((r for r in await slurm.reservations() if r.name == window.name), None)
    if made is None:  # gone already (an admin's scontrol delete in between): as it was asked
        made = Reservation(
            window.name, window.start, window.end, tuple(window.node_names(known)), ()
        )
    # A window from now began when Slurm made it, a moment after this request's `now`.
    return public(made, now if data.starts_at else max(now, made.start))


async def cancel(
    session: Session, slurm: SlurmClient, *, name: str, actor: str, now: datetime
) -> None:
    """Remove the window from Slurm, and the notice this page posted for it."""
    reservation = next((r for r in await _windows(slurm, now) if r.name == name), None)
    if reservation is None:
        raise NoSuchWindow(name)
    try:
        await slurm.change_reservation(maintenance.delete_argv(name))
    except SlurmUnavailable:
        raise
    except SlurmError as error:
        raise CancelRefused(f"Slurm did not cancel {name}: {error.message}") from None
    audit("maintenance_cancel", user=actor, name=name)
    known = set(reservation.nodes)
    said = maintenance.notice_text(_window_of(reservation), known)
    await db.step(session, _remove_notices, said, actor)


def _remove_notices(session: Session, said: str, actor: str) -> None:
    for notice in notice_service.not_ended(session):
        if notice.text == said:
            notice_service.remove(session, notice=notice, actor=actor)
