"""The core's Slurm client and the golden scripts against the real local cluster."""

import asyncio
import os
import pwd

import pytest

from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_core.jobs import Phase
from tests.golden_jobs import BATCH_CASES, GOLDEN_CASES, golden_batch_path, golden_path
from tests.integration.conftest import cancel_user_jobs

pytestmark = pytest.mark.integration


def job_env(user: str) -> dict[str, str]:
    entry = pwd.getpwnam(user)
    return {"PATH": "/usr/bin:/bin", "HOME": entry.pw_dir, "USER": user}


@pytest.mark.parametrize(("slug", "environment"), GOLDEN_CASES)
def test_golden_script_is_accepted_by_sbatch_test_only(cluster, slug, environment):
    script = golden_path(slug, environment).read_text()
    verdict = asyncio.run(
        SlurmClient().submit(script, user="alice", env=job_env("alice"), test_only=True)
    )
    assert "to start at" in verdict and "partition gpu" in verdict, verdict


@pytest.mark.parametrize(("launcher", "container"), BATCH_CASES)
def test_golden_batch_script_is_accepted_by_sbatch_test_only(cluster, launcher, container):
    # Pyxis's --container-* flags are srun options in the script body; with no Pyxis plugin
    # on the local cluster only the resources are checked here.
    script = golden_batch_path(launcher, container).read_text()
    verdict = asyncio.run(
        SlurmClient().submit(script, user="alice", env=job_env("alice"), test_only=True)
    )
    # On both nodes; a notebook job on one.
    nodes = "gpu0" if launcher == "notebook" else "gpu[01-02]"
    assert "to start at" in verdict and nodes in verdict, verdict


def test_submit_query_cancel_round_trip(cluster):
    client = SlurmClient()
    script = (
        "#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH --mem=1G\n#SBATCH -t 00:05:00\n"
        "#SBATCH -o /dev/null\nsleep 300\n"
    )

    async def scenario():
        job_id = await client.submit(script, user="bob", env=job_env("bob"))
        jobs = await client.jobs([job_id, "999999"])
        assert set(jobs) == {job_id}
        assert jobs[job_id].user == "bob"
        assert jobs[job_id].phase in (Phase.QUEUED, Phase.RUNNING)
        await client.cancel(job_id, user="bob")
        for _ in range(40):
            info = (await client.jobs([job_id])).get(job_id)
            if info is None or info.phase is Phase.ENDED:
                return info
            await asyncio.sleep(0.25)
        raise AssertionError("job did not end after scancel")

    try:
        info = asyncio.run(scenario())
        assert info is None or info.state == "CANCELLED"
    finally:
        cancel_user_jobs("bob")


def test_lone_unknown_job_reads_as_gone(cluster):
    assert asyncio.run(SlurmClient().jobs(["999999"])) == {}


def test_slurm_rejection_carries_slurms_message(cluster):
    script = "#!/bin/bash\n#SBATCH --gres=gpu:8\ntrue\n"
    with pytest.raises(SlurmError) as error:
        asyncio.run(SlurmClient().submit(script, user="bob", env=job_env("bob")))
    assert "Requested node configuration is not available" in error.value.message


def test_a_user_cannot_cancel_anothers_job(cluster):
    client = SlurmClient()
    script = "#!/bin/bash\n#SBATCH --mem=1G\n#SBATCH -t 00:05:00\n#SBATCH -o /dev/null\nsleep 300\n"
    job_id = asyncio.run(client.submit(script, user="alice", env=job_env("alice")))
    try:
        with pytest.raises(SlurmError):
            asyncio.run(client.cancel(job_id, user="bob"))
        assert job_id in asyncio.run(client.jobs([job_id]))
    finally:
        cancel_user_jobs("alice")


def test_tests_run_as_root():
    # Submitting as another user (sudo -u) needs root, as the hub has.
    assert os.geteuid() == 0


def test_partitions_come_from_the_real_sinfo(cluster):
    partitions = asyncio.run(SlurmClient().partitions())
    gpu = partitions["gpu"]
    assert gpu.max_time == 24 * 3600
    assert gpu.max_gpus_per_node == 4
    assert gpu.fits_one_node(gpus=4, cores=32, mem_mb=4 * 48 * 1024)
    assert gpu.fits_one_node(gpus=4, cores=64, mem_mb=1)  # gpu02, the bigger node
    assert not gpu.fits_one_node(gpus=4, cores=65, mem_mb=1)
    # The kinds, as gres.conf types them: A100s and H100s here, MIG slices in partition mig.
    assert gpu.gpu_kinds == ["a100", "h100"]
    assert gpu.per_gpu("h100") == (16, 122) and gpu.per_gpu("a100") == (8, 48)
    assert partitions["mig"].gpu_kinds == ["1g.10gb", "3g.40gb"]
    assert partitions["mig"].max_gpus_of("3g.40gb") == 2
