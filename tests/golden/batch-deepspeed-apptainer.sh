#!/bin/bash
# deepspeed job train-resnet of alice, rendered by the GPU portal.
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
# A DeepSpeed hostfile from the allocation: every node, with its GPUs as slots.
head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
master_port=$(( 29500 + SLURM_JOB_ID % 1000 ))
hostfile="${TMPDIR:-/tmp}/deepspeed-hostfile-$SLURM_JOB_ID"
scontrol show hostnames "$SLURM_JOB_NODELIST" | sed 's/$/ slots=2/' >"$hostfile"
# The deepspeed launcher starts the workers on every node through Slurm.
srun --nodes=1 --ntasks=1 --kill-on-bad-exit=1 apptainer exec --nv /opt/images/pytorch-24.10.sif deepspeed \
    --launcher=slurm --hostfile="$hostfile" \
    --num_nodes=2 --num_gpus=2 \
    --master_addr="$head_node" --master_port="$master_port" \
    /home/alice/project/train.py --epochs 3 --lr=0.1
