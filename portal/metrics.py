"""The portal's figures, served at /services/portal/metrics (gpuportal_portal.routers.metrics_api).

gpuportal_portal_slurm_calls_total{command, outcome}   Slurm commands the portal ran
gpuportal_portal_slurm_call_seconds{command}           how long they took
gpuportal_job_submissions_total{launcher, outcome}     submitted, refused, uncertain
gpuportal_week_gpu_hours{account, kind}                the last 7 days' GPU-hours per group:
    held (all), measured (held by sessions that read their GPUs), used (of measured, at work)
gpuportal_week_core_hours{account, kind}               the same for cores, where CPU use is
    gathered: held, used
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from gpuportal_adapters.slurm_metrics import count_slurm_calls
from gpuportal_core.launchers import LAUNCHERS
from gpuportal_portal.waste import WasteRow

SLURM_CALLS, SLURM_SECONDS = count_slurm_calls("gpuportal_portal", "portal")
JOB_SUBMISSIONS = Counter(
    "gpuportal_job_submissions", "Batch job submissions", ["launcher", "outcome"]
)
SUBMISSION_OUTCOMES = ("submitted", "refused", "uncertain", "slurm_unavailable")
# At 0 from the start, so that a dashboard reads 0 rather than no data before the first job.
for _launcher in LAUNCHERS:
    for _outcome in SUBMISSION_OUTCOMES:
        JOB_SUBMISSIONS.labels(_launcher, _outcome)

# Set from the database at each scrape (gpuportal_portal.waste), not counted as jobs end: a
# portal restart or a second portal replica then reads the same figures.
WEEK_GPU_HOURS = Gauge(
    "gpuportal_week_gpu_hours", "GPU-hours of the last 7 days per group", ["account", "kind"]
)
WEEK_CORE_HOURS = Gauge(
    "gpuportal_week_core_hours", "Core-hours of the last 7 days per group", ["account", "kind"]
)


def set_week_figures(groups: list[WasteRow]) -> None:
    WEEK_GPU_HOURS.clear()
    WEEK_CORE_HOURS.clear()
    for row in groups:
        WEEK_GPU_HOURS.labels(row.who, "held").set(row.held)
        WEEK_GPU_HOURS.labels(row.who, "measured").set(row.measured)
        WEEK_GPU_HOURS.labels(row.who, "used").set(row.used)
        WEEK_CORE_HOURS.labels(row.who, "held").set(row.core_hours)
        WEEK_CORE_HOURS.labels(row.who, "used").set(row.core_hours_used)
