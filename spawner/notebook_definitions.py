"""Notebook job definitions on a schedule, asked for from a session's JupyterLab:
/hub/gpuportal/notebook-jobs/definitions, passed on to the portal's schedules API as the user
(gpuportal_portal.schedule_service keeps each one's next run queued in Slurm).

    GET    .../definitions           your notebook job definitions, newest first
    POST   .../definitions           {name, notebook, profile, environment, parameters,
                                      schedule, timezone}: a definition (201), its first run
                                      queued for its first time
    GET    .../definitions/ID        one
    PATCH  .../definitions/ID        {active, schedule, timezone, name}: pause, resume, edit
    DELETE .../definitions/ID        delete it (its queued run is cancelled)
    POST   .../definitions/ID/runs   one run now

The same scope and the same token at the portal as /hub/gpuportal/notebook-jobs.
"""

from __future__ import annotations

import logging
from typing import Any

from gpuportal_spawner.notebook_jobs import LAUNCHER, NOTEBOOK_JOBS_PATH, NotebookJobsHandler

DEFINITIONS_ROUTE = rf"/{NOTEBOOK_JOBS_PATH}/definitions(?:/([0-9]+)(/runs)?)?"
CHANGES = ("active", "schedule", "timezone", "name")
log = logging.getLogger(__name__)


def unnest(answer: Any) -> Any:
    """The portal's refusal of a definition's job names its fields under `job`
    (body.job.args): named as for a job of its own (body.args), as the dialog knows them."""
    if isinstance(answer, dict) and isinstance(answer.get("detail"), list):
        for item in answer["detail"]:
            loc = item.get("loc") if isinstance(item, dict) else None
            if isinstance(loc, list) and loc[:2] == ["body", "job"]:
                item["loc"] = ["body", *loc[2:]]
    return answer


class NotebookDefinitionsHandler(NotebookJobsHandler):
    """The session's definitions, passed on to the portal's /api/schedules as the user."""

    async def _own_definition(self, definition_id: str) -> tuple[int, Any]:
        status, answer = await self._portal("GET", f"/schedules/{definition_id}")
        if status == 200 and (answer.get("job") or {}).get("launcher") != LAUNCHER:
            status, answer = 404, {"detail": f"No notebook job definition {definition_id}."}
        return status, answer

    async def get(self, definition_id: str | None = None, runs: str | None = None) -> None:
        if not self._allowed():
            return
        if definition_id:
            status, answer = await self._own_definition(definition_id)
            self.send(answer, status)
            return
        status, answer = await self._portal("GET", "/schedules")
        if status == 200:
            answer = [d for d in answer if (d.get("job") or {}).get("launcher") == LAUNCHER]
        self.send(answer, status)

    async def post(self, definition_id: str | None = None, runs: str | None = None) -> None:
        if not self._allowed():
            return
        if definition_id:
            status, answer = await self._own_definition(definition_id)
            if status == 200 and runs:
                status, answer = await self._portal("POST", f"/schedules/{definition_id}/runs")
            elif status == 200:
                status, answer = 405, {"detail": "POST .../definitions/ID/runs runs it now"}
            self.send(answer, status)
            return
        asked = await self._asked_job()
        if asked is None:
            return
        body, request = asked
        schedule = {
            "job": request,
            "schedule": str(body.get("schedule") or ""),
            "timezone": str(body.get("timezone") or "UTC"),
        }
        status, answer = await self._portal("POST", "/schedules", schedule)
        if status == 201:
            log.info("Notebook job definition %s for %s", answer.get("id"), self.current_user)
        self.send(unnest(answer), status)

    async def patch(self, definition_id: str | None = None, runs: str | None = None) -> None:
        if not self._allowed():
            return
        if not definition_id or runs:
            self.send({"detail": "PATCH .../definitions/ID: which definition?"}, 405)
            return
        try:
            body = self.json_body()
        except ValueError as error:
            self.send({"detail": f"not a JSON object: {error}"}, 400)
            return
        status, answer = await self._own_definition(definition_id)
        if status == 200:
            changes = {k: body[k] for k in CHANGES if body.get(k) is not None}
            status, answer = await self._portal("PATCH", f"/schedules/{definition_id}", changes)
        self.send(unnest(answer), status)

    async def delete(self, definition_id: str | None = None, runs: str | None = None) -> None:
        if not self._allowed():
            return
        if not definition_id or runs:
            self.send({"detail": "DELETE .../definitions/ID: which definition?"}, 405)
            return
        status, answer = await self._own_definition(definition_id)
        if status == 200:
            status, answer = await self._portal("DELETE", f"/schedules/{definition_id}")
        if status == 204:
            self.set_status(204)
            self.finish()
            return
        self.send(answer, status)
