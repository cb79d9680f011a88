# jupyterhub-idle-culler's config (the hub starts it with --config=this file; see
# deploy/jupyterhub_config.py). The culler stops servers; the hub decides which are due under
# each profile's idle and GPU-idle limits (gpuportal_spawner.cull_arbiter,
# gpuportal_spawner.culling).
from gpuportal_spawner.cull_arbiter import ask_the_hub

c = get_config()  # noqa: F821 (traitlets provides it)
c.IdleCuller.cull_arbiter_hook = ask_the_hub
