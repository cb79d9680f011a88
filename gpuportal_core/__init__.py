"""The pure core shared by the hub (spawner), the portal and the tests: the profile spec,
requests, sbatch rendering, the launcher registry, Slurm output parsing and states, the session
lifecycle, job tags, Slurm times, words.

No I/O (that is gpuportal_adapters'), and no JupyterHub, traitlets, tornado or FastAPI imports.
tests/unit/test_packaging.py checks that nothing here imports an adapter.
"""
