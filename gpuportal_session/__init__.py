"""What runs inside the user's Slurm job: the launcher (port report, home set-up, then
jupyterhub-singleuser), the ~/templates sync, and private TensorBoard with its page.

It imports neither the hub's code (spawner) nor the portal's, nor the core: a software
environment needs only `pip install slurm-gpu-portal[session]`.
"""
