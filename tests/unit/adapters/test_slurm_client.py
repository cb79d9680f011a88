"""What reaches the commands the Slurm client runs: argv, environment and umask.

The integration test (tests/integration/security/test_service_env.py) tries the real exploit;
these pin the rules down without sudo or Slurm.
"""

from __future__ import annotations

import asyncio
import weakref
from pathlib import Path

import pytest

from gpuportal_adapters import slurm_commands
from gpuportal_adapters.slurm import SlurmClient
from gpuportal_adapters.slurm_commands import command_env, run_command

SECRET = "PORTAL_DATABASE_URL"


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_a_command_never_inherits_the_service_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET, "postgresql://portal:hunter2@db/portal")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "abc123")
    result = run(run_command(["env"], timeout=10))
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines()}
    assert SECRET not in names and "JUPYTERHUB_API_TOKEN" not in names
    assert "PATH" in names and "LANG" in names


def test_commands_create_private_files() -> None:
    result = run(run_command(["sh", "-c", "umask"], timeout=10))
    assert result.stdout.strip() == "0077"


def test_run_as_names_the_kept_variables_and_drops_keep_when_there_are_none() -> None:
    client = SlurmClient()
    assert client._as_user("bob", "tail", "x", keep=["USER", "HOME"]) == [
        "sudo", "--preserve-env=HOME,USER", "-u", "bob", "tail", "x"
    ]  # fmt: skip
    assert client._as_user("bob", "tail", "x") == ["sudo", "-u", "bob", "tail", "x"]


def test_sbatch_gets_exactly_the_job_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in sbatch records its environment: the job's variables, and no service secret."""
    seen = tmp_path / "env.txt"
    sbatch = tmp_path / "sbatch"
    sbatch.write_text(f"#!/bin/sh\nenv > {seen}\ncat > /dev/null\necho 42\n")
    sbatch.chmod(0o755)
    monkeypatch.setenv(SECRET, "postgresql://portal:hunter2@db/portal")
    client = SlurmClient(run_as=[], bin_dir=str(tmp_path), timeout=10)
    job_id = run(client.submit("#!/bin/sh\n", user="bob", env={"JUPYTERHUB_USER": "bob"}))
    assert job_id == "42"
    env = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    assert env["JUPYTERHUB_USER"] == "bob"
    assert SECRET not in env


def test_command_env_adds_what_the_caller_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    env = command_env({"HOME": "/home/bob"})
    assert env["LANG"] == "de_DE.UTF-8" and env["HOME"] == "/home/bob"


def test_commands_take_turns_and_a_wait_for_a_turn_is_not_timed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Twelve commands at once run at most MAX_CONCURRENT at a time; each has 1 s, and the
    ones that waited for a turn (0.4 s or more) are not timed out for it."""
    monkeypatch.setattr(slurm_commands, "MAX_CONCURRENT", 4)
    monkeypatch.setattr(slurm_commands, "_turns", weakref.WeakKeyDictionary())
    # Each says how many are running as it starts (a file each while it runs).
    script = 'touch "$1/$$"; ls "$1" | wc -l; sleep 0.4; rm "$1/$$"'

    async def twelve() -> list[slurm_commands.CommandResult]:
        return await asyncio.gather(
            *(
                run_command(["sh", "-c", script, "sh", str(tmp_path)], timeout=1.0)
                for _ in range(12)
            )
        )

    results = asyncio.run(twelve())
    assert all(result.returncode == 0 for result in results)
    assert max(int(result.stdout) for result in results) == 4


def test_tagged_jobs_of_several_users_in_one_squeue(tmp_path: Path) -> None:
    """A stand-in squeue records its arguments: the users asked for, in one --user list."""
    seen = tmp_path / "argv.txt"
    squeue = tmp_path / "squeue"
    squeue.write_text(f'#!/bin/sh\necho "$@" > {seen}\n')
    squeue.chmod(0o755)
    client = SlurmClient(run_as=[], bin_dir=str(tmp_path), timeout=10)
    assert run(client.tagged(users=["carol", "bob", ""])) == []
    assert seen.read_text().split()[-1] == "--user=bob,carol"
    run(client.tagged("t", user="bob", users=["bob"]))
    assert seen.read_text().split()[-1] == "--user=bob"
