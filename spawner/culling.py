"""Culling on the hub's side: the sessions' GPU readings and the idle culler's question.

POST /hub/gpuportal/gpu-activity   a session's GPU reading (gpuportal_session.gpu_activity),
                                   with the server's own token (users:activity for its user)
POST /hub/gpuportal/cull-check     jupyterhub-idle-culler, before it stops a server
                                   (gpuportal_spawner.cull_arbiter): {"user", "server", "inactive"}

The culler stays the one that stops servers (its DELETE goes through the hub as an admin's
would); it only asks here whether this server is due under its profile's limits
(gpuportal_core.culling)
and which rule it is. The answer marks the session, so that its stop says why on the home page,
in the audit stream and in the culls metric.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from gpuportal_core.culling import CullPlan, GpuReportError, GpuUse, plan, warning
from gpuportal_spawner.json_handler import JsonHandler
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner

GPU_ACTIVITY_PATH = "gpuportal/gpu-activity"
CULL_CHECK_PATH = "gpuportal/cull-check"


def child_of(user: Any, server: str) -> GpuSlurmSpawner | None:
    """The GPU session behind a user's server, if it has one."""
    if user is None or server not in user.orm_user.orm_spawners:
        return None
    session: GpuSlurmSpawner | None = user.spawners[server].session
    return session


def session_plan(child: GpuSlurmSpawner, wrapper: Any, now: datetime) -> CullPlan:
    """When, and by which rule, this running session would be culled."""
    last = wrapper.orm_spawner.last_activity if wrapper.orm_spawner is not None else None
    inactive = (now.replace(tzinfo=None) - last).total_seconds() if last is not None else 0.0
    return plan(child.cull_limits, inactive=inactive, gpu=child.gpu_use, now=now)


def cull_card(child: GpuSlurmSpawner, wrapper: Any) -> dict[str, Any]:
    """What the session card and JupyterLab show of culling: the warning and the GPU line."""
    now = datetime.now(UTC)
    upcoming = session_plan(child, wrapper, now)
    return {
        "reason": upcoming.reason.value if upcoming.reason else None,
        "in": max(0, int(upcoming.in_seconds)) if upcoming.reason else None,
        "warning": warning(upcoming, child.cull_limits),
        "gpu": child.gpu_use.describe(now) if child.gpu_use is not None else "",
    }


class GpuActivityHandler(JsonHandler):
    """A session's reading of its GPUs, kept on its spawner for the next cull check."""

    async def post(self) -> None:
        if not self.current_user or not self.require_scope("users:activity"):
            return
        try:
            report = self.json_body()
            use = GpuUse.from_report(report)
        except (ValueError, GpuReportError) as error:
            self.send({"error": f"not a GPU reading: {error}"}, 400)
            return
        server = str(report.get("server", ""))
        child = child_of(self.current_user, server)
        if child is None:
            self.send({"error": f"{self.current_user.name} has no GPU session {server!r}"}, 404)
            return
        child.gpu_use = use
        self.send({"measured": use.measured})


class CullCheckHandler(JsonHandler):
    """The idle culler asks whether a server is due; a due one is marked with its reason."""

    async def post(self) -> None:
        try:
            body = self.json_body()
            name, server = str(body["user"]), str(body.get("server", ""))
            inactive = float(body["inactive"])
        except (ValueError, KeyError, TypeError):
            self.send({"error": 'send {"user": NAME, "server": NAME, "inactive": SECONDS}'}, 400)
            return
        # Only a caller that may stop this server may ask (the culler's role has it).
        if not self.require_scope("delete:servers", user=name):
            return
        child = child_of(self.find_user(name), server)
        if child is None or child.job_id == "":
            # Not a GPU session of this hub's (a shared TensorBoard, say): never culled here;
            # a board ends with the session it belongs to.
            self.send({"cull": False, "why": "not a GPU session"})
            return
        now = datetime.now(UTC)
        upcoming = plan(child.cull_limits, inactive=inactive, gpu=child.gpu_use, now=now)
        if not upcoming.due or upcoming.reason is None:
            left = None if upcoming.reason is None else int(upcoming.in_seconds)
            self.send({"cull": False, "in": left})
            return
        child.cull_mark = (upcoming.reason, time.time())
        self.log.info(
            "Culling %s/%s (job %s): %s", name, server, child.job_id, upcoming.reason.value
        )
        self.send({"cull": True, "reason": upcoming.reason.value})
