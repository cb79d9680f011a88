#!/bin/bash
# JupyterLab for alice (profile gpu-1), rendered by the hub for this one spawn.
#SBATCH --job-name=jupyterhub-alice
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --mem=48G
#SBATCH --time=08:00:00
#SBATCH --output=/home/alice/.jupyterhub-logs/jupyter-%j.log
#SBATCH --chdir=/home/alice
#SBATCH --export=HOME,JUPYTERHUB_API_URL,PATH,USER
#SBATCH --comment=gpuportal:session:local:alice:

set -eo pipefail
# Slurm from the session's terminal works as from a login node: srun and salloc pass on the
# session's whole environment. Else they read this job's --export list (the hub's few
# variables, no PATH) from SLURM_EXPORT_ENV, and `srun hostname` finds no hostname.
export SLURM_EXPORT_ENV=ALL
# The hub's token reaches the job in a file only the user can read, not in the job's environment:
# Slurm keeps no copy, and a hub restart can renew it while the job waits in the queue. The file
# stays while the job lives (a requeued job reads it again); the hub removes it when it ends.
JUPYTERHUB_API_TOKEN=$(cat /home/alice/.jupyterhub-logs/token-default)
export JUPYTERHUB_API_TOKEN JPY_API_TOKEN="$JUPYTERHUB_API_TOKEN"
# Software environment session-image (chosen on the spawn page): JupyterLab in its image,
# run by podman as you; the runner passes Stop's and the time limit's SIGTERM into the image,
# then removes the container (gpuportal_session.container).
exec /opt/gpuportal/venv/bin/python -m gpuportal_session.container --image /srv/gpuportal-images/gpuportal-session.tar --mount /projects -- python -m gpuportal_session.singleuser jupyterhub-singleuser --SingleUserNotebookApp.default_url=/lab
