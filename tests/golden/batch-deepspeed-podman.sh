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
# Every node with its GPUs, as DeepSpeed's launcher reads them (base64 of {"node": [0, 1]}).
head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
master_port=$(( 29500 + SLURM_JOB_ID % 1000 ))
world_info=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | python3 -c 'import base64, json, sys
nodes = {node: list(range(2)) for node in sys.stdin.read().split()}
print(base64.urlsafe_b64encode(json.dumps(nodes).encode()).decode())')
# DeepSpeed's own per-node launcher on every node, one srun task each (what its pdsh runner
# starts over ssh): it starts a worker per GPU with RANK, LOCAL_RANK, WORLD_SIZE and the
# rendezvous set, as deepspeed.init_distributed() reads them. (Its Slurm runner would need
# MPI in every worker to find the ranks, and passwordless ssh to the first node.)
srun --ntasks-per-node=1 --kill-on-bad-exit=1 /opt/gpuportal/venv/bin/python -m gpuportal_session.container --image /srv/gpuportal-images/gpuportal-session.tar --mount /home/alice --mount /projects -- bash -c \
    'exec python -u -m deepspeed.launcher.launch --node_rank="$SLURM_NODEID" "$@"' deepspeed \
    --world_info="$world_info" --master_addr="$head_node" --master_port="$master_port" \
    /home/alice/project/train.py --epochs 3 --lr=0.1
