"""Dask on Slurm from a notebook (issue 23): 4 workers on 2 nodes, a 4 GB array reduction.

Starts a hub of the bench's own (bench.click_to_lab's, port 8600) on the local cluster and a
session for alice; in a kernel of that session (driven as the notebook page drives it, through
the hub) it starts dask-jobqueue's SLURMCluster as the session set it up, 2 Slurm jobs of 2
worker processes each, sized so that Slurm puts one job on each node, and prints

    workers ready    from cluster.scale() to 4 workers connected (sbatch, Slurm's start, the
                     workers' Python start and their connection to the scheduler in the kernel)
    result           the mean of a 25,000 x 20,000 float64 array (4 GB, 20 blocks of 200 MB),
                     made and reduced on the workers

for each round, then closes the cluster (its jobs end), stops the session and checks that no
job of alice's is left.

    /opt/gpuportal/venv/bin/python -m bench.dask_reduction [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from typing import Any

from bench.click_to_lab import USER, _jobs, bench_hub, stop_server
from bench.kernel_trip import Kernel
from tests.hubproc import wait_for
from tests.integration.test_environment_spawn import spawn

START = """
import time
from dask.distributed import Client
from dask_jobqueue import SLURMCluster
# Most of a node's 200 GB per job: Slurm puts the two jobs on the two nodes.
cluster = SLURMCluster(cores=8, processes=2, memory="120GB")
began = time.perf_counter()
cluster.scale(jobs=2)
client = Client(cluster)
client.wait_for_workers(4, timeout=300)
ready_s = time.perf_counter() - began
hosts = sorted({w["host"] for w in client.scheduler_info()["workers"].values()})
"""
REDUCE = """
import dask.array as da
x = da.random.random((25_000, 20_000), chunks=(1_250, 20_000))
began = time.perf_counter()
mean = float(x.mean().compute())
result_s = time.perf_counter() - began
"""
CLOSE = """
client.close()
cluster.close()
"""


def one_round(kernel: Kernel) -> dict[str, Any]:
    kernel.result(START + "\n'started'", timeout=360)
    kernel.result(REDUCE + "\n'reduced'", timeout=360)
    answer = kernel.result(
        "import json; json.dumps({'ready_s': ready_s, 'result_s': result_s, 'hosts': hosts,"
        " 'workers': len(client.scheduler_info()['workers']), 'mean': mean,"
        " 'gigabytes': x.nbytes / 1e9})"
    )
    kernel.result(CLOSE + "\n'closed'", timeout=120)
    values: dict[str, Any] = json.loads(answer.strip("'"))
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    subprocess.run(["scancel", "-u", USER], check=False)
    wait_for(lambda: not _jobs(), 60, "alice's jobs to end", step=0.2)
    rounds = []
    with bench_hub() as hub:
        try:
            session = hub.login(USER)
            spawn(hub, session, "session")
            token = hub.api(session, "POST", f"/users/{USER}/tokens", json={"note": "bench"})
            kernel = Kernel(hub.url, USER, token.json()["token"])
            for index in range(args.rounds):
                got = one_round(kernel)
                rounds.append(got)
                print(
                    f"round {index + 1}: {got['workers']} workers on {', '.join(got['hosts'])}"
                    f" ready in {got['ready_s']:.2f} s; mean of {got['gigabytes']:.0f} GB"
                    f" = {got['mean']:.5f} in {got['result_s']:.2f} s",
                    flush=True,
                )
                wait_for(lambda: len(_jobs()) == 1, 60, "the workers' jobs to end", step=0.5)
            kernel.close()
            stop_server(hub)
        finally:
            subprocess.run(["scancel", "-u", USER], check=False)
    ready = [float(r["ready_s"]) for r in rounds]
    result = [float(r["result_s"]) for r in rounds]
    print(
        f"workers ready (4 on 2 nodes): median {statistics.median(ready):.2f} s "
        f"(range {min(ready):.2f}-{max(ready):.2f})"
    )
    print(
        f"4 GB reduction: median {statistics.median(result):.2f} s "
        f"(range {min(result):.2f}-{max(result):.2f})"
    )
    print(f"left after the stop: {len(_jobs())} jobs of {USER}")


if __name__ == "__main__":
    main()
