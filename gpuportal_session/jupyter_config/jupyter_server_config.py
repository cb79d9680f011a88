"""A session's Jupyter server: terminals run bash with the environment active; assets gzipped;
CPU and memory shown against the job's allocation.

A .py config file beside the .json ones because the start-up file's path depends on where this
package is installed. Config files of higher priority (the user's ~/.jupyter) still win.
"""

import os
from pathlib import Path

from gpuportal_session.compression import TORNADO_TRANSFORMS
from gpuportal_session.lab_cache import immutable_extension_urls
from gpuportal_session.lab_static import own_static_dir, shared_prefix
from gpuportal_session.slurm_allocation import job_allocation

c = get_config()  # type: ignore[name-defined]  # noqa: F821 (given by traitlets' loader)
rc_file = Path(__file__).resolve().parents[1] / "terminal_rc.sh"
c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash", "--rcfile", str(rc_file), "-i"]}
# JupyterLab's scripts and styles gzipped (5.2 MB on a first load, about a quarter of that
# compressed); pages and API answers not: gpuportal_session.compression says why. The hub adds its
# own settings (headers) to these, not in place of them.
c.ServerApp.tornado_settings = {"transforms": TORNADO_TRANSFORMS}
# The lab extensions' hashed scripts kept by the browser, as JupyterLab's own are (lab_cache says
# why JupyterLab's own list misses them in a session). The hub gives the base URL.
c.ServerApp.static_immutable_cache = immutable_extension_urls(
    os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/")
)
# Each named session keeps its own JupyterLab layout: a workspace's file is named for the
# workspace ("default") alone, not for the server, so every session of a user opened the
# default session's tabs (and asked for a kernel for its Untitled.ipynb). The default session
# keeps JupyterLab's own folder.
server_name = os.environ.get("JUPYTERHUB_SERVER_NAME", "")
if server_name:
    c.LabApp.workspaces_dir = str(Path.home() / ".jupyter" / "lab" / "workspaces" / server_name)
# JupyterLab's own bundles from the portal's shared place where it serves this build: cached by
# the browser once for every session, and prefetched by the hub's pages (lab_static says how).
shared = shared_prefix(os.environ, own_static_dir())
if shared:
    c.LabApp.static_url_prefix = shared

# JupyterLab's Notebook Jobs (Jupyter Scheduler) on Slurm: each job a batch job of the user,
# submitted through the hub to the portal, not a child of this server that dies with it.
c.SchedulerApp.scheduler_class = "gpuportal_session.notebook_scheduler.SlurmNotebookScheduler"
c.SchedulerApp.environment_manager_class = "gpuportal_session.notebook_scheduler.PortalEnvironments"


# The status bar's CPU and memory (jupyter-resource-usage): the job's processes (this server and
# its kernels) against what Slurm gave the job, not against the node's.
allocation = job_allocation(os.environ)
c.ResourceUseDisplay.track_cpu_percent = True
# Its Prometheus gauges are refreshed every second whether anyone reads them or not (nothing
# does: the portal reads a session's use from Slurm and the GPU reader), and each refresh walks
# every process of the node (psutil's children() reads all of /proc): on the 300-user bench's
# one machine, a hundred idle sessions took both cores that way. The status bar asks on its own
# (/api/metrics/v1, while a browser shows it).
c.ResourceUseDisplay.enable_prometheus_metrics = False
if allocation.memory_bytes:
    c.ResourceUseDisplay.mem_limit = allocation.memory_bytes
if allocation.cores:
    # In percent, as the CPU figure it is compared with (100 per core): jupyter-resource-usage
    # warns (the status bar turns red) when cpu_percent comes near cpu_limit, so the job's cores
    # as a plain count made 58 % of one core look like an overload of 8.
    c.ResourceUseDisplay.cpu_limit = 100.0 * allocation.cores
