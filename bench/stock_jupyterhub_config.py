"""Stock batchspawner + wrapspawner on the same local cluster, for the benches that compare
(spawn_latency, slurm_rpcs, scale): wrapspawner's ProfilesSpawner offering one profile, `gpu-1`,
a batchspawner SlurmSpawner.

Same hub, proxy, LDAP login and job size (1 GPU, 8 cores, 48 GB, 8 h) as deploy/; only the
spawner differs, configured as their READMEs show.
"""

import os

c = get_config()  # noqa: F821

# Everything but the spawner as in the real config.
load_subconfig(os.path.join(os.path.dirname(__file__), "..", "deploy", "jupyterhub_config.py"))  # noqa: F821

c.JupyterHub.spawner_class = "wrapspawner.ProfilesSpawner"
c.ProfilesSpawner.profiles = [
    ("1 GPU, 8 cores, 48 GB, 8 h", "gpu-1", "batchspawner.SlurmSpawner", {}),
]
c.ProfilesSpawner.child_class = "batchspawner.SlurmSpawner"  # a spawn that names no profile
# batchspawner has no internal TLS for jobs on other hosts (jupyterhub/batchspawner#192): the
# bench starts this hub with PORTAL_INTERNAL_TLS=0, and this says so again.
c.JupyterHub.internal_ssl = False
c.JupyterHub.services = []
# JupyterHub's own pages (login, spawn form, waiting page), not ours: a browser's click to the
# lab on stock JupyterHub (bench/click_to_lab.py --stock; the API benches do not read pages).
c.JupyterHub.template_paths = []
c.JupyterHub.template_vars = {}
c.JupyterHub.load_roles = []
c.SlurmSpawner.req_partition = os.environ.get("PORTAL_PARTITION", "gpu")
c.SlurmSpawner.req_gres = "gpu:1"
c.SlurmSpawner.req_nprocs = "8"
c.SlurmSpawner.req_memory = "48G"
c.SlurmSpawner.req_runtime = "08:00:00"
venv = os.environ.get("PORTAL_SESSION_VENV", "/opt/gpuportal/venv")
c.SlurmSpawner.req_prologue = f"source {venv}/bin/activate"
# The srun step does not get the activated venv's PATH (PATH is not among the exported
# variables under sudo): absolute paths, as stock deployments do.
c.SlurmSpawner.batchspawner_singleuser_cmd = f"{venv}/bin/batchspawner-singleuser"
# On Spawner, not SlurmSpawner: wrapspawner links every trait its child shares with it from
# the wrapper to the child, so the child's own `cmd` is replaced by ProfilesSpawner's (the
# relative default, which batchspawner-singleuser's `which()` does not find under srun).
c.Spawner.cmd = [f"{venv}/bin/jupyterhub-singleuser"]
c.SlurmSpawner.ip = os.environ.get("PORTAL_SESSION_LISTEN_IP", "0.0.0.0")
