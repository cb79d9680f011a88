"""The pure core shared by the hub (spawner), the portal and the tests: profiles, requests,
sbatch rendering, Slurm states and the session lifecycle, job tags, the async Slurm client.

No JupyterHub, traitlets, tornado or FastAPI imports here.
"""
