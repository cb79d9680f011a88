"""Issue 54, items 1 and 4: Slurm from the session's terminal works as on a login node.
`srun hostname` is what HPC users type first; it printed `execve(): hostname: No such file or
directory`, since srun inherited the session job's SLURM_EXPORT_ENV (the hub's few variables,
no PATH). A job of the user's own sbatch is on their Jobs list."""

from __future__ import annotations

import pytest

from tests.integration.conftest import Hub, wait_for
from tests.integration.third_hour.conftest import USER
from tests.terminal import Terminal

pytestmark = pytest.mark.integration


def slurm_said_aside(output: str) -> str:
    """The command's own output, without srun's notes: a step right after another may wait a
    moment for its resources ("step creation temporarily disabled, retrying"; the clean-clone
    run met it), as at any Slurm prompt."""
    return "\n".join(line for line in output.splitlines() if not line.startswith("srun: "))


def test_srun_and_sbatch_from_the_sessions_terminal(hub: Hub, clean: None) -> None:
    user = hub.login(USER)
    options = {"user_options": {"profile": "gpu-1"}}
    assert hub.api(user, "POST", f"/users/{USER}/server", json=options).status_code in (201, 202)
    hub.wait_ready(user, USER)
    token = hub.api(user, "POST", f"/users/{USER}/tokens", json={"note": "terminal"}).json()
    terminal = Terminal(hub.url, USER, token["token"])
    try:
        code, where = terminal.run("hostname")
        assert code == 0, where
        # A step of the session's own job, on its node, with the session's PATH.
        code, output = terminal.run("srun hostname")
        assert (code, slurm_said_aside(output)) == (0, where), output
        code, output = terminal.run("srun --ntasks=1 python -c 'import sys; print(sys.prefix)'")
        assert (code, slurm_said_aside(output)) == (0, "/opt/gpuportal/venv"), output
        # A job of its own, waited for: it starts with the terminal's environment too. In the
        # second lane's partition: the cluster's default one is the first lane's.
        code, output = terminal.run(
            "SBATCH_PARTITION=lane sbatch --wait --parsable --time=2 --gres=gpu:1 "
            "-o ~/from-terminal.out --wrap 'command -v python; hostname' "
            "&& cat ~/from-terminal.out",
            timeout=180,
        )
        assert code == 0, output
        assert "/opt/gpuportal/venv/bin/python" in output.splitlines()
        job_id = output.splitlines()[0]
    finally:
        terminal.close()

    # Item 4: the Jobs page and `gpuportal jobs list` list it, as they do Dask's workers.
    def listed() -> dict[str, object] | None:
        jobs = user.get(
            f"{hub.url}/services/portal/api/jobs",
            params={"mine": "true"},
            headers={"Authorization": f"token {token['token']}"},
            timeout=30,
        ).json()
        return next((j for j in jobs if j["slurm_job_id"] == job_id), None)

    job = wait_for(listed, 60, f"job {job_id} in the portal's list")
    assert (job["launcher"], job["name"], job["user"]) == ("sbatch", "wrap", USER), job
    hub.stop_server(user, USER)
