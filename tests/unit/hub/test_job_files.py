"""Where a session job's token file goes (issue 10, 8), and how it is written."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from gpuportal_adapters import slurm as slurm_module
from gpuportal_adapters.slurm import SlurmClient
from gpuportal_adapters.slurm_commands import CommandResult
from gpuportal_spawner.job_files import JobFiles


def files(hub: str, server: str) -> JobFiles:
    return JobFiles(
        SlurmClient(), user="bob", server=server, log_dir_template="{home}/.logs", hub=hub
    )


def test_two_hubs_sharing_a_home_get_two_token_files() -> None:
    log_dir = "/home/bob/.logs"
    one, other = files("prod", "").token_file(log_dir), files("test", "").token_file(log_dir)
    assert one != other
    assert one == "/home/bob/.logs/token-prod-default"


def test_one_server_keeps_its_file_so_a_taken_over_job_reads_the_renewed_token() -> None:
    assert files("prod", "gpu").token_file("/l") == files("prod", "gpu").token_file("/l")


def test_names_cannot_leave_the_log_folder() -> None:
    path = files("../x", "a/../../b").token_file("/home/bob/.logs")
    assert path.startswith("/home/bob/.logs/token-") and path.count("/") == 4


def test_the_token_and_the_tls_files_go_with_one_folder_check_and_one_write_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each command is a fork and exec of the hub (issue 41): the folder is made once for
    the token and the session's TLS files, not once per file."""
    ran: list[tuple[list[str], str | None]] = []

    async def run(
        argv: Sequence[str],
        *,
        input_text: str | None = None,
        env: Any = None,
        timeout: float,
        **bounds: Any,
    ) -> CommandResult:
        ran.append((list(argv), input_text))
        return CommandResult(0, "", "")

    monkeypatch.setattr(slurm_module, "run_command", run)
    job = files("prod", "")
    tls = {"/home/bob/.logs/tls.pem": "KEY+CERT", "/home/bob/.logs/tls-ca.pem": "CAS"}
    path = asyncio.run(job.write_token("/home/bob/.logs", "secret", beside=tls))

    assert path == "/home/bob/.logs/token-prod-default"
    commands = [(argv[argv.index("bob") + 1 :], text) for argv, text in ran]
    assert commands == [
        (["install", "-d", "-m", "0700", "/home/bob/.logs"], None),
        (["tee", path], "secret"),
        (["tee", "/home/bob/.logs/tls.pem"], "KEY+CERT"),
        (["tee", "/home/bob/.logs/tls-ca.pem"], "CAS"),
    ]


def test_a_failed_write_says_which_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    async def run(argv: Sequence[str], **_: Any) -> CommandResult:
        return CommandResult(1, "", "tee: /home/bob/.logs/x: Disk quota exceeded\n")

    monkeypatch.setattr(slurm_module, "run_command", run)
    with pytest.raises(OSError, match=r"Could not prepare /home/bob/.logs .*Disk quota"):
        asyncio.run(files("prod", "").write_token("/home/bob/.logs", "secret"))
