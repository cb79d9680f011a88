"""The jobs page: a form for a multi-node job and a live table of the caller's jobs.

The page talks to the jobs API from the browser (cookie + the page's CSRF token), so the page
and the REST API can never disagree on what is allowed.
"""

from __future__ import annotations

import pwd

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from gpuportal_core.jobs import PENDING_REASONS
from gpuportal_core.launchers import DEFAULT_LAUNCHER, LAUNCHERS
from gpuportal_core.partitions import Partition
from gpuportal_core.states import states_for_pages
from gpuportal_portal import crud, pages
from gpuportal_portal.cluster import ClusterUnavailable
from gpuportal_portal.deps import PageCaller, PartitionsDep, SessionDep, SettingsDep
from gpuportal_portal.job_environments import programs_in
from gpuportal_portal.models import Environment
from gpuportal_portal.settings import PortalSettings

router = APIRouter(include_in_schema=False)


def job_environments(environments: list[Environment]) -> list[dict[str, str]]:
    """The site's environments a job can run in (a container is the form's own field), in the
    admins' order: the first is the form's default, as it is the spawn page's, so that a job
    runs with what the user's notebooks have. `value` is what the form sends: a prefix, or
    module names."""
    return [
        {
            "slug": env.slug,
            "title": env.title,
            "kind": env.kind,
            "value": " ".join(env.modules) if env.kind == "modules" else env.prefix,
            # The launchers' programs it has: the form picks the environment for torchrun by it.
            "programs": " ".join(programs_in(env.prefix)) if env.kind != "modules" else "",
        }
        for env in environments
        if env.enabled and env.kind != "container"
    ]


def partition_choices(
    partitions: dict[str, Partition] | ClusterUnavailable, settings: PortalSettings
) -> list[dict[str, str]]:
    """The partitions the form offers, each with its GPU kinds (the kind field's suggestions);
    none where Slurm could not say: the field is then free text."""
    if isinstance(partitions, ClusterUnavailable):
        return []
    return [
        {"name": name, "kinds": " ".join(kind for kind in part.gpu_kinds if kind)}
        for name, part in sorted(
            partitions.items(), key=lambda item: (item[0] != settings.default_partition, item[0])
        )
    ]


@router.get("/jobs", response_class=HTMLResponse)
def jobs_page(
    request: Request,
    caller: PageCaller,
    settings: SettingsDep,
    session: SessionDep,
    partitions: PartitionsDep,
) -> HTMLResponse:
    # A plain route: FastAPI runs it in its thread pool (the passwd lookup, the database).
    try:
        home = pwd.getpwnam(caller.name).pw_dir
    except KeyError:  # not a local user on the portal's host: leave the field for them to fill
        home = ""
    return pages.render(
        request,
        "jobs.html",
        {
            "caller": caller,
            # The registry's entries (gpuportal_core.launchers): the choices and their help.
            "launchers": list(LAUNCHERS.values()),
            "default_launcher": DEFAULT_LAUNCHER,
            "launcher_help": {
                name: {
                    "about": entry.about,
                    "command": entry.command_help,
                    "program": entry.program if entry.from_environment else "",
                }
                for name, entry in LAUNCHERS.items()
            },
            "reasons": PENDING_REASONS,
            "cores_per_gpu": settings.cores_per_gpu,
            "mem_per_gpu_gb": settings.mem_per_gpu_gb,
            "gpu_kinds": sorted(settings.gpu_kinds.items()),
            "states": states_for_pages(),
            "partition": settings.default_partition,
            "partitions": partition_choices(partitions, settings),
            "home": home,
            "environments": job_environments(crud.list_environments(session)),
        },
    )
