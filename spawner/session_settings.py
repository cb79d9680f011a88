"""The settings of GpuSlurmSpawner, apart from its logic (set them as c.GpuSlurmSpawner.NAME)."""

from __future__ import annotations

from batchspawner import SlurmSpawner
from traitlets import Float, Integer, List, Unicode

from gpuportal_adapters.slurm_commands import DEFAULT_RUN_AS
from gpuportal_core.resources import NOTEBOOKS_DIR


class SessionJobSettings(SlurmSpawner):
    """Every option of a notebook session's Slurm job, each with an example."""

    session_venv = Unicode(
        "",
        config=True,
        help="Python venv the job activates before starting JupyterLab, e.g. /opt/gpuportal/venv.",
    )
    templates_dir = Unicode(
        str(NOTEBOOKS_DIR),
        config=True,
        help="Notebooks every session finds in ~/templates, e.g. /opt/gpuportal/notebooks.",
    )
    shared_dir = Unicode(
        "",
        config=True,
        help="The cluster's shared data area, linked as ~/shared in every session, e.g. /data.",
    )
    container_mounts = List(
        ["/projects"],
        config=True,
        help="Folders a session in a podman image mounts besides the home and the shared "
        "folder (the project areas), each where it exists on the node, e.g. ['/projects'].",
    )
    modules_init = Unicode(
        "/etc/profile.d/lmod.sh",
        config=True,
        help="Script a job sources to get `module` when an environment is a list of modules, "
        "e.g. /etc/profile.d/lmod.sh.",
    )
    listen_ip = Unicode(
        "",
        config=True,
        help="Address JupyterLab listens on in the job. Empty: the node's own address, the one "
        "its Slurm node name resolves to (where the hub connects); or e.g. 0.0.0.0.",
    )
    log_dir = Unicode(
        "{home}/.jupyterhub-logs",
        config=True,
        help="Where each job writes its log (created as the user), e.g. {home}/.jupyterhub-logs.",
    )
    run_as = List(
        list(DEFAULT_RUN_AS),
        config=True,
        help="Prefix that runs sbatch/scancel as the user. {keep} becomes the variables sbatch "
        "must pass (a part naming it is dropped when there are none), e.g. "
        "['sudo', '--preserve-env={keep}', '-u', '{user}']. Never 'sudo -E': the hub's own "
        "environment would reach processes the user can read.",
    )
    slurm_bin_dir = Unicode("", config=True, help="Directory of the Slurm commands, e.g. /usr/bin.")
    slurm_timeout = Float(20.0, config=True, help="Seconds before a Slurm command is given up.")
    queue_file = Unicode(
        "",
        config=True,
        help="The file in which the hub and the portal share their last squeue of every job "
        "(gpuportal_adapters.queue_reader), e.g. /var/lib/gpuportal/hub/queue.json; empty: the "
        "hub reads for itself.",
    )
    capacity_ttl = Float(
        10.0,
        config=True,
        help="Seconds one look at the cluster (free GPUs, the queue) serves every spawn page "
        "and waiting page, e.g. 10: Slurm is asked at most once per this time, for all users.",
    )
    status_interval = Float(
        1.0, config=True, help="Seconds between job checks while a server starts, e.g. 1.0."
    )
    queued_status_interval = Float(
        10.0,
        config=True,
        help="Seconds between job checks once a server's job has waited in the queue "
        "`queued_checks_after` s, e.g. 10.0. JupyterLab's own call when it starts wakes the "
        "wait at once, so this only delays how soon the waiting page shows a new reason.",
    )
    queued_checks_after = Float(
        30.0,
        config=True,
        help="Seconds in the queue after which a job is checked every `queued_status_interval` "
        "s rather than every `status_interval` s, e.g. 30.0.",
    )
    poll_max_age = Float(
        10.0,
        config=True,
        help="How stale (seconds) a shared squeue answer may be for the hub's periodic poll.",
    )
    log_tail_lines = Integer(
        20, config=True, help="Lines of the job log shown when a job dies while starting."
    )
    hub_id = Unicode(
        "local",
        config=True,
        help="Names this hub in its jobs' tags (sbatch --comment), so that hubs sharing a "
        "cluster never take each other's jobs, e.g. 'ds-hub'. Letters, digits, ._@+- only.",
    )
