"""Dask on Slurm from a notebook: dask-jobqueue's SLURMCluster set up for this cluster.

At the session's start this writes Dask's configuration for the session (a private folder that
DASK_ROOT_CONFIG names, so the user's ~/.config/dask still wins), so that two lines

    from dask_jobqueue import SLURMCluster
    cluster = SLURMCluster(); cluster.scale(jobs=4)

start workers as Slurm jobs of the user: in the session's partition and account, with the
session's Python and PATH, logs in ~/dask-logs, and the session's Dask tag as their comment. That
tag is how the hub's stop finds and cancels them with the session (gpuportal_spawner.session_job),
and how the portal lists them with the user's jobs.

The scheduler (in the kernel) listens on this node's cluster address, where any user of the
cluster could connect to it and run code as this one: so every connection is TLS with a key made
for this session alone (mutual: scheduler, workers and client each show the certificate), in a
private folder in the home (the workers, on other nodes, read the same configuration through
DASK_ROOT_CONFIG, which their jobs inherit). The folder goes when the session ends. Nothing of
it listens on an open TCP port for HTTP: the dashboard is on a unix socket in a 0700 folder of
the session's on the node (gpuportal_session.dask_private, a Dask preload), shown through the
hub at /user/NAME/dask-dashboard/PORT/status (gpuportal_session.dask_dashboard), where the Dask
lab panel finds it; the workers' own HTTP servers do not listen at all.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuportal_session.dask_private import SOCKETS_ENV
from gpuportal_session.tensorboard_private import RUNTIME_ENV as PRIVATE_DIR_ENV

TAG_ENV = "GPUPORTAL_DASK_TAG"
RUNTIME_ENV = "GPUPORTAL_SESSION_RUNTIME"
CONFIG_FILE = "00-gpuportal-session.yaml"  # admins' /etc/dask files sort after it, and win
CERT_FILE, KEY_FILE = "session-tls.pem", "session-tls-key.pem"
# In the home, which the workers' nodes share: one folder per session job.
PRIVATE_ROOT = Path("~/.cache/gpuportal-dask")
PRIVATE_PRELOAD = "gpuportal_session.dask_private"
SSL_PRELOAD = "gpuportal_adapters.compat"
ADMIN_CONFIG = Path("/etc/dask")
# One worker job: a Dask worker process with this many threads and this much memory. A
# notebook asks for more with SLURMCluster(cores=..., memory=...).
WORKER_CORES = 4
WORKER_MEMORY = "16GiB"
# A worker whose scheduler (the kernel) is gone quits after this long: the last guard, after
# the cluster's own close, the kernel's exit and the hub's stop, against a worker left running.
DEATH_TIMEOUT_S = 30


def session_config(
    env: dict[str, str], *, python: str, host: str, home: Path, tls: Path
) -> dict[str, Any]:
    """Dask's configuration for workers of this session (env: the job's environment; tls: the
    folder with the session's certificate and key)."""
    slurm: dict[str, Any] = {
        "cores": WORKER_CORES,
        "processes": 1,
        "memory": WORKER_MEMORY,
        "python": python,
        "death-timeout": DEATH_TIMEOUT_S,
        "log-directory": str(home / "dask-logs"),
        "local-directory": env.get("TMPDIR") or "/tmp",
        # The session's environment for the workers (modules and venvs put it on PATH).
        "job-script-prologue": [f"export PATH={_shell_quote(env.get('PATH', ''))}"],
        "job-extra-directives": [],
        # The scheduler runs in the kernel on this node: the workers, on other nodes, reach it at
        # this node's cluster address; its dashboard stays on localhost, proxied by the hub.
        "scheduler-options": {"host": host, "dashboard_address": "127.0.0.1:0"},
    }
    if env.get("SLURM_JOB_PARTITION"):
        slurm["queue"] = env["SLURM_JOB_PARTITION"]
    if env.get("SLURM_JOB_ACCOUNT"):
        slurm["account"] = env["SLURM_JOB_ACCOUNT"]
    if env.get(RUNTIME_ENV):
        slurm["walltime"] = env[RUNTIME_ENV]
    if env.get(TAG_ENV):
        slurm["job-extra-directives"].append(f"--comment={env[TAG_ENV]}")
    prefix = env.get("JUPYTERHUB_SERVICE_PREFIX", "/").rstrip("/") + "/"
    pair = {"cert": str(tls / CERT_FILE), "key": str(tls / KEY_FILE)}
    return {
        "jobqueue": {"slurm": slurm},
        "distributed": {
            "comm": {
                "default-scheme": "tls",
                "require-encryption": True,
                "tls": {
                    "ca-file": pair["cert"],  # the session's own certificate is the only CA
                    "scheduler": pair,
                    "worker": pair,
                    "client": pair,
                },
            },
            "dashboard": {"link": prefix + "dask-dashboard/{port}/status"},
            # Off the node's TCP ports: the dashboard to a unix socket, workers' pages closed.
            "scheduler": {"preload": [PRIVATE_PRELOAD]},
            # The workers and their nannies speak TLS; the scheduler's kernel has it already
            # (gpuportal_session.ipython_startup).
            "worker": {"preload": [SSL_PRELOAD, PRIVATE_PRELOAD]},
            "nanny": {"preload": [SSL_PRELOAD]},
        },
        # The Dask panel's "New" button starts the same cluster.
        "labextension": {
            "factory": {
                "module": "dask_jobqueue",
                "class": "SLURMCluster",
                "args": [],
                "kwargs": {},
            }
        },
    }


