"""A notebook job's GPU readings over its run, kept as a session's are, for the efficiency card
the portal shows once the job has ended (gpuportal_portal.use_collector reads the file).

The runner (gpuportal_session.notebook_run) starts this beside the kernel: a reading of the
job's GPUs at once, then every GPUPORTAL_GPU_SAMPLE_SECONDS (60), and one more at the end, so
even a short run has two. A reading is the session's (gpuportal_session.gpu_activity.read_gpus:
nvidia-smi for the GPUs Slurm gave the job), and the file is the session's
(`~/.gpuportal-gpu/JOBID.json`, gpuportal_adapters.gpu_summary). Where nothing can be read (no
nvidia-smi, no GPU given), the file says why in words, and the card says "not measured".
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Mapping

from gpuportal_adapters.gpu_summary import GpuSummary, write_summary
from gpuportal_session.gpu_activity import NotMeasured, read_gpus

log = logging.getLogger(__name__)


class JobGpuReadings:
    """Reads the job's GPUs in a thread of its own while the notebook runs."""

    def __init__(self, environ: Mapping[str, str], every: float | None = None) -> None:
        self.environ = dict(environ)
        self.every = every or float(environ.get("GPUPORTAL_GPU_SAMPLE_SECONDS") or 60)
        self.summary = GpuSummary()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gpu-readings", daemon=True)

    @property
    def wanted(self) -> bool:
        """In a Slurm job with a home: someone will ask (the portal, by the job's id)."""
        return bool(self.environ.get("SLURM_JOB_ID") and self.environ.get("HOME"))

    def start(self) -> None:
        if self.wanted:
            self._thread.start()

    def stop(self) -> None:
        """The last reading, at the run's end, and the file written with it."""
        if not self._thread.is_alive():
            return
        self._stop.set()
        self._thread.join()
        self.sample()

    def _run(self) -> None:
        self.sample()
        while not self._stop.wait(self.every):
            self.sample()

    def sample(self) -> None:
        try:
            readings = asyncio.run(read_gpus(self.environ))
        except NotMeasured as why:
            self.summary.missed(str(why))
        else:
            self.summary.take(readings)
        job_id = self.environ["SLURM_JOB_ID"]
        try:
            write_summary(self.environ["HOME"], job_id, self.summary.as_dict(job_id))
        except OSError as error:  # a full home: the run goes on, unmeasured
            log.warning("GPU readings not written: %s", error)
