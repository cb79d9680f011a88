#!/bin/bash
# JupyterLab for alice (profile gpu-4), rendered by the hub for this one spawn.
#SBATCH --job-name=jupyterhub-alice
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=32
#SBATCH --mem=192G
#SBATCH --time=08:00:00
#SBATCH --output=/home/alice/.jupyterhub-logs/jupyter-%j.log
#SBATCH --chdir=/home/alice
#SBATCH --export=HOME,JUPYTERHUB_API_TOKEN,JUPYTERHUB_API_URL,PATH,USER

set -eo pipefail
# The job runs as the user, outside the hub's environment: activate the session's Python.
source /opt/gpuportal/venv/bin/activate
# exec, so that scancel's SIGTERM reaches JupyterLab itself and it shuts down cleanly.
exec gpuportal-singleuser jupyterhub-singleuser --SingleUserNotebookApp.default_url=/lab
