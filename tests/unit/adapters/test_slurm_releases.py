"""The Slurm command layer on each supported Slurm release's real answers.

tests/golden/slurm/<release>.json holds what a real cluster of that release printed to each
command SlurmClient runs (tests/slurm_capture.py: 22.05 on Debian 12, 24.11 on Debian 13, both
captured from the local cluster's real daemons). Each test replays one command's answer through
the real client (its argv must still be the one captured: a changed command needs a fresh
capture on both releases) and checks what the portal reads from it, the same on every release.
Where the releases print differently, the test names the difference (docs/reference/support.md lists
them).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import gpuportal_adapters.slurm as slurm_module
from gpuportal_adapters.slurm import SlurmClient
from gpuportal_adapters.slurm_commands import CommandResult

CAPTURES = sorted((Path(__file__).parents[2] / "golden" / "slurm").glob("*.json"))


def test_both_supported_releases_are_captured() -> None:
    assert {path.stem for path in CAPTURES} >= {"22.05", "24.11"}


@pytest.fixture(params=CAPTURES, ids=lambda path: path.stem)
def captured(request: pytest.FixtureRequest) -> dict[str, Any]:
    return json.loads(request.param.read_text())


def _same_command(built: list[str], recorded: list[str]) -> bool:
    """The same argv, but for a time window's bounds (sacct -S), which move with the clock."""

    def stable(argv: list[str]) -> list[str]:
        return [a for i, a in enumerate(argv) if i == 0 or argv[i - 1] not in ("-S", "-E")]

    return stable(built) == stable(recorded)


