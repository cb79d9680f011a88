#!/bin/bash
# torchrun job train-resnet of alice, rendered by the GPU portal.
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
# Rendezvous (c10d) on the first node of the allocation, on a port derived from the job id.
head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
rdzv_port=$(( 29500 + SLURM_JOB_ID % 1000 ))
# One torchrun per node; each starts one worker per GPU.
srun --kill-on-bad-exit=1 /opt/gpuportal/venv/bin/python -m gpuportal_session.container --image /srv/gpuportal-images/gpuportal-session.tar --mount /home/alice --mount /projects -- torchrun \
    --nnodes=2 --nproc-per-node=2 \
    --rdzv-id="$SLURM_JOB_ID" --rdzv-backend=c10d --rdzv-endpoint="$head_node:$rdzv_port" \
    /home/alice/project/train.py --epochs 3 --lr=0.1
