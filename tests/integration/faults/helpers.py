"""Shared steps of the fault tests: fill the GPUs, read a job's state, a user's home page."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.hubproc import Hub, sudo_rule_for, wait_for


def blocker_script(minutes: int = 10) -> str:
    return (
        f"#!/bin/bash\n#SBATCH -o /dev/null\n#SBATCH --mem=1G\n#SBATCH -t {minutes}\n"
        f"sleep {minutes * 60}\n"
    )


def fill_gpus(
    *nodes: str, gpus: int = 4, user: str = "carol", partition: str = "gpu", minutes: int = 10
) -> list[str]:
    """Take every GPU of the nodes as an admin (the second lane's: grace, on its partition), so
    that the next request has to wait (for `minutes` at most)."""
    return [
        subprocess.run(
            [
                *("sudo", "-u", user, "sbatch", "--parsable", f"--gres=gpu:{gpus}"),
                *(f"-w{node}", f"--partition={partition}"),
            ],
            input=blocker_script(minutes),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for node in nodes
    ]


def state_of(job_id: str) -> str:
    return subprocess.run(
        ["squeue", "-h", "--states=all", f"--jobs={job_id}", "-o", "%T"],
        capture_output=True,
        text=True,
    ).stdout.strip()


def scontrol(*args: str) -> None:
    subprocess.run(["scontrol", *args], check=True, capture_output=True, timeout=20)


def skip_requeue_hold(job_id: str) -> None:
    """Let a requeued job start again now. Slurm holds a requeued job about two minutes first
    (reason BeginTime); an admin may lift that (`scontrol update StartTime=now`), and the tests
    do: what they check is the session kept meanwhile and its return, not Slurm's delay."""
    wait_for(lambda: state_of(job_id) == "PENDING", 60, f"job {job_id} to wait again")
    scontrol("update", f"JobId={job_id}", "StartTime=now")


def home_page(hub: Hub, session: requests.Session) -> str:
    response = session.get(f"{hub.url}/hub/home", timeout=30)
    assert response.status_code == 200, response.status_code
    return response.text


def spawn(hub: Hub, session: requests.Session, user: str, **options: str) -> requests.Response:
    body = {"user_options": {"profile": "gpu-1", **options}}
    return hub.api(session, "POST", f"/users/{user}/server", json=body)


def running_session(hub: Hub, user: str, **options: str) -> tuple[requests.Session, str, str]:
    """The user logged in with a ready 1-GPU server: (session, job id, node)."""
    session = hub.login(user)
    assert spawn(hub, session, user, **options).status_code in (201, 202)
    hub.wait_ready(session, user)
    out = subprocess.run(
        ["squeue", "-h", f"--user={user}", "-o", "%i|%N"], capture_output=True, text=True
    ).stdout.split()
    assert len(out) == 1, out
    job_id, node = out[0].split("|")
    return session, job_id, node


def failed_spawn_message(
    hub: Hub, session: requests.Session, user: str, response: requests.Response
) -> str:
    """What a failed spawn told the user, whether it failed before the hub answered the POST
    or after (a 202, then the failure in the progress stream the spawn page reads). A 201 can
    stand for a 202 after an earlier failed spawn (JupyterHub 6.1's get_spawner replace_failed
    answers from a spawner it never stores)."""
    if response.status_code >= 400:
        return str(response.json()["message"])
    wait_for(lambda: hub.server(session, user) is None, 60, f"{user}'s failed server to go")
    url = f"{hub.url}/hub/api/users/{user}/server/progress"
    stream = session.get(url, timeout=30, stream=True)
    return stream.raw.read(65536, decode_content=True).decode(errors="replace")


LATE_SLEEP = "late-sleep"


@contextmanager
def late_sbatch(deaf: bool = False) -> Iterator[Path]:
    """A Slurm bin directory whose sbatch submits, then answers only a minute later: for the
    caller, a submission that timed out although the job is in the queue. `deaf`: it ignores
    SIGTERM too, so that ending it takes the spawner's grace second and a SIGKILL."""
    # Outside pytest's 0700 temporary tree: sbatch runs as the user.
    bin_dir = Path(tempfile.mkdtemp(prefix="late-sbatch-"))
    bin_dir.chmod(0o755)
    # An ignored signal stays ignored across exec: the sleep is deaf too.
    trap = "trap '' TERM\n" if deaf else ""
    # The sleep by a name of this folder's, so that a test finds its own and not the other
    # lane's (LATE_SLEEP).
    (bin_dir / LATE_SLEEP).symlink_to(shutil.which("sleep") or "/bin/sleep")
    (bin_dir / "sbatch").write_text(
        f'#!/bin/sh\n{trap}/usr/bin/sbatch "$@"\nexec {bin_dir / LATE_SLEEP} 60\n'
    )
    (bin_dir / "sbatch").chmod(0o755)
    for command in ("squeue", "scancel", "scontrol", "sinfo", "srun"):
        (bin_dir / command).symlink_to(f"/usr/bin/{command}")
    try:
        # The hub runs this sbatch as users too. A rule of its own (the folder's name): the two
        # lanes may each hold one, and one lane's end must not take the other's away.
        with sudo_rule_for(bin_dir, bin_dir.name):
            yield bin_dir
    finally:
        shutil.rmtree(bin_dir)


@contextmanager
def late_sbatch_hub(
    state: Path, env: dict[str, str], *, slurm_timeout: int, deaf: bool = False
) -> Iterator[Hub]:
    """A hub of its own on port 8400 (its settings `env`) whose Slurm commands go through
    late_sbatch(deaf); frank's jobs are gone after it."""
    with late_sbatch(deaf) as bin_dir:
        env = {
            **env,
            "PORTAL_SLURM_BIN_DIR": str(bin_dir),
            "PORTAL_SLURM_TIMEOUT": str(slurm_timeout),
        }
        instance = Hub(state, 8400, env=env)
        instance.start()
        try:
            yield instance
        finally:
            instance.stop()
            subprocess.run(["scancel", "--user=frank"], check=False, timeout=20)
            wait_for(lambda: not _jobs_of("frank"), 30, "frank's jobs to end")


def _jobs_of(user: str) -> str:
    return subprocess.run(
        ["squeue", "-h", f"--user={user}"], capture_output=True, text=True
    ).stdout.strip()