async def replay(
    captured: dict[str, Any],
    name: str,
    call: Callable[[SlurmClient], Awaitable[Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
    recorded = captured["commands"][name]

    async def answer(argv: list[str], **_: Any) -> CommandResult:
        if argv[-2:] == ["show", "config"]:  # fair_share's second command
            config = captured["commands"]["show_config_priority"]
            return CommandResult(config["returncode"], config["stdout"], config["stderr"])
        assert _same_command(list(argv), recorded["argv"]), (
            f"{name}: the client now runs {argv}, the capture ran {recorded['argv']}: "
            "capture again on every release (python -m tests.slurm_capture)"
        )
        return CommandResult(recorded["returncode"], recorded["stdout"], recorded["stderr"])

    monkeypatch.setattr(slurm_module, "run_command", answer)
    return await call(SlurmClient())


async def test_squeue_states_reasons_nodes_and_tags(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = captured["jobs"]
    jobs = await replay(
        captured,
        "jobs",
        lambda c: c.jobs([ids["running"], ids["queued"], ids["done"]]),
        monkeypatch,
    )
    running, queued, done = jobs[ids["running"]], jobs[ids["queued"]], jobs[ids["done"]]
    assert (running.state, running.user, running.comment) == (
        "RUNNING",
        "alice",
        "gpuportal:capture",
    )
    assert running.host in ("gpu01", "gpu02") and running.nodes == running.host
    assert running.time_limit == "30:00"
    assert (queued.state, queued.reason, queued.user) == ("PENDING", "BeginTime", "bob")
    assert queued.comment == "" and queued.host == ""  # squeue prints "(null)" and "n/a"
    assert done.state == "COMPLETED"
    assert running.described.alive and not done.described.alive


async def test_a_forgotten_job_id_reads_as_gone(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await replay(captured, "jobs_gone", lambda c: c.jobs(["999999"]), monkeypatch) == {}


async def test_jobs_found_again_by_their_tag(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    found = await replay(
        captured, "tagged", lambda c: c.tagged("gpuportal:capture", alive_only=False), monkeypatch
    )
    assert [job.job_id for job in found] == [captured["jobs"]["running"]]


async def test_scontrol_job_detail(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    running = captured["jobs"]["running"]
    [detail] = await replay(captured, "job_details", lambda c: c.job_details(running), monkeypatch)
    assert (detail.job_id, detail.user, detail.state, detail.time_limit) == (
        running,
        "alice",
        "RUNNING",
        "00:30:00",
    )
    assert detail.nodes in ("gpu01", "gpu02") and detail.start_time.startswith("20")


async def test_scontrol_array_tasks(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    array = captured["jobs"]["array"]
    details = await replay(
        captured, "job_details_array", lambda c: c.job_details(array), monkeypatch
    )
    assert sorted(d.array_task for d in details) == ["0", "1"]
    assert {(d.state, d.exit_code) for d in details} == {("COMPLETED", 0)}


async def test_sacct_after_the_controller_forgot(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = captured["jobs"]
    [done] = await replay(captured, "accounting", lambda c: c.accounting(ids["done"]), monkeypatch)
    assert (done.job_id, done.user, done.state, done.exit_code, done.signal) == (
        ids["done"],
        "alice",
        "COMPLETED",
        0,
        0,
    )
    tasks = await replay(
        captured, "accounting_array", lambda c: c.accounting(ids["array"]), monkeypatch
    )
    assert sorted((t.job_id, t.array_task) for t in tasks) == [
        (ids["array"], "0"),
        (ids["array"], "1"),
    ]


async def test_account_gpu_limits(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assoc = await replay(captured, "associations", lambda c: c.associations(), monkeypatch)
    assert assoc.gpu_limits["ds"] == 6
    assert "ds" in assoc.accounts["alice"]


async def test_node_gpus_used_and_free(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = {
        n.name: n for n in await replay(captured, "gpu_nodes", lambda c: c.gpu_nodes(), monkeypatch)
    }
    assert {nodes[n].total for n in ("gpu01", "gpu02")} == {4}
    assert sorted(nodes[n].used for n in ("gpu01", "gpu02")) == [0, 2]
    assert all(nodes[n].usable and nodes[n].partitions == ("gpu",) for n in ("gpu01", "gpu02"))


async def test_gpu_jobs_for_the_capacity_view(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = captured["jobs"]
    jobs = {
        j.job_id: j for j in await replay(captured, "gpu_jobs", lambda c: c.gpu_jobs(), monkeypatch)
    }
    running, queued = jobs[ids["running"]], jobs[ids["queued"]]
    # A difference: squeue's %b says "gres:gpu:2" on 22.05, "gres/gpu:2" since 23.02.
    said = {"22.05": "|gres:gpu:2|", "24.11": "|gres/gpu:2|"}
    assert said.get(captured["release"], "|") in captured["commands"]["gpu_jobs"]["stdout"]
    assert (running.running, running.gpus_per_node, running.node_count) == (True, 2, 1)
    assert (queued.running, queued.gpus_per_node) == (False, 1)
    assert running.time_limit == 30 * 60 and running.end is not None
    assert (running.account, running.user) == ("ds", "alice")


async def test_a_finished_jobs_use(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    use = await replay(captured, "use", lambda c: c.use(captured["jobs"]["done"]), monkeypatch)
    assert use is not None
    assert (use.cores, use.gpus, use.limit_s, use.account) == (2, 1, 30 * 60, "ds")
    assert use.requested_bytes == 2 * 1024**3


async def test_gpu_hours(captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    since = datetime.now() - timedelta(hours=1)
    hours = await replay(
        captured, "gpu_hours", lambda c: c.gpu_hours(since=since, user="alice"), monkeypatch
    )
    assert {(user, account) for user, account, _ in hours} >= {("alice", "ds")}
    assert all(used >= 0 for used in hours.values())


async def test_fair_share_where_the_priority_plugin_keeps_one(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A difference: a slurm.conf without PriorityType means priority/basic on 22.05 (no fair
    share: the portal shows none) and priority/multifactor since 23.11 (a factor 0..1)."""
    shares = await replay(captured, "fair_share", lambda c: c.fair_share("alice"), monkeypatch)
    assert [s.account for s in shares] == ["ds"]
    plugin = captured["commands"]["show_config_priority"]["stdout"]
    expected = {"22.05": "priority/basic", "24.11": "priority/multifactor"}
    assert expected.get(captured["release"], "") in plugin
    if "priority/basic" in plugin:
        assert shares[0].value is None
    else:
        assert shares[0].value is not None and 0 <= shares[0].value <= 1


async def test_a_maintenance_reservation(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    [window] = await replay(captured, "reservations", lambda c: c.reservations(), monkeypatch)
    assert window.name == "capture-maintenance" and "MAINT" in window.flags
    assert window.end - window.start == timedelta(hours=2)
    assert set(window.nodes) == {"gpu01", "gpu02"}


async def test_partition_limits_and_shapes(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    partitions = await replay(captured, "partitions", lambda c: c.partitions(), monkeypatch)
    gpu = partitions["gpu"]
    assert gpu.max_time == 24 * 3600
    assert [(s.gpus, s.cores, s.mem_mb, s.count) for s in gpu.shapes] == [(4, 32, 200000, 2)]


async def test_ping_extend_and_cancel(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = captured["jobs"]
    await replay(captured, "ping", lambda c: c.ping(timeout=10), monkeypatch)
    await replay(
        captured, "set_time_limit", lambda c: c.set_time_limit(ids["running"], 45 * 60), monkeypatch
    )
    await replay(captured, "cancel", lambda c: c.cancel(ids["queued"], user="bob"), monkeypatch)
