"""The bench nodes' share of the CPU: what a compute node's own cores would be.

On a cluster the JupyterLabs run on other machines than the hub; here they share its two cores.
Niced alone they still took most of them: the kernel's scheduler weighs each task, and a hundred
starting JupyterLabs at nice 10 (weight 110 each) outweigh the hub (1024) elevenfold, so in the
300-user burst the hub got a third of a core and its pages waited for the CPU, not for its
loop. In a cgroup of the least CPU weight, the nodes' processes together weigh less than any one
of the hub's, and take what the hub, its proxy and its services leave, as their own machines'
cores would give them.

The cgroup is made under the cpu controller (cgroup v1's `cpu` hierarchy, or v2's unified one
with `cpu` enabled at its root), the slurmds are moved into it (their jobs are forked from them
and stay in it: the local cluster's Slurm leaves the cpu controller alone), and it is removed
after the run. Where no cpu controller is at hand the nodes are only niced, and the bench says so.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

CGROUPS = Path("/sys/fs/cgroup")
GROUP = "gpuportal-bench-nodes"


def _group(root: Path) -> tuple[Path, str, str] | None:
    """The nodes' cgroup, its weight file and the least weight, made if missing; None where
    neither cgroup version has the cpu controller at hand."""
    v1 = root / "cpu"
    if (v1 / "cgroup.procs").exists():
        (v1 / GROUP).mkdir(exist_ok=True)
        return v1 / GROUP, "cpu.shares", "2"
    controllers = root / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        enabled = root / "cgroup.subtree_control"
        if "cpu" not in enabled.read_text().split():
            enabled.write_text("+cpu")
        (root / GROUP).mkdir(exist_ok=True)
        return root / GROUP, "cpu.weight", "1"
    return None


def place(pids: list[str], root: Path = CGROUPS) -> str:
    """Move these processes (the slurmds) into the nodes' cgroup; says where they went."""
    try:
        found = _group(root)
        if found is None:
            return "niced only (no cpu cgroup controller here)"
        group, weight_file, weight = found
        (group / weight_file).write_text(weight)
        for pid in pids:
            (group / "cgroup.procs").write_text(pid)
    except OSError as error:
        return f"niced only (the cpu cgroup could not be set up: {error})"
    return f"in cgroup {group} ({weight_file} {weight})"


def release(root: Path = CGROUPS) -> None:
    """Remove the nodes' cgroup; a process still in it (a job's straggler) goes back to the
    top first, since a cgroup with processes cannot be removed."""
    for group in (root / "cpu" / GROUP, root / GROUP):
        if not group.is_dir():
            continue
        with contextlib.suppress(OSError):
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):  # it may have ended meanwhile
                    (group.parent / "cgroup.procs").write_text(pid)
            group.rmdir()
