"""Issue 54, item 2: a torchrun job runs where torchrun is. With no environment it ran on the
nodes' own system and failed there (`execve(): torchrun: No such file or directory`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuportal_core.batch import BatchJobError
from gpuportal_portal.job_environments import SiteEnvironment, job_environment, programs_in
from gpuportal_portal.job_schemas import JobCreate


def venv(root: Path, name: str, *programs: str) -> str:
    (root / name / "bin").mkdir(parents=True)
    for program in programs:
        (root / name / "bin" / program).write_text("#!/bin/sh\n")
    return str(root / name)


def request(**fields: object) -> JobCreate:
    return JobCreate.model_validate(
        {"name": "train", "nodes": 2, "gpus_per_node": 1, "command": "python -m train", **fields}
    )


@pytest.fixture
def site(tmp_path: Path) -> list[SiteEnvironment]:
    return [
        SiteEnvironment("Session default", "venv", venv(tmp_path, "session", "python")),
        SiteEnvironment("PyTorch", "venv", venv(tmp_path, "torch", "python", "torchrun")),
        SiteEnvironment("DeepSpeed", "conda", venv(tmp_path, "ds", "deepspeed", "torchrun")),
    ]


def test_a_job_without_environment_runs_in_the_first_that_has_its_launcher(
    site: list[SiteEnvironment],
) -> None:
    chosen = job_environment(request(launcher="torchrun"), site)
    assert chosen is not None and (chosen.kind, chosen.prefix) == ("venv", site[1].prefix)
    chosen = job_environment(request(launcher="deepspeed"), site)
    assert chosen is not None and (chosen.kind, chosen.prefix) == ("conda", site[2].prefix)
    # Nothing has horovodrun: the nodes' own system, as before, may.
    assert job_environment(request(launcher="horovod"), site) is None
    # srun and MPI come with Slurm; a container brings its own.
    assert job_environment(request(launcher="srun"), site) is None
    image = {"kind": "apptainer", "image": "/images/torch.sif"}
    assert job_environment(request(launcher="torchrun", container=image), site) is None
    assert programs_in(site[2].prefix) == ["deepspeed", "torchrun"]


def test_a_chosen_environment_without_the_launcher_is_refused_at_the_field(
    site: list[SiteEnvironment],
) -> None:
    chosen = {"kind": "venv", "prefix": site[0].prefix}
    with pytest.raises(BatchJobError) as refused:
        job_environment(request(launcher="torchrun", environment=chosen), site)
    assert refused.value.field == "environment"
    assert refused.value.message == (
        f"torchrun is not in {site[0].prefix}: choose PyTorch or DeepSpeed, which have it"
    )
    with pytest.raises(BatchJobError, match="choose an environment or a container that has it"):
        job_environment(request(launcher="horovod", environment=chosen), site)
    # Modules are found on the nodes only: not judged here.
    modules = {"kind": "modules", "modules": ["pytorch/2.5"]}
    assert job_environment(request(launcher="torchrun", environment=modules), site) is not None


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_a_folder_the_portal_may_not_read_is_left_to_the_nodes(tmp_path: Path) -> None:
    private = venv(tmp_path, "private", "python")
    Path(private).chmod(0)
    try:
        chosen = {"kind": "venv", "prefix": private}
        assert job_environment(request(launcher="torchrun", environment=chosen), []) is not None
    finally:
        Path(private).chmod(0o755)
