"""What each ended job used of what it asked for, read once and kept on its record.

Slurm's accounting (sacct) gives time, cores, memory, GPUs and account; a notebook session's
or notebook job's own GPU readings (gpuportal_adapters.gpu_summary, a file in the user's home,
read as the user with `tail`, a command the portal already runs as users; the session's next
start removes those older than a week) give how busy its GPUs were. Kept on the record, the session
history, the home page's "your last session" line and the admins' waste table read the
database, not sacct.

The portal looks every `use_look_seconds` for records that have ended and have no use yet,
a few at a time, once their job has been over for SETTLE_S. slurmdbd gets a job's last
figures a moment after it ends: a use without CPU and memory figures is kept only once the job
has been over for UNMEASURED_AFTER (a cluster that gathers none). A job Slurm's accounting has
no record of for GIVE_UP_AFTER (a cluster without slurmdbd, a job older than its purge) is
marked so and not asked again.
"""

from __future__ import annotations

import logging
import pwd
from datetime import timedelta
from functools import partial
from typing import Any

import anyio.to_thread
from sqlalchemy import select

# The file's layout is the session's, which writes it (a stdlib-only module).
from gpuportal_adapters.gpu_summary import summary_path
from gpuportal_adapters.slurm import SlurmClient
from gpuportal_core import bounded_json
from gpuportal_core.efficiency import Efficiency, gpu_summary, mean_gpu_percent
from gpuportal_portal.background import repeat
from gpuportal_portal.db import Database
from gpuportal_portal.job_service import settled
from gpuportal_portal.models import JobRecord, aware_utc, utcnow
from gpuportal_portal.session_history import SESSION_LAUNCHER

log = logging.getLogger(__name__)

SETTLE_S = 10
UNMEASURED_AFTER = timedelta(minutes=2)
GIVE_UP_AFTER = timedelta(hours=1)
BATCH = 10
# A session's readings file: a summary of a few hundred bytes, a kilobyte a GPU at most.
READINGS_MAX = 64 * 1024
NOT_RECORDED: dict[str, Any] = {"recorded": False}
# The jobs that read their own GPUs as they run (gpuportal_session.gpu_activity for a session,
# gpuportal_session.job_gpu_readings for a notebook job), into the same file.
GPU_READERS = (SESSION_LAUNCHER, "notebook")


async def gpu_readings(slurm: SlurmClient, user: str, job_id: str) -> dict[str, Any]:
    """What the session (or notebook job) left of its GPU readings, read as its user."""
    try:
        # In a thread: on a site, passwd is sssd or LDAP, which may take a while to answer.
        entry = await anyio.to_thread.run_sync(pwd.getpwnam, user)
    except KeyError:
        return {"measured": False, "note": f"{user} is not a user of this host"}
    path = summary_path(entry.pw_dir, job_id)
    # Bounded, and never through a link: the file is the user's to replace (with a link to
    # /dev/zero, `tail -c +1` grew the portal's memory until its timeout).
    result = await slurm.read_as_user(user, str(path), count=READINGS_MAX + 1, through_links=False)
    if result.returncode != 0:
        return {
            "measured": False,
            "note": "it left no GPU readings (it ended before its first)",
        }
    if len(result.raw_stdout) > READINGS_MAX:
        return {"measured": False, "note": f"its GPU readings are over {READINGS_MAX} bytes"}
    try:
        readings = bounded_json.loads(result.raw_stdout, max_bytes=READINGS_MAX)
    except ValueError:
        return {"measured": False, "note": "the session's GPU readings could not be read"}
    return readings if isinstance(readings, dict) else {"measured": False, "note": "no reading"}


def use_of(efficiency: Efficiency, gpu: dict[str, Any]) -> dict[str, Any]:
    """The record's `use`: sacct's figures, the GPU readings, the GPU-hours held and used."""
    measured = bool(gpu.get("measured")) and efficiency.gpus > 0
    used = efficiency.gpu_hours * mean_gpu_percent(gpu) / 100 if measured else None
    summary = " ".join(
        part for part in (efficiency.summary(), gpu_summary(gpu, efficiency.gpus)) if part
    )
    return {
        **efficiency.as_dict(),
        "gpu": gpu,
        "gpu_hours_used": round(used, 3) if used is not None else None,
        "summary": summary,
    }


async def read_use(slurm: SlurmClient, record: JobRecord) -> dict[str, Any] | None:
    """What the record's job used; None while Slurm's accounting has no record of it."""
    efficiency = await slurm.use(record.slurm_job_id)
    if efficiency is None:
        return None
    if not efficiency.gpus:
        gpu: dict[str, Any] = {"measured": False, "note": "it asked for no GPU"}
    elif record.launcher in GPU_READERS:
        gpu = await gpu_readings(slurm, record.user, record.slurm_job_id)
    else:
        gpu = {
            "measured": False,
            "note": "only sessions and notebook jobs read their GPUs",
        }
    return use_of(efficiency, gpu)


def worth_keeping(use: dict[str, Any], record: JobRecord) -> bool:
    """Whether `use` is final: measured, or the job has been over long enough that it will
    stay as it is."""
    over = utcnow() - aware_utc(record.updated_at)
    measured = use.get("max_rss_bytes") is not None
    return over.total_seconds() >= SETTLE_S and (measured or over >= UNMEASURED_AFTER)


def due_records(database: Database, *, limit: int = BATCH) -> list[JobRecord]:
    """Up to `limit` ended jobs without a use yet, over for SETTLE_S (a worker thread)."""
    now = utcnow()
    with database.sessions() as session:
        query = (
            select(JobRecord)
            .where(JobRecord.use.is_(None), JobRecord.slurm_job_id != "")
            .order_by(JobRecord.updated_at.desc())
            .limit(200)
        )
        due = [
            record
            for record in session.scalars(query)
            if settled(record.state)
            and (now - aware_utc(record.updated_at)).total_seconds() >= SETTLE_S
        ][:limit]
        session.expunge_all()
    return due


def keep_use(database: Database, record_id: int, use: dict[str, Any]) -> bool:
    """Store a use on its record unless it has one already (a worker thread)."""
    with database.sessions() as session:
        stored = session.get(JobRecord, record_id)
        if stored is None or stored.use is not None:
            return False
        stored.use = use
        session.commit()
    return True


async def collect(database: Database, slurm: SlurmClient, *, limit: int = BATCH) -> int:
    """Read the use of up to `limit` ended jobs that have none yet; how many were kept. The
    database is used from a worker thread, and no session is held while Slurm is asked."""
    now = utcnow()
    due = await anyio.to_thread.run_sync(partial(due_records, database, limit=limit))
    kept = 0
    for record in due:
        use = await read_use(slurm, record)
        if use is None:
            if now - aware_utc(record.updated_at) < GIVE_UP_AFTER:
                continue  # slurmdbd may be behind: asked again at the next look
            use = NOT_RECORDED
        elif not worth_keeping(use, record):
            continue
        if await anyio.to_thread.run_sync(keep_use, database, record.id, use):
            kept += 1
    return kept


async def collect_forever(database: Database, slurm: SlurmClient, *, every: float) -> None:
    """The portal's background reading of ended jobs' use."""
    await repeat(
        lambda: collect(database, slurm),
        every=every,
        done="Kept what %d ended job(s) used",
        what="read ended jobs' use from sacct",
    )
