"""Notebook jobs asked for from a session's JupyterLab: /hub/gpuportal/notebook-jobs.

Jupyter Scheduler's dialog in a session (gpuportal_session.notebook_scheduler) submits, lists and
stops notebook jobs here, with the session's own token. A session cannot reach the portal (it
listens on the login host's loopback, as the proxy does); it reaches the hub's API. So the hub
passes each request on to the portal's jobs API as that user, where every job's checks,
record, audit and limits live: one product, whichever page a job came from.

    GET    /hub/gpuportal/notebook-jobs            your notebook jobs, newest first
    POST   /hub/gpuportal/notebook-jobs            {name, notebook, profile, environment,
                                                    parameters, runtime}: a job (201)
    GET    /hub/gpuportal/notebook-jobs/ID         one, with its output's last lines
    DELETE /hub/gpuportal/notebook-jobs/ID         cancel it
    DELETE /hub/gpuportal/notebook-jobs/ID/record  remove it, ended, from the list
    GET    /hub/gpuportal/notebook-jobs/choices    the profiles and environments you may use

The caller needs the custom scope NOTEBOOK_JOBS_SCOPE, which the `server` role carries (a
session's token) and the `user` role (a browser, a token from the Token page). The portal is
asked with a token the hub makes for the user that may use the portal and nothing else, kept an
hour: a session's own token stays one the portal refuses (gpuportal_portal.identity).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from gpuportal_core.environments import SoftwareEnvironment
from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.slurm_time import format_runtime
from gpuportal_spawner.hub_state import hub_state
from gpuportal_spawner.json_handler import JsonHandler

NOTEBOOK_JOBS_PATH = "gpuportal/notebook-jobs"
# The route: the list, one job by the portal's id (or its record), or the choices.
NOTEBOOK_JOBS_ROUTE = rf"/{NOTEBOOK_JOBS_PATH}(?:/([0-9]+|choices)(/record)?)?"
NOTEBOOK_JOBS_SCOPE = "custom:gpuportal:notebook-jobs"
SCOPE_DESCRIPTION = "Submit, list and cancel your notebook jobs (JupyterLab's Notebook Jobs)."
LAUNCHER = "notebook"
# The hub's token for a user at the portal: made for this long, made again when less is left.
TOKEN_LIFE_S = 3600
TOKEN_RENEW_S = 600
log = logging.getLogger(__name__)


class Refused(Exception):
    """A request refused before it reaches the portal: the field and the words."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def portal_token(user: Any) -> str:
    """A token of `user` that may use the portal and nothing else, kept in the hub's state."""
    tokens = hub_state(user).notebook_job_tokens
    kept = tokens.get(user.name)
    if kept is not None and kept[1] - time.monotonic() > TOKEN_RENEW_S:
        return kept[0]
    token: str = user.new_api_token(
        note="notebook jobs (the hub, for JupyterLab's Notebook Jobs)",
        expires_in=TOKEN_LIFE_S,
        scopes=["access:services!service=portal"],
    )
    tokens[user.name] = (token, time.monotonic() + TOKEN_LIFE_S)
    return token


def job_request(
    body: dict[str, Any],
    profiles: list[ResourceProfile],
    environments: list[SoftwareEnvironment],
) -> dict[str, Any]:
    """The portal's job request (POST /api/jobs) for a notebook job the session asks for: the
    profile's GPUs, kind, partition and time, the environment as a job names one."""
    slug = str(body.get("profile") or "")
    profile = next((p for p in profiles if p.slug == slug), None)
    if profile is None:
        mine = ", ".join(p.slug for p in profiles) or "none"
        raise Refused("profile", f"{slug or 'no profile'} is not one you may use (yours: {mine})")
    runtime = str(body.get("runtime") or format_runtime(profile.default_runtime))
    request: dict[str, Any] = {
        "name": body.get("name"),
        "launcher": LAUNCHER,
        "nodes": 1,
        "gpus_per_node": profile.gpus,
        "gpu_type": profile.gpu_type,
        "runtime": runtime,
        "partition": profile.partition,
        "script": body.get("notebook"),
        "args": body.get("parameters") or [],
    }
    wanted = str(body.get("environment") or "")
    if wanted:
        env = next((e for e in environments if e.slug == wanted), None)
        if env is None or (env.profiles and profile.slug not in env.profiles):
            offered = [e.slug for e in environments if not e.profiles or slug in e.profiles]
            raise Refused(
                "environment",
                f"{wanted} is not offered with {slug} (offered: {', '.join(offered) or 'none'})",
            )
        if env.kind == "container":
            request["container"] = {"kind": env.engine, "image": env.image}
        else:
            request["environment"] = {
                "kind": env.kind,
                "prefix": env.prefix,
                "modules": list(env.modules),
            }
    return request


