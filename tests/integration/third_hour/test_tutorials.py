"""Issue 54, item 2: the tutorials run as written. Every code block of docs/tutorials/ runs here
where it says (tests/tutorials.py): a login shell on the login host as the reader, the terminal
of the reader's session, a notebook cell. A tutorial that breaks fails `make test`.

The reader is erin (the second lane's data scientist); the hub's address reaches the shell as a
site's GPUPORTAL_URL would. The hub's certificate is trusted through this machine's own store,
as a site's CA is (deploy/local/https.sh): not through the tests' CA bundle.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.hubproc import DEMO_CA, Hub, wait_for
from tests.integration.third_hour.conftest import USER
from tests.kernels import run_cell
from tests.terminal import Terminal
from tests.tutorials import Block, tutorial_blocks

pytestmark = pytest.mark.integration

HOME = Path(f"/home/{USER}")


def login_shell(hub: Hub, block: Block, *, answer: str = "", timeout: float = 120) -> str:
    """The block in a login shell of the reader's (runuser -l: their own environment, none of
    the tests'), stopping at the first command that fails; what it printed."""
    done = subprocess.run(
        ["runuser", "-l", USER, "-w", "GPUPORTAL_URL", "-c", "set -e\n" + block.code],
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "GPUPORTAL_URL": hub.url},
        input=answer,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, f"{block.tutorial}:{block.line} failed:\n{said}"
    return said


def start_session(hub: Hub, environment: str = "session") -> tuple[object, str]:
    user = hub.login(USER)
    options = {"user_options": {"profile": "gpu-1", "environment": environment}}
    assert hub.api(user, "POST", f"/users/{USER}/server", json=options).status_code in (201, 202)
    hub.wait_ready(user, USER)
    token = hub.api(user, "POST", f"/users/{USER}/tokens", json={"note": "tutorial"}).json()
    return user, token["token"]


def signed_in(hub: Hub, token: str) -> None:
    """`gpuportal login` of the multi-node tutorial, the token pasted at its prompt."""
    shutil.rmtree(HOME / ".config" / "gpuportal", ignore_errors=True)
    login = tutorial_blocks("first-multinode-job.md", "login-shell")[0]
    said = login_shell(hub, login, answer=token + "\n")
    assert f"as {USER};" in said


def test_first_session(hub: Hub, clean: None) -> None:
    user, token = start_session(hub, "torch")  # the tutorial has the reader choose PyTorch
    (HOME / "first-job.out").unlink(missing_ok=True)
    terminal = Terminal(hub.url, USER, token)
    try:
        # The second lane's users submit to their own partition: the cluster's default one
        # is the first lane's (a site's profile may set the same variable).
        terminal.run("export SBATCH_PARTITION=lane")
        (block,) = tutorial_blocks("first-session.md", "session-terminal")
        said = []
        for line in block.code.splitlines():
            code, output = terminal.run(line, timeout=240)
            assert code == 0, f"{line!r} failed:\n{output}"
            said.append(output)
    finally:
        terminal.close()
    node, srun_node, torch_version, _, job_output = said
    assert node.startswith("lane-"), said
    assert srun_node == node
    assert re.fullmatch(r"PyTorch 2\.\S+", torch_version), said
    assert job_output.splitlines()[0].startswith("lane-"), said
    hub.stop_server(user, USER)  # type: ignore[arg-type]

    signed_in(hub, token)
    (cli,) = tutorial_blocks("first-session.md", "login-shell")
    said_cli = login_shell(hub, cli, timeout=240)
    assert "Ready: " in said_cli and "Stopped." in said_cli, said_cli
    assert hub.server(user, USER) is None  # type: ignore[arg-type]


def test_first_multinode_job(hub: Hub, clean: None) -> None:
    # The tutorial follows the first session's: the reader's ~/templates is there.
    user, token = start_session(hub)
    hub.stop_server(user, USER)  # type: ignore[arg-type]
    assert (HOME / "templates" / "train_ddp.py").is_file()
    signed_in(hub, token)
    _, submit, curl = tutorial_blocks("first-multinode-job.md", "login-shell")

    # torchrun from the first of the site's environments that has it, on two nodes.
    said = login_shell(hub, submit, timeout=400)
    assert "epoch  3" in said and "(world size 2)" in said, said
    assert "completed, exit code 0" in said, said
    # Issue 54, item 17: the peers' names are found (no 10 s DNS wait and c10d warning each).
    assert "hostname of the client socket cannot be retrieved" not in said, said

    answer = json.loads(login_shell(hub, curl))
    assert answer["launcher"] == "torchrun" and answer["slurm_job_id"], answer

    def ended() -> dict[str, object] | None:
        job = user.get(  # type: ignore[attr-defined]
            f"{hub.url}/services/portal/api/jobs/{answer['id']}",
            headers={"Authorization": f"token {token}"},
            timeout=30,
        ).json()
        return job if job["final"] else None

    job = wait_for(ended, 400, "the curl job to end", step=3)
    assert (job["state"], job["exit_code"]) == ("COMPLETED", 0), job


def test_sharing_tensorboard(hub: Hub, clean: None) -> None:
    user, token = start_session(hub)
    (HOME / "runs").mkdir(exist_ok=True)
    (block,) = tutorial_blocks("sharing-tensorboard.md", "notebook")
    run_cell(hub.url, USER, token, block.code, ca=DEMO_CA)  # raises on the cell's error
    hub.stop_server(user, USER)  # type: ignore[arg-type]