def _shell_quote(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"


def write_config(directory: Path, config: dict[str, Any]) -> Path:
    """Write the config (JSON is YAML) and link the admins' /etc/dask files beside it: Dask reads
    DASK_ROOT_CONFIG instead of /etc/dask, and theirs must still apply."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / CONFIG_FILE
    path.write_text(json.dumps(config, indent=2) + "\n")
    if ADMIN_CONFIG.is_dir():
        for admin in sorted(ADMIN_CONFIG.glob("*.y*ml")):
            link = directory / admin.name
            if admin.name != CONFIG_FILE and not link.exists():
                link.symlink_to(admin)
    return path


def make_key_pair(directory: Path, user: str) -> None:
    """A self-signed certificate and its key for this session's Dask (openssl: a few ms; Dask
    checks the certificate, not the host name, so it names no host)."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    files = ["-keyout", str(directory / KEY_FILE), "-out", str(directory / CERT_FILE)]
    subprocess.run(
        ["openssl", "req", "-x509", *key, "-days", "30", "-subj", f"/CN=dask-{user}", *files],
        check=True,
        capture_output=True,
        timeout=30,
    )


def private_folder(root: Path, job_id: str) -> Path:
    """root/job_id, made 0700 (and checked: a folder of somebody else's is refused)."""
    for folder in (root, root / job_id):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise OSError(f"{folder} is not private to this user")
    return root / job_id


def worker_python(env: Mapping[str, str] = os.environ) -> str:
    """The workers' Python: this session's. In a container image, the workers' jobs run on
    nodes outside it: the image's Python, in the same image again (gpuportal_session.container
    says how, in GPUPORTAL_IN_IMAGE)."""
    in_image = env.get("GPUPORTAL_IN_IMAGE", "")
    return f"{in_image} {sys.executable}" if in_image else sys.executable


def prepare(host: str) -> None:
    """Called by gpuportal-singleuser before JupyterLab starts; never a reason not to start
    (without it, Dask simply has its defaults)."""
    job_id = os.environ.get("SLURM_JOB_ID", "")
    if not job_id:
        return  # not in a Slurm job: nothing to set up for
    try:
        directory = private_folder(PRIVATE_ROOT.expanduser(), job_id)
        atexit.register(shutil.rmtree, directory, True)
        make_key_pair(directory, os.environ.get("USER", "user"))
        config = session_config(
            dict(os.environ), python=worker_python(), host=host, home=Path.home(), tls=directory
        )
        write_config(directory, config)
        # The dashboards' sockets: on this node (a unix socket on a network home may not
        # work), in a folder of random name that only this user can enter.
        # Inside the session's private folder when there is one, which the next session
        # sweeps away if this one is killed (session_tmp).
        private = os.environ.get(PRIVATE_DIR_ENV, "")
        if private:
            sockets = os.path.join(private, "dask")
            os.makedirs(sockets, mode=0o700, exist_ok=True)
        else:
            sockets = tempfile.mkdtemp(prefix=f"gpuportal-dask-{job_id}-")
            atexit.register(shutil.rmtree, sockets, True)
    except (OSError, subprocess.SubprocessError) as error:
        print(f"Dask on Slurm is not set up: {error}", file=sys.stderr)
        return
    os.environ["DASK_ROOT_CONFIG"] = str(directory)
    os.environ[SOCKETS_ENV] = sockets
