"""A Jupyter server extension of the session: how busy the job's GPUs are, told to the hub.

An open browser tab keeps JupyterLab "active" for the hub, so activity alone cannot tell that
four GPUs have done nothing for hours. Every GPUPORTAL_GPU_SAMPLE_SECONDS (60) this reads
`nvidia-smi` for the GPUs Slurm gave the job (CUDA_VISIBLE_DEVICES) and posts the reading to
the hub (POST /hub/gpuportal/gpu-activity, with the server's own token). The hub culls a session
whose GPUs sat idle for its profile's limit (gpuportal_core.culling).

Where there is no reading (no nvidia-smi, no GPU given, a driver error), the report says so in
words ("not measured: ...") and the GPU rule does not apply: a session is never culled on a
figure nobody read. A user can make their own session look busy; so they could with the
activity JupyterHub itself reports, and the time limit still ends it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tornado.ioloop import IOLoop, PeriodicCallback

from gpuportal_adapters.gpu_summary import (
    GpuReading,
    GpuSummary,
    remove_old_summaries,
    write_summary,
)
from gpuportal_adapters.hub_tls import client_context
from gpuportal_adapters.token_calls import CallFailed, TokenClient

# A GPU at or above this utilisation (percent, nvidia-smi's utilization.gpu) is at work.
BUSY_PERCENT = 5
QUERY = [
    "--query-gpu=utilization.gpu,memory.used,memory.total",
    "--format=csv,noheader,nounits",
]


class NotMeasured(Exception):
    """Why there is no reading, in words for the user."""


def parse_readings(text: str) -> list[GpuReading]:
    """nvidia-smi's lines ("37, 1024, 81559\n0, 3, 81559\n"): utilisation (percent), memory
    used and total (MiB); memory may be missing or "[N/A]" (some virtual GPUs)."""
    readings = []
    for line in text.splitlines():
        fields = [part.strip() for part in line.split(",")]
        if not fields[0]:
            continue
        if not fields[0].isdigit() or int(fields[0]) > 100:
            # "[N/A]" or "[Not Supported]" (some virtual GPUs): no reading, not "idle".
            raise NotMeasured(f"nvidia-smi gave no utilisation ({fields[0]!r})")
        memory = [int(part) if part.isdigit() else None for part in fields[1:3]]
        readings.append(GpuReading(int(fields[0]), *memory))
    if not readings:
        raise NotMeasured("nvidia-smi listed no GPU")
    return readings


def job_gpus(environ: dict[str, str]) -> str:
    """The job's GPUs as nvidia-smi -i takes them; NotMeasured if Slurm gave none."""
    visible = environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    if not visible or visible == "NoDevFiles":
        raise NotMeasured("this job was given no GPU")
    return visible


async def read_gpus(environ: dict[str, str], timeout: float = 10.0) -> list[GpuReading]:
    """One reading of the job's GPUs; NotMeasured says why there is none."""
    gpus = job_gpus(environ)
    program = environ.get("GPUPORTAL_NVIDIA_SMI") or shutil.which("nvidia-smi")
    if not program:
        node = environ.get("SLURMD_NODENAME") or socket.gethostname()
        raise NotMeasured(f"nvidia-smi is not installed on {node}")
    try:
        proc = await asyncio.create_subprocess_exec(
            program,
            *QUERY,
            f"--id={gpus}",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as error:
        raise NotMeasured(f"nvidia-smi could not run: {error.strerror}") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        raise NotMeasured(f"nvidia-smi gave no answer within {timeout:g} s") from None
    if proc.returncode != 0:
        first = (err or out).decode(errors="replace").strip().splitlines()[:1]
        raise NotMeasured(f"nvidia-smi failed: {first[0] if first else proc.returncode}")
    return parse_readings(out.decode(errors="replace"))


@dataclass
class GpuWatch:
    """The readings so far: when a GPU was last at work, and the last figures."""

    since: datetime = field(default_factory=lambda: datetime.now(UTC))
    busy_at: datetime | None = None
    utilisation: list[int] = field(default_factory=list)
    note: str = ""
    measured: bool = False

    def take(self, values: list[int], now: datetime) -> None:
        self.measured, self.note, self.utilisation = True, "", values
        if any(value >= BUSY_PERCENT for value in values):
            self.busy_at = now

    def missed(self, why: str) -> None:
        self.measured, self.note, self.utilisation = False, why, []

    def report(self, server: str) -> dict[str, Any]:
        return {
            "server": server,
            "measured": self.measured,
            "since": self.since.isoformat(),
            "busy_at": self.busy_at.isoformat() if self.busy_at else None,
            "utilisation": self.utilisation,
            "note": self.note,
        }


class GpuReporter:
    """Samples the GPUs and posts each reading to the hub."""

    def __init__(self, environ: dict[str, str], log: Any, interval: float = 60) -> None:
        self.environ = environ
        self.log = log
        self.watch = GpuWatch()
        self.summary = GpuSummary()  # over the whole session, for its efficiency
        api_url = environ.get("JUPYTERHUB_API_URL", "").rstrip("/")
        self.url = api_url.removesuffix("/api") + "/gpuportal/gpu-activity" if api_url else ""
        # One connection to the hub for every reading (the session's certificate, under
        # internal TLS), kept from one reading to the next: a handshake a reading would cost
        # the hub ten times the reading itself (gpuportal_adapters.token_calls).
        self.hub = TokenClient(tls=client_context(environ), keep_for=2.5 * interval)

    async def sample(self) -> None:
        try:
            readings = await read_gpus(self.environ)
        except NotMeasured as why:
            self.watch.missed(str(why))
            self.summary.missed(str(why))
        else:
            self.watch.take([r.utilisation for r in readings], datetime.now(UTC))
            self.summary.take(readings)
        self._keep_summary()
        if self.url:
            await self._post()

    def _keep_summary(self) -> None:
        job_id, home = self.environ.get("SLURM_JOB_ID"), self.environ.get("HOME")
        if not job_id or not home:
            return  # not in a Slurm job: nobody will ask
        try:
            write_summary(home, job_id, self.summary.as_dict(job_id))
        except OSError as error:  # a full home: the session goes on, unmeasured
            self.log.warning("gpuportal: GPU use summary not written: %s", error)

    async def _post(self) -> None:
        try:
            await self.hub.call(
                self.url,
                token=self.environ.get("JUPYTERHUB_API_TOKEN", ""),
                method="POST",
                body=self.watch.report(self.environ.get("JUPYTERHUB_SERVER_NAME", "")),
                timeout=10,
            )
        except CallFailed as error:
            # The hub restarting is no reason to stop measuring: the next reading goes.
            self.log.warning("gpuportal: GPU reading not delivered to the hub: %s", error)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gpuportal_session.gpu_activity"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    environ = dict(os.environ)
    seconds = float(environ.get("GPUPORTAL_GPU_SAMPLE_SECONDS") or 60)
    reporter = GpuReporter(environ, serverapp.log, seconds)
    if environ.get("HOME"):
        remove_old_summaries(environ["HOME"], time.time())
    serverapp.web_app.settings["gpuportal_gpu_watch"] = reporter.watch
    # The first reading at once, so the hub knows within seconds whether GPUs are measured.
    IOLoop.current().add_callback(reporter.sample)
    PeriodicCallback(reporter.sample, seconds * 1000).start()
    serverapp.log.info("gpuportal: GPU use read every %g s for the hub's culling", seconds)
