"""The audit stream: one JSON object per line for each act that matters to operators.

Who logged in (or failed to), who started which session with which resources and job, who
stopped it and why, extends, shares, profile and environment edits, job submissions and
cancels. The hub and the portal each write their own file (one writer per file, so rotation is
safe) in one folder; `read_events` reads them together, newest first, with filters.

    {"time": "2026-11-23T07:40:02.125Z", "source": "hub", "action": "spawn", "user": "alice",
     "server": "", "profile": "gpu-2", "gpus": 2, "job": "123", ...}
"""

from __future__ import annotations

import io
import json
import logging
import logging.handlers
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# What may be recorded, and what each record holds besides time, source, action and user;
# anything else is a programming error, caught by the tests. The docs' audit reference is
# generated from this table (docs/_ext/gpuportal_reference.py).
ACTIONS: dict[str, str] = {
    "login": "A login through LDAP: address, groups.",
    "login_failed": "A refused login: address, why (wrong name or password, not a user name, "
    "throttled, in no allowed group, not in the directory; with single sign-on also second "
    "factor refused, second factor reused, second factor locked, ID token refused).",
    "logout": "A logout: address.",
    "session_entered": "An admin let into another user's server (only where the site lets "
    "admins enter sessions, PORTAL_ADMINS_ENTER_SESSIONS): server, by (the admin), role, "
    "address; user is the server's owner.",
    "spawn": "A session's job submitted: server, by (who started it) and role (owner, admin, "
    "service, or hub for a start of its own), profile, gpus, cores, mem_gb, runtime, "
    "environment, partition, job.",
    "stop": "A session ended: server, job, why (stopped on the hub, culled and by which limit, "
    "or Slurm's end: time limit, node failure...); for a stop asked of the hub's API, by (who "
    "asked) and role (owner, admin or service: the idle culler), else by (hub or culler) or "
    "slurm_state.",
    "extend": "A session's time limit raised: server, job, limit_before, limit_after, profile.",
    "share_tensorboard": "A folder's TensorBoard shared with a group: server, folder, group.",
    "profile_edit": "A resource profile created, changed, reordered or removed: change, "
    "subject (its slug), changes (each field before and after).",
    "environment_edit": "A software environment created, changed or removed: change, subject, "
    "changes.",
    "notice_edit": "A notice posted or removed: change, subject, changes.",
    "job_submit": "A batch job submitted: record, job, name, launcher, nodes, gpus_per_node, "
    "partition, array; schedule, for a run of a job definition on a schedule.",
    "job_cancel": "A batch job cancelled: record, job.",
    "schedule_create": "A job definition on a schedule made (its first run queued): schedule "
    "(its number), name, cron.",
    "schedule_change": "A job definition paused, resumed or given a new schedule: schedule, "
    "active, cron.",
    "schedule_delete": "A job definition deleted (its queued run cancelled): schedule.",
    "schedule_paused": "A job definition paused by the portal: its next run could not be "
    "queued PORTAL_SCHEDULE_PAUSE_AFTER times in a row, or its user is gone: schedule, why.",
    "maintenance_create": "A maintenance window planned (a Slurm MAINT reservation): name, "
    "start, end, nodes.",
    "maintenance_cancel": "A maintenance window cancelled (its reservation deleted): name.",
}
_log = logging.getLogger(__name__)
MAX_BYTES = 10 * 1024 * 1024
BACKUPS = 5


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _PrivateRotatingFile(logging.handlers.RotatingFileHandler):
    """Each file (the first and every one after a rotation) made 0600: who did what is for
    the operators alone."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return open(fd, "a", encoding=self.encoding)


class AuditLog:
    """Appends events to FOLDER/audit-SOURCE.jsonl, rotated at MAX_BYTES (BACKUPS kept)."""

    def __init__(self, folder: Path, source: str, *, max_bytes: int = MAX_BYTES) -> None:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = folder / f"audit-{source}.jsonl"
        self.source = source
        handler = _PrivateRotatingFile(
            self.path, maxBytes=max_bytes, backupCount=BACKUPS, encoding="utf-8"
        )
        handler.setFormatter(logging.Formatter("%(message)s"))
        # A logger of its own per file: never propagated to the process's log.
        self._logger = logging.getLogger(f"gpuportal.audit.{source}.{id(self)}")
        self._logger.propagate = False
        self._logger.setLevel(logging.INFO)
        self._logger.handlers = [handler]

    def write(self, action: str, *, user: str, **fields: Any) -> None:
        if action not in ACTIONS:
            raise ValueError(f"unknown audit action {action!r}")
        event = {"time": _now(), "source": self.source, "action": action, "user": user, **fields}
        self._logger.info(json.dumps(event, default=str, sort_keys=False))


class AuditStream:
    """One process's stream (the hub's, the portal's): off until configured with a folder. A
    line that cannot be written is a warning in the process's log, never a failed request."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._log: AuditLog | None = None

    def configure(self, folder: Path | None) -> None:
        self._log = AuditLog(folder, self.source) if folder is not None else None

    def write(self, action: str, *, user: str, **fields: Any) -> None:
        if self._log is None:
            return
        try:
            self._log.write(action, user=user, **fields)
        except OSError as error:
            _log.warning("Could not write the audit line %s for %s: %s", action, user, error)


def parse_since(text: str) -> str:
    """A "since" as people type it (2026-11-23, 2026-11-23T07:00, 2026-11-23 07:00:30, with a
    zone or in UTC) in the events' own form, which compares as text; ValueError says how to
    write it."""
    text = text.strip()
    if not text:
        return ""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time: write a UTC date and time such as 2026-11-23T07:00, "
            "or a date such as 2026-11-23"
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


@dataclass(frozen=True)
class Filter:
    user: str = ""
    action: str = ""
    since: str = ""  # an ISO time: only events at or after it
    limit: int = 200

    def keeps(self, event: dict[str, Any]) -> bool:
        return (
            (not self.user or event.get("user") == self.user)
            and (not self.action or event.get("action") == self.action)
            and (not self.since or str(event.get("time", "")) >= self.since)
        )


def _lines(path: Path) -> Iterator[str]:
    # The rotated files first (oldest .5 ... .1), then the live one: oldest to newest.
    for number in range(BACKUPS, 0, -1):
        rotated = path.with_name(f"{path.name}.{number}")
        if rotated.is_file():
            yield from rotated.read_text(encoding="utf-8").splitlines()
    if path.is_file():
        yield from path.read_text(encoding="utf-8").splitlines()


def read_events(paths: Iterable[Path], keep: Filter = Filter()) -> list[dict[str, Any]]:
    """The events of every file, newest first, as `keep` allows (a torn line is skipped)."""
    found: list[tuple[str, int, dict[str, Any]]] = []
    for path in paths:
        for line in _lines(path):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and keep.keeps(event):
                # Written order breaks ties: two events in one millisecond stay in order.
                found.append((str(event.get("time", "")), len(found), event))
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [event for _, _, event in found[: max(1, keep.limit)]]
