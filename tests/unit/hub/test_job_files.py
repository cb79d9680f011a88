"""Where a session job's token file goes (issue 10, 8)."""

from __future__ import annotations

from gpuportal_adapters.slurm import SlurmClient
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
