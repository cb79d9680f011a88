"""The portal's figures, served at /services/portal/metrics (gpuportal_portal.routers.metrics_api).

gpuportal_portal_slurm_calls_total{command, outcome}   Slurm commands the portal ran
gpuportal_portal_slurm_call_seconds{command}           how long they took
gpuportal_job_submissions_total{launcher, outcome}     submitted, refused, uncertain
"""

from __future__ import annotations

from prometheus_client import Counter

from gpuportal_core.slurm_metrics import count_slurm_calls

SLURM_CALLS, SLURM_SECONDS = count_slurm_calls("gpuportal_portal", "portal")
JOB_SUBMISSIONS = Counter(
    "gpuportal_job_submissions", "Batch job submissions", ["launcher", "outcome"]
)
