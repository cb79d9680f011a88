"""The jobs API on SQLite and PostgreSQL: bad input, other users' jobs, idempotency, and Slurm's
own refusals. Real hub tokens, real sbatch as the user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from gpuportal_core.partitions import NodeShape, Partition
from gpuportal_portal.cluster import PartitionCatalog
from tests.hubproc import wait_for
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.jobs import install_job_files

pytestmark = pytest.mark.integration

API = "/services/portal/api"
WHERE = {
    "name": "where",
    "launcher": "mpi",
    "nodes": 2,
    "gpus_per_node": 2,
    "runtime": "00:05:00",
    "script": "/home/alice/jobs/where.sh",
}
# The same job, but it stays in squeue until cancelled: where.sh ends within a second of
# starting, so a test counting alice's jobs right after the POST would race it.
STAYS = {**WHERE, "script": "/home/alice/jobs/wait.sh"}


def as_user(token: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"token {token}", **extra}


@pytest.fixture
def no_jobs() -> Iterator[None]:
    install_job_files("alice")
    cancel_user_jobs("alice", "bob")
    yield
    cancel_user_jobs("alice", "bob")


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"nodes": 0}, "nodes", "greater than or equal to 1"),
        ({"nodes": 3}, "nodes", "partition gpu has 2 nodes that can hold 2 GPUs each"),
        ({"nodes": 3, "gpus_per_node": 1}, "nodes", "has 2 nodes that can hold 1 GPU each"),
        ({"gpus_per_node": 5}, "gpus_per_node", "have at most 4 GPUs"),
        (
            {"script": "/home/bob/train.py"},
            "script",
            "inside your own areas: /home/alice, /projects",
        ),
        ({"script": "/home/alice/../bob/x.py"}, "script", "must not contain '..'"),
        ({"script": "/etc/passwd"}, "script", "inside your own areas"),
        ({"name": "a\nb"}, "name", "1-64 letters"),
        ({"args": ["--ok", "x\ny"]}, "args", "one line"),
        ({"launcher": "pdsh"}, "launcher", "Input should be"),
        ({"runtime": "30:00:00"}, "runtime", "over partition gpu's MaxTime of 24:00:00"),
        ({"partition": "nope"}, "partition", "no partition 'nope'"),
        ({"environment": {"kind": "venv", "prefix": "rel/x"}}, "environment", "absolute path"),
        ({"container": {"kind": "pyxis", "image": "x; id"}}, "container", "registry reference"),
        ({"gpu_type": "l40s"}, "gpu_type", "its kinds: a100, h100 (empty = any kind)"),
        ({"gpu_type": "h100", "gpus_per_node": 5}, "gpus_per_node", "at most 4 h100 GPUs"),
        ({"gpu_type": "a100:2"}, "gpu_type", "must be a GPU kind"),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_nothing_is_submitted(
    portal: TestClient,
    tokens: dict[str, str],
    no_jobs: None,
    change: dict[str, Any],
    field: str,
    rule: str,
) -> None:
    response = portal.post(
        f"{API}/jobs", headers=as_user(tokens["alice"]), json={**WHERE, **change}
    )
    assert response.status_code == 422, response.text
    problems = response.json()["detail"]
    assert any(p["loc"][-1] == field and rule in p["msg"] for p in problems), problems
    assert user_jobs("alice") == []
    assert portal.get(f"{API}/jobs", headers=as_user(tokens["alice"])).json() == []


def test_a_retried_post_with_the_same_key_submits_once(
    portal: TestClient, tokens: dict[str, str], no_jobs: None
) -> None:
    headers = as_user(tokens["alice"], **{"Idempotency-Key": "train-2026-11-22-a"})
    first = portal.post(f"{API}/jobs", headers=headers, json=STAYS)
    again = portal.post(f"{API}/jobs", headers=headers, json=STAYS)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["slurm_job_id"] == first.json()["slurm_job_id"]
    assert len(user_jobs("alice")) == 1
    other = portal.post(f"{API}/jobs", headers=headers, json={**STAYS, "nodes": 1})
    assert other.status_code == 409
    assert "used for a different request" in other.json()["detail"]


def test_other_users_jobs_are_404_to_read_and_to_cancel(
    portal: TestClient, tokens: dict[str, str], no_jobs: None
) -> None:
    job = portal.post(f"{API}/jobs", headers=as_user(tokens["alice"]), json=STAYS).json()
    bob = as_user(tokens["bob"])
    assert portal.get(f"{API}/jobs/{job['id']}", headers=bob).status_code == 404
    assert portal.delete(f"{API}/jobs/{job['id']}", headers=bob).status_code == 404
    assert portal.get(f"{API}/jobs", headers=bob).json() == []
    assert len(user_jobs("alice")) == 1
    # The owner may cancel it; the admin sees it in the full list.
    cancelled = portal.delete(f"{API}/jobs/{job['id']}", headers=as_user(tokens["alice"]))
    assert cancelled.status_code == 202
    everyone = portal.get(f"{API}/jobs", headers=as_user(tokens["carol"])).json()
    assert [j["id"] for j in everyone] == [job["id"]]


def test_slurms_own_refusal_is_a_400_with_its_message(
    portal: TestClient, tokens: dict[str, str], no_jobs: None
) -> None:
    # The portal's partition view is cached: say it is stale, and believes in 8-GPU nodes that
    # were since replaced. Our own check passes; the real sbatch refuses, in its own words.
    async def stale_sinfo() -> dict[str, Partition]:
        return {"gpu": Partition("gpu", 86400, (NodeShape(8, 64, 500000, 2),))}

    portal.app.state.catalog = PartitionCatalog(stale_sinfo, max_age=60)
    response = portal.post(
        f"{API}/jobs", headers=as_user(tokens["alice"]), json={**WHERE, "gpus_per_node": 8}
    )
    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith("Slurm refused the job: ")
    assert (
        "Batch job submission failed: More processors requested than permitted"
        in (response.json()["detail"])
    )
    assert user_jobs("alice") == []
    assert portal.get(f"{API}/jobs", headers=as_user(tokens["alice"])).json() == []


def test_the_preview_is_the_script_that_would_be_submitted(
    portal: TestClient, tokens: dict[str, str], no_jobs: None
) -> None:
    preview = portal.post(f"{API}/jobs/preview", headers=as_user(tokens["alice"]), json=WHERE)
    assert preview.status_code == 200
    script = preview.json()["script"]
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n" in script
    assert "srun --kill-on-bad-exit=1 /home/alice/jobs/where.sh" in script
    assert user_jobs("alice") == []
    job = portal.post(f"{API}/jobs", headers=as_user(tokens["alice"]), json=WHERE).json()
    assert job["script"] == script


@pytest.mark.parametrize(
    ("kind", "partition", "node"),
    [("a100", "gpu", "gpu01"), ("h100", "gpu", "gpu02"), ("1g.10gb", "mig", "mig01")],
)
def test_a_job_of_one_kind_runs_on_the_node_that_carries_it(
    portal: TestClient,
    tokens: dict[str, str],
    no_jobs: None,
    kind: str,
    partition: str,
    node: str,
) -> None:
    """Slurm gets --gres=gpu:KIND:1 (the MIG slice in its own partition) and places it there."""
    body = {**STAYS, "nodes": 1, "gpus_per_node": 1, "gpu_type": kind, "partition": partition}
    made = portal.post(f"{API}/jobs", headers=as_user(tokens["alice"]), json=body)
    assert made.status_code == 201, made.text
    assert f"#SBATCH --gres=gpu:{kind}:1\n" in made.json()["script"]
    wait_for(lambda: user_jobs("alice", "%T|%N") == [f"RUNNING|{node}"], 60, f"the job on {node}")
    asked = user_jobs("alice", "%b")
    assert asked and kind in asked[0], asked
