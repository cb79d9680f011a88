"""GET /services/portal/metrics: the portal's figures (gpuportal_portal.metrics) in Prometheus' text
format, for an admin's token or one with the read:metrics scope (the hub's `prometheus`
service: Prometheus scrapes with its token)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from gpuportal_portal import metrics  # defines the figures and counts Slurm calls
from gpuportal_portal.deps import MetricsReader, SessionDep
from gpuportal_portal.models import utcnow
from gpuportal_portal.waste import week_waste

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
def portal_metrics(reader: MetricsReader, session: SessionDep) -> Response:
    # Every group, not the page's top 20: a dashboard sums them.
    metrics.set_week_figures(week_waste(session, utcnow(), limit=10_000).groups)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
