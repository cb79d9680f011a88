"""GET /services/portal/metrics: the portal's figures (gpuportal_portal.metrics) in Prometheus' text
format, for a hub admin's token (Prometheus scrapes with one)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from gpuportal_portal import metrics  # noqa: F401  (defines the figures and counts Slurm calls)
from gpuportal_portal.deps import ApiAdmin

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
def portal_metrics(admin: ApiAdmin) -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
