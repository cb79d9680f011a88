"""A hub-managed service that, after a hub restart, resumes servers whose job still waits.

JupyterHub re-checks only servers that were ready when it stopped; a spawn still waiting in the
Slurm queue is let go (the spawner keeps its job and marks the server `resume_job_id`). This
service asks Slurm once for every live job tagged by this hub (gpuportal_core.tags), asks the hub
about just those servers, and starts again each one that the hub let go, with the key
`resume_job`: the spawn then takes over that job and never submits another. It needs neither
the portal nor a list of all users for that.

Every few minutes it also removes named servers whose spawn page was opened but that were never
started (gpuportal_spawner.never_started), one paged list of the hub's users.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from typing import Any
from urllib.parse import quote

from pydantic import Field

from gpuportal_adapters import token_calls
from gpuportal_adapters.hub_tls import client_context
from gpuportal_adapters.settings import ClusterSettings
from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_adapters.token_calls import CallFailed
from gpuportal_core.lifecycle import LIVE
from gpuportal_core.tags import SessionTag, parse_tag
from gpuportal_spawner import never_started
from gpuportal_spawner.hub_users import each_user

log = logging.getLogger("spawner.resume")

RESUME_KEY = (
    "resume_job"  # gpuportal_spawner.profiles_spawner.RESUME_KEY (not imported: no hub imports)
)


class HubAPI:
    def __init__(self, api_url: str, token: str, timeout: float = 20.0) -> None:
        self._url = api_url.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._tls = client_context()  # the service's certificate, under internal TLS

    async def call(self, method: str, path: str, body: Any = None) -> Any:
        return await token_calls.call(
            f"{self._url}{path}",
            token=self._token,
            method=method,
            body=body,
            timeout=self._timeout,
            tls=self._tls,
            # Lists come in pages with a link to the next (JupyterHub's paginated form).
            headers={"Accept": "application/jupyterhub-pagination+json"},
        )


def server_path(user: str, server: str) -> str:
    base = f"/users/{quote(user)}/server"
    return base if not server else f"/users/{quote(user)}/servers/{quote(server)}"


def to_resume(server: dict[str, Any] | None, job_id: str) -> dict[str, Any] | None:
    """The options to start a server again with, if the hub let it go while `job_id` waited."""
    if server is None or server.get("ready") or server.get("pending"):
        return None
    if str((server.get("state") or {}).get("resume_job_id", "")) != job_id:
        return None  # stopped on purpose, or another job: not ours to bring back
    options = dict(server.get("user_options") or {})
    options[RESUME_KEY] = job_id
    return options


async def active_servers(hub: HubAPI) -> set[tuple[str, str]]:
    """(user, server name) of every server the hub runs or is starting: one paged list."""
    active: set[tuple[str, str]] = set()
    async for user in each_user(hub.call, "state=active"):
        active |= {(user["name"], name) for name in user.get("servers") or {}}
    return active


async def resume_once(hub: HubAPI, slurm: SlurmClient, hub_id: str) -> list[str]:
    """Start again every server the hub let go whose job Slurm still has; the ones resumed.

    The hub is asked about a job's server only when its list of active servers lacks it (after
    a restart, the ones it let go): a look per live job made 300 requests a round at 300
    queued or running sessions, a third of the hub's CPU at rest (bench/scale.py).
    """
    resumed = []
    jobs: list[tuple[SessionTag, str]] = []
    for job in await slurm.tagged():
        tag = parse_tag(job.comment)
        if not isinstance(tag, SessionTag) or tag.hub != hub_id or tag.user != job.user:
            continue
        if job.phase in LIVE:  # the resumed spawn takes it over (or cancels it if it runs)
            jobs.append((tag, job.job_id))
    active = await active_servers(hub) if jobs else set()
    for tag, job_id in jobs:
        if (tag.user, tag.server) in active:
            continue
        model = await hub.call("GET", f"/users/{quote(tag.user)}?include_stopped_servers=1")
        options = to_resume((model.get("servers") or {}).get(tag.server), job_id)
        if options is None:
            continue
        log.info("Resuming %s's server %r on job %s", tag.user, tag.server, job_id)
        try:
            await hub.call("POST", server_path(tag.user, tag.server), {"user_options": options})
        except CallFailed as error:
            log.error("Could not resume %s's server %r: %s", tag.user, tag.server, error)
            continue
        resumed.append(f"{tag.user}/{tag.server}" if tag.server else tag.user)
    return resumed


class ResumerSettings(ClusterSettings):
    sweep_seconds: float = Field(
        300.0,
        description="Seconds between two looks for named servers whose spawn page was opened "
        "but that were never started (removed when two looks in a row find one).",
    )


async def main_async() -> None:
    settings = ResumerSettings()
    hub = HubAPI(os.environ["JUPYTERHUB_API_URL"], os.environ["JUPYTERHUB_API_TOKEN"])
    slurm = SlurmClient(timeout=settings.slurm_timeout, bin_dir=settings.slurm_bin_dir)
    hub_id = settings.hub_id
    seen: set[tuple[str, str]] = set()
    swept = time.monotonic()
    # The hub lets go of waiting spawns while it checks its servers at start-up, which runs
    # alongside this service: look again every little while rather than once.
    for round_number in itertools.count():
        try:
            resumed = await resume_once(hub, slurm, hub_id)
            if resumed:
                log.info("Resumed the servers of %s", ", ".join(resumed))
        except (CallFailed, OSError, SlurmError) as error:
            log.info("Could not look for servers to resume: %s", error)
        if time.monotonic() - swept >= settings.sweep_seconds:
            swept = time.monotonic()
            try:
                removed = await never_started.sweep(hub.call, seen)
                if removed:
                    log.info("Removed named servers never started: %s", ", ".join(removed))
            except (CallFailed, OSError) as error:
                log.info("Could not look for named servers never started: %s", error)
        # Often in the first two minutes after a hub start, then every half minute (one squeue).
        await asyncio.sleep(3 if round_number < 40 else 30)


def main() -> None:
    logging.basicConfig(
        level=logging.INFO, format="[%(levelname).1s %(asctime)s %(name)s] %(message)s"
    )
    asyncio.run(main_async())  # the hub runs it through gpuportal_adapters.hub_service


if __name__ == "__main__":
    main()
