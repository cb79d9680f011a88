"""The jobs page: a form for a multi-node job and a live table of the caller's jobs.

The page talks to the jobs API from the browser (cookie + the page's CSRF token), so the page
and the REST API can never disagree on what is allowed.
"""

from __future__ import annotations

import pwd

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from gpuportal_core.batch import LAUNCHERS
from gpuportal_core.jobs import PENDING_REASONS
from gpuportal_core.states import states_for_pages
from gpuportal_portal import crud, pages
from gpuportal_portal.deps import PageCaller, SessionDep, SettingsDep
from gpuportal_portal.models import Environment

router = APIRouter(include_in_schema=False)

# What each launcher does with the job, and with a command, in the words of the form.
LAUNCHER_HELP = {
    "torchrun": {
        "about": "One torchrun per node starts a worker per GPU, with c10d rendezvous on the first "
        "node. A script is run with Python; a command is started as is (torchrun --no-python).",
        "command": "started by torchrun once per GPU, e.g. python -m mypkg.train",
    },
    "deepspeed": {
        "about": "The deepspeed launcher starts a worker per GPU on every node (hostfile from the "
        "allocation). A script is run with Python; a command as is (--no_python).",
        "command": "started by deepspeed once per GPU",
    },
    "horovod": {
        "about": "horovodrun starts one process per GPU across the nodes. Your environment "
        "must have Horovod: its last release (0.28.1, 2023) does not build with PyTorch 2.1 or "
        "newer, and this cluster's PyTorch environment has none; use torchrun or DeepSpeed "
        "there, or an environment or container of your own with Horovod.",
        "command": "started by horovodrun once per GPU",
    },
    "mpi": {
        "about": "srun starts one MPI rank per GPU; the cluster's MPI plugin wires them up.",
        "command": "one rank per GPU, e.g. python train.py or ./a.out by absolute path",
    },
    "srun": {
        "about": "srun runs it once per node, with all of the node's GPUs: hostname on 2 nodes "
        "prints both node names.",
        "command": "run once per node, without a shell, e.g. hostname or nvidia-smi -L",
    },
}


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
        }
        for env in environments
        if env.enabled and env.kind != "container"
    ]


@router.get("/jobs", response_class=HTMLResponse)
def jobs_page(
    request: Request, caller: PageCaller, settings: SettingsDep, session: SessionDep
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
            "launchers": LAUNCHERS,
            "launcher_help": LAUNCHER_HELP,
            "reasons": PENDING_REASONS,
            "cores_per_gpu": settings.cores_per_gpu,
            "mem_per_gpu_gb": settings.mem_per_gpu_gb,
            "states": states_for_pages(),
            "partition": settings.default_partition,
            "home": home,
            "environments": job_environments(crud.list_environments(session)),
        },
    )
