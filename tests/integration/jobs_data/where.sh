#!/bin/bash
# Prints which task runs on which (fake) node of the allocation.
echo "task $SLURM_PROCID on $SLURMD_NODENAME"
