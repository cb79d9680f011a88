"""batchspawner's traits that GpuSlurmSpawner does not read: refused, with what to set instead.

A setting that is silently ignored is worse than none: an admin who sets
`c.SlurmSpawner.req_partition` expects it to matter.
"""

from __future__ import annotations

from typing import Any

# batchspawner's traits that this spawner does not read, and what to set instead.
UNUSED_TRAITS = {
    "batch_script": "the sbatch template templates/sbatch/singleuser.sh.j2",
    "batch_submit_cmd": "GpuSlurmSpawner.run_as and slurm_bin_dir",
    "batch_query_cmd": "GpuSlurmSpawner.slurm_bin_dir (one shared squeue)",
    "batch_cancel_cmd": "GpuSlurmSpawner.run_as and slurm_bin_dir",
    "exec_prefix": "GpuSlurmSpawner.run_as",
    "req_partition": "the resource profiles (GpuProfilesSpawner.partition or the portal)",
    "req_runtime": "the resource profiles' default_runtime and max_runtime",
    "req_memory": "GpuProfilesSpawner.mem_per_gpu_gb",
    "req_nprocs": "GpuProfilesSpawner.cores_per_gpu",
    "req_ngpus": "the resource profiles' gpus",
    "req_options": "the resource profiles' extra sbatch options",
    "req_prologue": "a software environment (venv, conda, modules or container)",
    "req_epilogue": "a software environment (venv, conda, modules or container)",
    "req_account": "the resource profiles' account option",
    "req_qos": "the resource profiles' qos option",
    "req_reservation": "the resource profiles' reservation option",
    "startup_poll_interval": "GpuSlurmSpawner.status_interval",
}
_BASES = ("BatchSpawnerBase", "SlurmSpawner", "GpuSlurmSpawner")


def refuse_unused(config: Any) -> None:
    """Fail with what to set instead when config sets a batchspawner trait nobody reads."""
    for section in _BASES:
        values = config.get(section, {}) if hasattr(config, "get") else {}
        for name in sorted(set(values) & set(UNUSED_TRAITS)):
            raise ValueError(
                f"c.{section}.{name} is not used by GpuSlurmSpawner; "
                f"set {UNUSED_TRAITS[name]} instead."
            )
