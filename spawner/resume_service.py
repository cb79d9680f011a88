"""A hub-managed service that, after a hub restart, resumes servers whose job is still queued.

JupyterHub re-checks only servers that were running when it stopped; a spawn still waiting in
the Slurm queue is simply forgotten, and its job would run with nobody attached. This service
asks the hub (REST API, its own token) for stopped servers whose saved state names a job, asks
Slurm once for all those jobs, and starts each server whose job is still alive again with the
same options. The spawner then re-attaches to the queued job instead of submitting another.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import signal
import urllib.request
from typing import Any
from urllib.parse import quote

from spawner.core.jobs import Phase
from spawner.core.slurm import SlurmClient, SlurmError

log = logging.getLogger("spawner.resume")


class HubAPI:
    def __init__(self, api_url: str, token: str, timeout: float = 20.0) -> None:
        self._url = api_url.rstrip("/")
        self._token = token
        self._timeout = timeout

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self._url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self._token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=self._timeout) as response:
            text = response.read().decode()
        return json.loads(text) if text.strip() else None

    async def call(self, method: str, path: str, body: Any = None) -> Any:
        return await asyncio.to_thread(self._call, method, path, body)


def queued_servers(users: list[dict[str, Any]]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(user, server name, job id, user_options) of stopped servers holding a job to resume."""
    found = []
    for user in users:
        for name, server in (user.get("servers") or {}).items():
            if server.get("ready") or server.get("pending"):
                continue
            job_id = (server.get("state") or {}).get("resume_job_id")
            if job_id:
                found.append((user["name"], name, str(job_id), server.get("user_options") or {}))
    return found


async def resume_once(hub: HubAPI, slurm: SlurmClient) -> list[str]:
    """Start again every forgotten server whose job Slurm still has; returns the users resumed."""
    users = await hub.call("GET", "/users?include_stopped_servers=1&limit=10000")
    if isinstance(users, dict):  # paginated form
        users = users.get("items", [])
    candidates = queued_servers(users)
    if not candidates:
        return []
    jobs = await slurm.jobs([job_id for _, _, job_id, _ in candidates])
    resumed = []
    for user, name, job_id, options in candidates:
        info = jobs.get(job_id)
        if info is None or info.user != user or info.phase not in (Phase.QUEUED, Phase.RUNNING):
            continue
        path = (
            f"/users/{quote(user)}/server"
            if not name
            else f"/users/{quote(user)}/servers/{quote(name)}"
        )
        log.info("Resuming %s's server %r (job %s, %s)", user, name, job_id, info.state)
        try:
            await hub.call("POST", path, {"user_options": options})
        except OSError as error:
            log.error("Could not resume %s's server %r: %s", user, name, error)
            continue
        resumed.append(user)
    return resumed


async def main_async() -> None:
    hub = HubAPI(os.environ["JUPYTERHUB_API_URL"], os.environ["JUPYTERHUB_API_TOKEN"])
    slurm = SlurmClient()
    # The hub lets go of waiting spawns while it checks its servers at start-up, which runs
    # alongside this service: look again every little while rather than once.
    for round_number in itertools.count():
        try:
            resumed = await resume_once(hub, slurm)
            if resumed:
                log.info("Resumed the servers of %s", ", ".join(resumed))
        except (OSError, SlurmError) as error:
            log.info("Could not look for servers to resume: %s", error)
        # Often in the first two minutes after a hub start, then once a minute (a list of users).
        await asyncio.sleep(5 if round_number < 24 else 60)


def main() -> None:
    logging.basicConfig(
        level=logging.INFO, format="[%(levelname).1s %(asctime)s %(name)s] %(message)s"
    )
    # A hub started in the background of a script inherits SIGINT as ignored, and the hub stops
    # its services with SIGINT: take the default back so that this one ends when told to.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main_async())


if __name__ == "__main__":
    main()
