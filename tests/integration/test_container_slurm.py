"""Issue 54, item 5: Slurm from the terminal of a session in a container image. The image had no
srun or sbatch, so neither a user nor Dask could reach Slurm there. Now the image carries Slurm's
commands of the cluster's release, the job mounts the node's slurm.conf and munged's socket,
and a task of srun or a Dask worker's job (which run on a node, outside the image) runs in the
same image again through the prefix in GPUPORTAL_IN_IMAGE."""

from __future__ import annotations

import pytest

from bench.kernel_trip import Kernel
from tests.integration.conftest import Hub, user_jobs, wait_for
from tests.integration.test_container_session import (  # noqa: F401 (fixtures)
    leftovers,
    registered,
    spawn,
)
from tests.terminal import Terminal

pytestmark = pytest.mark.integration


def test_srun_and_sbatch_from_a_terminal_in_the_image(hub: Hub, registered: str) -> None:  # noqa: F811
    alice = hub.login("alice")
    spawn(hub, alice)
    job_id, node = user_jobs("alice", "%i|%N")[0].split("|")
    # alice's own token: the image's registrar (carol, an admin) may not enter her session.
    token = hub.api(alice, "POST", "/users/alice/tokens", json={"note": "terminal"}).json()
    terminal = Terminal(hub.url, "alice", token["token"])
    try:
        code, output = terminal.run("test -e /run/.containerenv && command -v srun sbatch")
        assert (code, output.split()) == (0, ["/usr/bin/srun", "/usr/bin/sbatch"]), output
        code, output = terminal.run("squeue --me --noheader --format=%i")
        assert (code, output) == (0, job_id), output
        # A step of the session's job, on its node (outside the image, as srun's tasks are).
        code, output = terminal.run("srun --ntasks=1 hostname")
        assert (code, output) == (0, node), output
        # The same, in the image again: its Python, not the node's.
        code, output = terminal.run(
            "srun --ntasks=1 $GPUPORTAL_IN_IMAGE python -c 'import sys; print(sys.prefix)'",
            timeout=180,
        )
        assert code == 0, output
        assert output.splitlines()[-1] == "/opt/gpuportal-session/venv", output
        # A job of its own, waited for, in the second partition's queue as any user's.
        code, output = terminal.run(
            "sbatch --wait --parsable --time=2 --gres=gpu:1 -o ~/from-image.out "
            "--wrap hostname && cat ~/from-image.out",
            timeout=180,
        )
        assert code == 0, output
        assert output.splitlines()[-1].startswith("gpu"), output
    finally:
        terminal.close()

    # Dask's workers: Slurm jobs, on a node outside the image, each running the image again.
    kernel = Kernel(hub.url, "alice", token["token"])
    prefixes = kernel.result(
        "from dask_jobqueue import SLURMCluster; from dask.distributed import Client\n"
        "cluster = SLURMCluster(); cluster.scale(jobs=1); client = Client(cluster)\n"
        "client.wait_for_workers(1); import sys\n"
        "sorted(set(client.run(lambda: sys.prefix).values()))",
        timeout=300,
    )
    assert prefixes == "['/opt/gpuportal-session/venv']", prefixes
    kernel.result("cluster.close(); 'closed'", timeout=120)
    kernel.close()
    wait_for(lambda: len(user_jobs("alice")) == 1, 60, "the Dask worker's job to end")
    hub.stop_server(alice, "alice")
    wait_for(lambda: not leftovers(), 30, "alice's containers to go after Stop")
