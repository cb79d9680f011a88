"""A bench partition: GPU nodes added to the local cluster for a benchmark, and removed after it.

`cluster.sh grow bench COUNT GPUS` makes COUNT more hosts (network namespaces, as gpu01 and
gpu02 are), each with a slurmd and GPUS fake GPUs, in the partition `bench`; `shrink bench`
cancels its jobs and removes the nodes and their hosts. The nodes go away whatever ends the
block: an exception, Ctrl-C, or a SIGTERM (turned into SystemExit here), and a run killed
harder leaves them for the next run's start, which shrinks first.

    python -m bench.bench_nodes 16 8     # grow, print what Slurm sees and the slurmds' memory,
                                         # shrink
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from types import FrameType

from bench import node_cpu
from tests.hubproc import REPO

CLUSTER_SH = REPO / "deploy" / "local" / "cluster.sh"
PARTITION = "bench"
# The nodes' processes (slurmd, and so every job) run niced, and with `apart` in a cgroup of the
# least CPU weight (bench.node_cpu): on a cluster they run on other machines than the hub, which
# here shares the same two cores with a hundred JupyterLabs. So they take what the hub leaves,
# as the nodes' own cores would be.
NODE_NICE = 10


def _cluster(*args: str) -> None:
    subprocess.run(["bash", str(CLUSTER_SH), *args], check=True, timeout=600)


def node_names(count: int) -> list[str]:
    return [f"{PARTITION}-{index:02d}" for index in range(1, count + 1)]


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def bench_nodes(
    count: int,
    gpus: int,
    hold: Callable[[], AbstractContextManager[None]] = nullcontext,
    kind: str = "",
    apart: bool = False,
) -> Iterator[list[str]]:
    """COUNT nodes of GPUS fake GPUs each (of gres type KIND, e.g. h100, if given) in the
    partition `bench`, for the block. Growing and shrinking restart slurmctld: `hold` keeps
    others off the cluster meanwhile (the tests' lanes). `apart`: the nodes' processes in a
    cgroup of the least CPU weight too (bench.node_cpu), not only niced."""
    previous = signal.signal(signal.SIGTERM, _exit_on_term)
    try:
        with hold():
            _cluster("shrink", PARTITION)  # whatever a killed run left
            _cluster("grow", PARTITION, str(count), str(gpus), *([kind] if kind else []))
        pids = _slurmd_pids(node_names(count))
        for pid in pids:
            subprocess.run(["renice", "-n", str(NODE_NICE), "-p", pid], capture_output=True)
        where = node_cpu.place(pids) if apart else "sharing the cores"
        print(f"[bench] the nodes' processes: nice {NODE_NICE}, {where}")
        yield node_names(count)
    finally:
        with hold():
            _cluster("shrink", PARTITION)
        node_cpu.release()
        signal.signal(signal.SIGTERM, previous)


def _slurmd_pids(names: list[str]) -> list[str]:
    return [
        pid
        for name in names
        for pid in subprocess.run(
            ["pgrep", "-f", f"^slurmd -N {name}$"], capture_output=True, text=True
        ).stdout.split()
    ]


def slurmd_rss_mb(names: list[str]) -> float:
    """The slurmds' resident memory together, in MB."""
    total_kb = 0
    for pid in _slurmd_pids(names):
        with open(f"/proc/{pid}/status") as status:
            rss = next(line for line in status if line.startswith("VmRSS"))
        total_kb += int(rss.split()[1])
    return total_kb / 1024


def main() -> None:
    count, gpus = (int(arg) for arg in sys.argv[1:3])
    with bench_nodes(count, gpus) as names:
        shown = subprocess.run(
            ["sinfo", "-p", PARTITION, "-h", "-o", "%D nodes, %G each, %T"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        print(f"partition {PARTITION}: {shown}")
        print(f"slurmd memory, all {count}: {slurmd_rss_mb(names):.0f} MB")
    left = subprocess.run(["sinfo", "-p", PARTITION, "-h"], capture_output=True, text=True)
    print(f"after: partition {PARTITION} {'gone' if not left.stdout.strip() else 'LEFT'}")


if __name__ == "__main__":
    main()