def choices(
    profiles: list[ResourceProfile],
    environments: list[SoftwareEnvironment],
    session_venv: str = "",
) -> dict[str, Any]:
    """What the dialog offers: each profile with what it gives, each environment with the
    profiles it goes with, and whether it is the session venv (the one a job without an
    environment runs in)."""
    return {
        "profiles": [
            {
                "slug": p.slug,
                "title": p.title,
                "summary": p.summary(),
                "gpus": p.gpus,
                "gpu_type": p.gpu_type,
                "default_runtime": format_runtime(p.default_runtime),
                "max_runtime": format_runtime(p.max_runtime),
            }
            for p in profiles
        ],
        "environments": [
            {
                "slug": e.slug,
                "title": e.title,
                "kind": e.kind,
                "profiles": sorted(e.profiles),
                "session_venv": bool(session_venv) and (e.kind, e.prefix) == ("venv", session_venv),
            }
            for e in environments
        ],
    }


class NotebookJobsHandler(JsonHandler):
    """The session's requests, passed on to the portal's jobs API as the user."""

    def _allowed(self) -> bool:
        if not self.current_user:
            self.send({"error": "send a hub token (a session's, or one from the Token page)"}, 403)
            return False
        return self.require_scope(NOTEBOOK_JOBS_SCOPE)

    async def _portal(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        """The portal's status and JSON answer (its refusals too, with their words)."""
        url = str(getattr(self.current_user.spawner, "portal_url", "") or "")
        if not url:
            return 503, {"detail": "this hub has no portal: notebook jobs need one"}
        request = HTTPRequest(
            f"{url.rstrip('/')}/api{path}",
            method=method,
            body=json.dumps(body) if body is not None else None,
            headers={
                "Authorization": f"token {portal_token(self.current_user)}",
                "Content-Type": "application/json",
                **(headers or {}),
            },
            request_timeout=30.0,
        )
        try:
            answer = await AsyncHTTPClient().fetch(request)
        except HTTPClientError as error:
            if error.response is None:
                return 503, {"detail": f"the portal did not answer ({error})"}
            answer = error.response
        except OSError as error:
            return 503, {"detail": f"the portal did not answer ({error})"}
        text = answer.body.decode() if answer.body else ""
        try:
            return answer.code, json.loads(text) if text else None
        except ValueError:
            return answer.code, {"detail": text[:300]}

    def _ours(self, job: dict[str, Any]) -> bool:
        """A notebook job of the caller's: the relay passes on no other, whatever the portal
        would show the token it asks with."""
        return job.get("launcher") == LAUNCHER and job.get("user") == self.current_user.name

    async def _offer(self) -> tuple[list[ResourceProfile], list[SoftwareEnvironment]]:
        offer = await self.current_user.spawner.offer()
        return list(offer.profiles), list(offer.environments)

    async def _asked_job(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The request's body and the portal's job request for it; None when refused (the
        refusal sent: 400 for a body that is not JSON, 422 at the field for the rest)."""
        try:
            body = self.json_body()
            return body, job_request(body, *await self._offer())
        except ValueError as error:
            self.send({"detail": f"not a JSON object: {error}"}, 400)
        except Refused as refused:
            problem = {"loc": ["body", refused.field], "msg": refused.message, "type": "rule"}
            self.send({"detail": [problem]}, 422)
        return None

    async def get(self, job_id: str | None = None, record: str | None = None) -> None:
        if not self._allowed():
            return
        if job_id == "choices":
            spawner = self.current_user.spawner
            self.send(choices(*await self._offer(), spawner.session_setting("session_venv")))
            return
        if job_id:
            status, answer = await self._portal("GET", f"/jobs/{job_id}")
            if status == 200 and not self._ours(answer):
                status, answer = 404, {"detail": f"No notebook job {job_id} of yours."}
            self.send(answer, status)
            return
        status, answer = await self._portal("GET", "/jobs?mine=true&kind=job&limit=500")
        if status == 200:
            answer = [job for job in answer if self._ours(job)]
        self.send(answer, status)

    async def post(self, job_id: str | None = None, record: str | None = None) -> None:
        if not self._allowed():
            return
        if job_id or record:
            self.send({"detail": "POST to /hub/gpuportal/notebook-jobs, with no id"}, 405)
            return
        asked = await self._asked_job()
        if asked is None:
            return
        body, request = asked
        key = str(body.get("idempotency_key") or "")
        headers = {"Idempotency-Key": key} if key else None
        status, answer = await self._portal("POST", "/jobs", request, headers)
        if status in (200, 201):
            log.info("Notebook job %s for %s from a session", answer.get("id"), self.current_user)
        self.send(answer, status)

    async def delete(self, job_id: str | None = None, record: str | None = None) -> None:
        if not self._allowed():
            return
        if not job_id or job_id == "choices":
            self.send({"detail": "DELETE /hub/gpuportal/notebook-jobs/ID: which job?"}, 405)
            return
        status, answer = await self._portal("GET", f"/jobs/{job_id}")
        if status == 200 and self._ours(answer):
            status, answer = await self._portal("DELETE", f"/jobs/{job_id}{record or ''}")
        elif status == 200:
            status, answer = 404, {"detail": f"No notebook job {job_id} of yours."}
        if status == 204:  # the record removed: no body
            self.set_status(204)
            self.finish()
            return
        self.send(answer, status)
