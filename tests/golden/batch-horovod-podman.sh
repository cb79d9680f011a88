#!/bin/bash
# horovod job train-resnet of alice, rendered by the GPU portal.
#SBATCH --job-name=train-resnet
#SBATCH --partition=gpu
#SBATCH --nodes=2
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
# horovodrun's host list from the allocation: node:slots, one slot per GPU.
hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed 's/$/:2/' | paste -sd, -)
srun --nodes=1 --ntasks=1 --kill-on-bad-exit=1 /opt/gpuportal/venv/bin/python -m gpuportal_session.container --image /srv/gpuportal-images/gpuportal-session.tar --mount /home/alice --mount /projects -- horovodrun \
    -np 4 -H "$hosts" \
    python3 /home/alice/project/train.py --epochs 3 --lr=0.1

