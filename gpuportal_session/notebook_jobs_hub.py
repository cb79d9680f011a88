"""The session's side of notebook jobs: the hub's /hub/gpuportal/notebook-jobs, asked with the
session's own token over the hub's API (gpuportal_spawner.notebook_jobs passes it on to the
portal). Answers come back with the portal's words, refusals included: the dialog shows them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import aiohttp

from gpuportal_adapters.hub_tls import client_context


class HubRefused(Exception):
    """What the hub or the portal answered instead of doing it, in their words."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# The fields of a job request by the names the lab's dialog gives them.
FIELD_LABELS = {
    "name": "Job name",
    "script": "Input file",
    "notebook": "Input file",
    "args": "Parameters",
    "profile": "Compute type",
    "gpus_per_node": "Compute type",
    "gpu_type": "Compute type",
    "runtime": "Compute type",
    "environment": "Environment",
    "container": "Environment",
    "schedule": "Schedule",
    "timezone": "Time zone",
}


def words(answer: Any) -> str:
    """The words of a refusal: FastAPI's detail (a 422's fields, by the dialog's names for
    them), or the error."""
    if isinstance(answer, dict):
        detail = answer.get("detail") or answer.get("error") or answer.get("message")
        if isinstance(detail, list):
            said = []
            for item in detail:
                if not isinstance(item, dict):
                    continue
                field = ".".join(str(p) for p in item.get("loc", [])[1:]) or "request"
                said.append(f"{FIELD_LABELS.get(field, field)}: {item.get('msg')}")
            return "; ".join(said)
        if detail:
            return str(detail)
    return str(answer)[:300]


class NotebookJobsHub:
    """Calls to the hub's notebook-jobs endpoint, as this session."""

    def __init__(self, environ: Mapping[str, str] = os.environ) -> None:
        api_url = environ.get("JUPYTERHUB_API_URL", "").rstrip("/")
        self.url = api_url.removesuffix("/api") + "/gpuportal/notebook-jobs" if api_url else ""
        self.token = environ.get("JUPYTERHUB_API_TOKEN", "")
        self.tls = client_context(environ)

    async def call(self, method: str, path: str = "", body: Any = None) -> Any:
        """The JSON answer; HubRefused with the words of any other."""
        if not self.url:
            raise HubRefused(503, "this server was not started by the hub: no notebook jobs")
        connector = aiohttp.TCPConnector(ssl=self.tls if self.tls is not None else True)
        async with (
            aiohttp.ClientSession(connector=connector) as client,
            client.request(
                method,
                self.url + path,
                data=json.dumps(body) if body is not None else None,
                headers={
                    "Authorization": f"token {self.token}",
                    "Content-Type": "application/json",
                },
                timeout=aiohttp.ClientTimeout(total=60),
            ) as response,
        ):
            text = await response.text()
            try:
                answer = json.loads(text) if text else None
            except ValueError:
                answer = {"detail": text[:300]}
            if response.status >= 400:
                raise HubRefused(response.status, words(answer))
            return answer
