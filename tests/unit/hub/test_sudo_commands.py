"""Every command line the hub and the portal run as a cluster user is one the service account's
sudo rule allows (gpuportal_core.sudo_rules), with only the variables it keeps (issue 33, 1).

The Slurm client's command runner is the boundary replaced here; each product function builds
its command as it would on the cluster.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from gpuportal_adapters import slurm as slurm_module
from gpuportal_adapters.slurm import SlurmClient
from gpuportal_adapters.slurm_commands import CommandResult
from gpuportal_core.sudo_rules import SESSION_ENV, allows, split_env
from gpuportal_portal import job_checks, job_output, use_collector
from gpuportal_spawner import board_spawner
from gpuportal_spawner.job_files import JobFiles

Call = tuple[list[str], dict[str, str]]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    seen: list[Call] = []

    async def run(
        argv: Sequence[str],
        *,
        input_text: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float,
        **bounds: int | bool,  # max_output, keep_truncated
    ) -> CommandResult:
        seen.append((list(argv), dict(env or {})))
        return CommandResult(0, "1\n", "")

    monkeypatch.setattr(slurm_module, "run_command", run)
    return seen


def as_user(argv: list[str]) -> tuple[list[str], list[str]]:
    """The command after sudo's options, and the variables it asked sudo to keep."""
    assert argv[0] == "sudo", argv
    at = argv.index("-u")
    kept = [part.split("=", 1)[1] for part in argv[1:at] if part.startswith("--preserve-env=")]
    return argv[at + 2 :], ",".join(kept).split(",") if kept else []


def assert_allowed(calls: list[Call]) -> None:
    assert calls
    for argv, _env in calls:
        command, kept = as_user(argv)
        assert allows(command), f"not in the sudo rule: {command}"
        assert set(kept) <= SESSION_ENV, f"kept beyond the rule: {set(kept) - SESSION_ENV}"


def test_the_session_jobs_files_are_written_read_and_removed_within_the_rule(
    calls: list[Call],
) -> None:
    files = JobFiles(
        SlurmClient(), user="alice", server="", log_dir_template="{home}/.gpuportal", hub="t"
    )

    async def walk() -> None:
        await files.write_token("/home/alice/.gpuportal", "secret")
        await files.writable("/home/alice/runs")
        await files.readable_folder("/home/alice/runs")
        await files.log_tail("12", 20)
        await files.remove_token()

    asyncio.run(walk())
    assert_allowed(calls)
    # No shell and nothing that runs another command.
    assert not {"sh", "bash", "env"} & {as_user(argv)[0][0] for argv, _ in calls}


def test_submit_and_cancel_within_the_rule(calls: list[Call]) -> None:
    slurm = SlurmClient()
    env = {"JUPYTERHUB_USER": "alice", "GPUPORTAL_DASK_TAG": "t"}

    async def walk() -> None:
        await slurm.submit("#!/bin/sh\n", user="alice", env=env, tag="gpuportal:session:t:a:")
        await slurm.submit("#!/bin/sh\n", user="alice", env=env, test_only=True)
        await slurm.cancel("12", user="alice")
        await slurm.cancel("12_3", user="alice")

    asyncio.run(walk())
    assert_allowed(calls)
    assert as_user(calls[0][0])[1] == sorted(env)


def test_the_portal_reads_output_use_and_paths_within_the_rule(calls: list[Call]) -> None:
    slurm = SlurmClient()
    record: Any = SimpleNamespace(
        user="alice",
        output="/home/alice/.gpuportal-jobs/train-%a.out",
        slurm_job_id="40",
        tasks={"0": "RUNNING", "1": "COMPLETED"},
    )
    job: Any = SimpleNamespace(
        user="root", workdir="/home/alice/work", script="/home/alice/work/run.sh"
    )

    async def walk() -> None:
        await job_output.OutputFolders().make(slurm, "alice", "/home/alice/.gpuportal-jobs")
        await job_output.output_tail(slurm, record)
        await job_output.output_from(slurm, record, 1234, "1")
        await use_collector.gpu_readings(slurm, "root", "40")
        await job_checks.check_paths(slurm, job)

    asyncio.run(walk())
    assert_allowed(calls)


def test_a_shared_boards_step_and_its_lookup_within_the_rule() -> None:
    lab = SimpleNamespace(session_venv="/opt/venv", slurm_bin_dir="", job_id="77")
    step = board_spawner.step_command(
        lab,
        board_name="tb-runs",
        home="/home/alice",
        log_dir="/home/alice/.gpuportal",
        logdir="/home/alice/runs",
        token_file="/home/alice/.gpuportal/token-t-tb-runs",
        groups=["ds"],
    )
    assert allows(step)
    assert allows(board_spawner.step_lookup("/usr/bin", "77"))


@pytest.mark.parametrize(
    "argv",
    [
        ["sh", "-c", "id"],
        ["env", "A=1", "srun", "--jobid=1", "--overlap", "id"],
        ["sbatch", "--parsable", "--wrap=id"],
        ["scancel", "--user=bob"],
        ["tail", "-n", "5", "--pid=1", "/etc/shadow"],
        ["tee", "-a", "/home/alice/.bashrc"],
        ["rm", "-rf", "/home/alice"],
        ["srun", "--overlap", "--jobid=1", "id"],
        ["install", "-m", "4755", "/bin/sh", "/tmp/x"],
        ["python3", "-c", "print()"],
    ],
)
def test_the_rule_refuses_what_the_product_never_runs(argv: list[str]) -> None:
    assert not allows(argv)


def test_variables_that_change_how_programs_load_never_pass() -> None:
    kept, left = split_env(
        {"LD_PRELOAD": "/x.so", "PYTHONPATH": "/x", "JUPYTERHUB_USER": "a", "PATH": "/x"}
    )
    assert kept == {"JUPYTERHUB_USER": "a"}
    # PATH is sudo's own (secure_path): it refuses to keep the caller's, so it is never asked.
    assert left == ["LD_PRELOAD", "PYTHONPATH"]
