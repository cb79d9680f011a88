#!/bin/bash
# notebook job train-resnet of alice, rendered by the GPU portal.
#SBATCH --job-name=train-resnet
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:2
#SBATCH --cpus-per-task=16
#SBATCH --mem=96G
#SBATCH --time=02:00:00
#SBATCH --output=/home/alice/.gpuportal-jobs/%x-%j.out
#SBATCH --chdir=/home/alice/project

set -eo pipefail
# Since Slurm 22.05 srun no longer inherits --cpus-per-task from the batch step; pass it on.
export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"
# The notebook run headless, its cells in order (gpuportal_session.notebook_run): the executed
# notebook and its HTML go into a dated folder beside it; a cell that raises fails the job.
srun --kill-on-bad-exit=1 --container-image='nvcr.io#nvidia/pytorch:24.10-py3' --container-mount-home --container-workdir=/home/alice/project python3 -m gpuportal_session.notebook_run /home/alice/project/train.ipynb epochs=3 lr=0.1
