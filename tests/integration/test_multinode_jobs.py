"""Multi-node jobs through the hub-managed portal on the local two-node cluster, end to end."""

from __future__ import annotations

import pwd
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.integration.conftest import Hub, cancel_user_jobs
from tests.integration.jobs import install_job_files

pytestmark = pytest.mark.integration

JOBS = "/services/portal/api/jobs"
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "ENDED", "NODE_FAIL", "OUT_OF_MEMORY"}


@pytest.fixture
def alice_token(hub: Hub) -> Iterator[str]:
    install_job_files("alice")
    cancel_user_jobs("alice")
    session = hub.login("alice")
    token: str = hub.api(session, "POST", "/users/alice/tokens", json={"note": "jobs"}).json()[
        "token"
    ]
    yield token
    cancel_user_jobs("alice")


def run_to_the_end(
    hub: Hub, token: str, body: dict[str, Any], *, deadline_s: float = 180
) -> tuple[set[str], dict[str, Any]]:
    headers = {"Authorization": f"token {token}"}
    submitted = requests.post(f"{hub.url}{JOBS}", headers=headers, json=body, timeout=60)
    assert submitted.status_code == 201, submitted.text
    job_id = submitted.json()["id"]
    seen: set[str] = set()
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        detail: dict[str, Any] = requests.get(
            f"{hub.url}{JOBS}/{job_id}", headers=headers, timeout=60
        ).json()
        seen.add(detail["state"])
        if detail["state"] in TERMINAL:
            return seen, detail
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} did not end: {detail}")


def whole_output(detail: dict[str, Any]) -> str:
    """The job's whole output file (alice's `~/.gpuportal-jobs/NAME-ID.out`), not the page's
    30-line tail: torch's elastic agents may end it with a C++ stack of a benign warning (the
    agent that hosted the rendezvous store exits first, the other one's shutdown call fails),
    which pushes the ranks' lines out of the tail though the job did all it should."""
    home = pwd.getpwnam("alice").pw_dir
    path = Path(home, ".gpuportal-jobs", f"{detail['name']}-{detail['slurm_job_id']}.out")
    return path.read_text(errors="replace")


def test_torchrun_two_nodes_two_processes_all_reduce(hub: Hub, alice_token: str) -> None:
    seen, detail = run_to_the_end(
        hub,
        alice_token,
        {
            "name": "allreduce",
            "launcher": "torchrun",
            "nodes": 2,
            "gpus_per_node": 2,
            "runtime": "00:10:00",
            "script": "/home/alice/jobs/allreduce.py",
            "environment": {"kind": "venv", "prefix": "/opt/gpuportal/envs/torch"},
        },
    )
    assert "RUNNING" in seen
    assert (detail["state"], detail["exit_code"], detail["nodes"]) == ("COMPLETED", 0, "gpu[01-02]")
    # Searched in the whole output, not line by line: workers of one node share its stream.
    output = whole_output(detail)
    results = re.findall(r"rank (\d) of 4 on (gpu0[12]) \((\w+)\): all_reduce sum = 10", output)
    assert sorted(rank for rank, _, _ in results) == ["0", "1", "2", "3"], output
    assert {node for _, node, _ in results} == {"gpu01", "gpu02"}
    # Each rank's own host: the two nodes' workers met over the bridge, not on one loopback.
    assert all(node == host for _, node, host in results), results


def test_deepspeed_two_nodes_train_a_tiny_model_over_gloo(hub: Hub, alice_token: str) -> None:
    """DeepSpeed for real (it was only ever rendered and compared with a golden file): its
    launcher starts a worker on each node through Slurm, on CPU with gloo."""
    _, detail = run_to_the_end(
        hub,
        alice_token,
        {
            "name": "deepspeed-tiny",
            "launcher": "deepspeed",
            "nodes": 2,
            "gpus_per_node": 1,
            "runtime": "00:10:00",
            "script": "/home/alice/jobs/deepspeed_tiny.py",
            "environment": {"kind": "venv", "prefix": "/opt/gpuportal/envs/torch"},
        },
        deadline_s=420,
    )
    # The whole output, one line each: pytest cuts a list short, and the cause is at its end.
    output = whole_output(detail)
    assert (detail["state"], detail["exit_code"]) == ("COMPLETED", 0), output
    results = re.findall(r"rank (\d) of 2 on (gpu0[12]): loss (\d+\.\d+)", output)
    assert sorted(rank for rank, _, _ in results) == ["0", "1"], output
    assert {node for _, node, _ in results} == {"gpu01", "gpu02"}
    # Data-parallel: the same data and seed on each rank, the gradients averaged, one loss.
    assert len({loss for _, _, loss in results}) == 1, results


@pytest.mark.parametrize(("launcher", "tasks"), [("mpi", 4), ("srun", 2)])
def test_a_task_per_gpu_or_per_node_on_both_nodes(
    hub: Hub, alice_token: str, launcher: str, tasks: int
) -> None:
    _, detail = run_to_the_end(
        hub,
        alice_token,
        {
            "name": f"where-{launcher}",
            "launcher": launcher,
            "nodes": 2,
            "gpus_per_node": 2,
            "runtime": "00:05:00",
            "script": "/home/alice/jobs/where.sh",
        },
    )
    assert (detail["state"], detail["exit_code"]) == ("COMPLETED", 0)
    lines = sorted(line for line in detail["output_tail"] if line.startswith("task "))
    assert len(lines) == tasks, detail["output_tail"]
    assert {line.rsplit(" ", 1)[1] for line in lines} == {"gpu01", "gpu02"}
