"""Sessions and jobs in a container image run by podman (the `container` kind's podman engine):
an admin registers the demo's session image (deploy/local/podman.sh session-image) on the
portal, which looks into the archive first; alice's JupyterLab then runs inside it, rootless as
alice in her Slurm job, with the job's GPUs, her home and the hub's internal TLS; Stop, a cancel
and the time limit leave nothing of her container behind; a 2-node torchrun job runs in the same
image, and a cancelled job's tasks leave none either."""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.hubproc import DEMO_CA
from tests.integration.conftest import Hub, user_jobs, wait_for
from tests.integration.jobs import install_job_files
from tests.integration.test_docs_screenshots import folder
from tests.integration.test_environment_pages import PORTAL, errors, form_token
from tests.integration.test_live_profiles import log_in
from tests.integration.test_multinode_jobs import JOBS, run_to_the_end, whole_output
from tests.kernels import run_cell
from tests.own_processes import ps_of

pytestmark = pytest.mark.integration

ARCHIVE = Path("/srv/gpuportal-images/gpuportal-session.tar")
ENVIRONMENTS = "/services/portal/api/environments"
SLUG = "podman-session"
if shutil.which("podman") is None or not ARCHIVE.exists():
    pytest.skip(
        "no podman or no session image (deploy/local/install.sh makes both on Debian 12)",
        allow_module_level=True,
    )


def alice_podman(*args: str) -> str:
    """alice's own podman, as her jobs run it (gpuportal_session.container's runtime folder, no
    session bus). It joins her podman's pause process, or starts one: call it only while a
    container of hers runs, and look at leftovers() without it."""
    uid = pwd.getpwnam("alice").pw_uid
    env = {"PATH": "/usr/bin:/bin", "HOME": "/home/alice", "USER": "alice"}
    env |= {
        "XDG_RUNTIME_DIR": f"/tmp/gpuportal-podman-{uid}",
        "DBUS_SESSION_BUS_ADDRESS": "disabled:",
    }
    result = subprocess.run(
        [
            "runuser",
            "-u",
            "alice",
            "--",
            "env",
            *[f"{k}={v}" for k, v in env.items()],
            "podman",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/tmp",
    )
    return result.stdout


def alice_containers() -> list[str]:
    """The containers in alice's podman storage (/etc/containers/storage.conf puts it on the
    node's disk), read from its file: asking her podman would start its pause process."""
    state = Path("/var/tmp/containers-alice/storage/overlay-containers/containers.json")
    if not state.exists():
        return []
    return [str(c.get("names", [c.get("id")])[0]) for c in json.loads(state.read_text() or "[]")]


def leftovers() -> list[str]:
    """alice's containers and every process of hers: the containers' (conmon, their init,
    JupyterLab) and rootless podman's own (its pause process, `catatonit -P`, which the runner
    ends with her last container; a session bus, which it is told not to start): a job's end
    leaves no process of hers (test_session_apps checks that too)."""
    return [f"container {name}" for name in alice_containers()] + [
        f"process {line.strip()}" for line in ps_of("alice")
    ]


@pytest.fixture
def registered(hub: Hub, clean: None) -> Iterator[str]:
    """The session image registered by carol (an admin) through the portal's API; disabled
    afterwards (environments are never deleted), so that later spawn pages do not offer it."""
    carol = hub.login("carol")
    token = hub.api(carol, "POST", "/users/carol/tokens", json={"note": "podman"}).json()["token"]
    headers = {"Authorization": f"token {token}"}
    body = {
        "slug": SLUG,
        "title": "Session image (podman test)",
        "kind": "container",
        "engine": "podman",
        "image": str(ARCHIVE),
    }
    created = requests.post(f"{hub.url}{ENVIRONMENTS}", headers=headers, json=body, timeout=60)
    url = f"{hub.url}{ENVIRONMENTS}/{SLUG}"
    if created.status_code == 409:  # made by an earlier test on this hub, then disabled
        version = requests.get(
            f"{hub.url}{ENVIRONMENTS}?all=true", headers=headers, timeout=30
        ).json()
        current = next(e["version"] for e in version if e["slug"] == SLUG)
        enabled = requests.patch(
            url, headers=headers, json={"version": current, "enabled": True}, timeout=60
        )
        assert enabled.status_code == 200, enabled.text
    else:
        assert created.status_code == 201, created.text
    yield token
    listed = requests.get(f"{hub.url}{ENVIRONMENTS}?all=true", headers=headers, timeout=30).json()
    current = next(e["version"] for e in listed if e["slug"] == SLUG)
    requests.patch(url, headers=headers, json={"version": current, "enabled": False}, timeout=60)


def spawn(hub: Hub, session: requests.Session, runtime: str = "") -> None:
    options: dict[str, Any] = {"profile": "gpu-1", "environment": SLUG}
    if runtime:
        options["runtime"] = runtime
    response = hub.api(session, "POST", "/users/alice/server", json={"user_options": options})
    assert response.status_code in (201, 202), response.text
    # The first start loads the archive into alice's storage (about 20 s here), once.
    hub.wait_ready(session, "alice", timeout=240)


@pytest.fixture
def not_an_archive() -> Iterator[Path]:
    path = ARCHIVE.parent / "test-not-an-archive.tar"
    path.write_bytes(b"\0" * 1024)
    path.chmod(0o644)
    yield path
    path.unlink()


def test_an_archive_without_jupyterlab_is_refused_saying_why(
    hub: Hub, registered: str, not_an_archive: Path
) -> None:
    headers = {"Authorization": f"token {registered}"}
    body = {"slug": "broken", "title": "Broken", "kind": "container", "engine": "podman"}
    answer = requests.post(
        f"{hub.url}{ENVIRONMENTS}",
        headers=headers,
        json={**body, "image": str(not_an_archive)},
        timeout=60,
    )
    assert answer.status_code == 422, answer.text
    assert "is not an OCI archive" in answer.text and "podman save" in answer.text
    missing = requests.post(
        f"{hub.url}{ENVIRONMENTS}",
        headers=headers,
        json={**body, "image": "/srv/gpuportal-images/none.tar"},
        timeout=60,
    )
    assert missing.status_code == 422 and "does not exist" in missing.text, missing.text


def test_jupyterlab_runs_in_the_image_with_the_jobs_gpus_and_her_home(
    hub: Hub, registered: str
) -> None:
    alice = hub.login("alice")
    spawn(hub, alice)
    job_id, node = user_jobs("alice", "%i|%N")[0].split("|")
    token = hub.api(alice, "POST", "/users/alice/tokens", json={"note": "podman"}).json()["token"]
    marker = Path("/home/alice/podman-test-marker")
    marker.unlink(missing_ok=True)
    printed = run_cell(
        hub.url,
        "alice",
        token,
        "import json, os, sys, glob\n"
        "open(os.path.expanduser('~/podman-test-marker'), 'w').write('from the image')\n"
        "print(json.dumps({'containerenv': os.path.exists('/run/.containerenv'),\n"
        "  'python': sys.executable, 'uid': os.getuid(), 'home': os.environ['HOME'],\n"
        "  'job': os.environ.get('SLURM_JOB_ID'), 'node': os.environ.get('SLURMD_NODENAME'),\n"
        "  'cuda': os.environ.get('CUDA_VISIBLE_DEVICES'),\n"
        "  'devices': sorted(glob.glob('/var/lib/portal-local/fakedev/nvidia*')),\n"
        "  'slurm_conf': os.path.exists('/etc/slurm/slurm.conf')}))",
        ca=DEMO_CA,
    )
    inside = json.loads(printed)
    # In the image (its own Python, not the node's venv), as alice, in her job.
    assert inside["containerenv"] is True
    assert inside["python"].startswith("/opt/gpuportal-session/venv/")
    assert inside["uid"] == pwd.getpwnam("alice").pw_uid
    assert inside["home"] == "/home/alice"
    assert (inside["job"], inside["node"]) == (job_id, node)
    # The job's one GPU as Slurm set it: its variable, and its device file alone.
    assert inside["cuda"] is not None and len(inside["cuda"].split(",")) == 1
    assert len(inside["devices"]) == 1, inside["devices"]
    # Of the node's own files, Slurm's client set-up alone is in (for srun and sbatch in the
    # image: test_container_slurm); the home is hers, written as her.
    assert inside["slurm_conf"] is True
    assert marker.read_text() == "from the image"
    assert marker.stat().st_uid == pwd.getpwnam("alice").pw_uid
    marker.unlink()
    assert alice_podman("ps", "--format", "{{.Names}}").split() == [f"gpuportal-job-{job_id}"]

    hub.stop_server(alice, "alice")
    wait_for(lambda: not leftovers(), 30, "alice's container to go after Stop")


def test_a_cancel_and_the_time_limit_leave_no_container(hub: Hub, registered: str) -> None:
    alice = hub.login("alice")
    spawn(hub, alice)
    job_id = user_jobs("alice", "%i")[0]
    subprocess.run(["scancel", job_id], check=True, timeout=20)
    wait_for(
        lambda: not user_jobs("alice") and not leftovers(),
        60,
        "the cancelled job's container to go",
    )
    hub.stop_server(alice, "alice")

    spawn(hub, alice, runtime="00:01:00")
    started = time.monotonic()
    wait_for(lambda: not user_jobs("alice"), 150, "the time limit to end the job")
    wait_for(lambda: not leftovers(), 30, "the container to go at the time limit")
    print(f"ended by its time limit after {time.monotonic() - started:.0f} s")
    assert os.path.exists(ARCHIVE)


def _torch_label() -> bool:
    found = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Labels}}", "localhost/gpuportal-session:1"],
        capture_output=True,
        text=True,
    )
    return "torch" in found.stdout


def test_a_two_node_torchrun_job_runs_in_the_same_image(hub: Hub, registered: str) -> None:
    if not _torch_label():
        pytest.skip("the session image was built without PyTorch (no CPU wheel in /opt/wheels)")
    install_job_files("alice")
    alice = hub.login("alice")
    token = hub.api(alice, "POST", "/users/alice/tokens", json={"note": "podman"}).json()["token"]
    container = {"kind": "podman", "image": str(ARCHIVE)}
    _, detail = run_to_the_end(
        hub,
        token,
        {
            "name": "allreduce-podman",
            "launcher": "torchrun",
            "nodes": 2,
            "gpus_per_node": 2,
            "runtime": "00:10:00",
            "script": "/home/alice/jobs/allreduce.py",
            "container": container,
        },
        deadline_s=300,
    )
    output = whole_output(detail)
    assert (detail["state"], detail["exit_code"]) == ("COMPLETED", 0), output
    assert "hostname of the client socket cannot be retrieved" not in output, output
    results = re.findall(
        r"rank (\d) of 4 on (gpu0[12]) \((\w+)\): all_reduce sum = 10 in (\S+)", output
    )
    assert sorted(rank for rank, *_ in results) == ["0", "1", "2", "3"], output
    assert {node for _, node, _, _ in results} == {"gpu01", "gpu02"}
    # Every rank ran on the image's Python, the two nodes' containers meeting over the network.
    assert {prefix for *_, prefix in results} == {"/opt/gpuportal-session/venv"}
    # COMPLETED comes from the job's record as the batch step ends; its steps' processes
    # (srun, conmon, the pause process) may still be reaped for a moment after.
    wait_for(lambda: not leftovers(), 30, "the tasks' containers and processes to go")

    # A cancel of a running job in the image: its tasks' containers go with it.
    headers = {"Authorization": f"token {token}"}
    body = {
        "name": "sleeper-podman",
        "launcher": "srun",
        "nodes": 2,
        "gpus_per_node": 1,
        "runtime": "00:05:00",
        "command": "sleep 300",
        "container": container,
    }
    job = requests.post(f"{hub.url}{JOBS}", headers=headers, json=body, timeout=60).json()
    wait_for(lambda: len(alice_podman("ps", "--format", "{{.Names}}").split()) == 2, 120, "2 tasks")
    cancelled = requests.delete(f"{hub.url}{JOBS}/{job['id']}", headers=headers, timeout=60)
    assert cancelled.status_code in (200, 202, 204), cancelled.text
    wait_for(lambda: not user_jobs("alice") and not leftovers(), 60, "the tasks' containers to go")


# The docs' screenshots of a session in the image (test_docs_screenshots names them too).
CONTAINER_SHOTS = ("container-spawn-light.png", "container-lab-light.png")
NOTEBOOK_CELL = (
    "import os, sys, torch\n"
    "print('Python:', sys.prefix)\n"
    "print('in a container:', os.path.exists('/run/.containerenv'))\n"
    "print('job', os.environ['SLURM_JOB_ID'], 'on', os.environ['SLURMD_NODENAME'],"
    " 'with GPU', os.environ['CUDA_VISIBLE_DEVICES'])\n"
    "print('PyTorch', torch.__version__)"
)


def test_the_spawn_form_and_jupyterlab_in_the_image_as_alice_sees_them(
    hub: Hub, clean: None, browser: Any, tmp_path: Path
) -> None:
    """In Chromium: the spawn form with the image chosen, then JupyterLab in it, a notebook
    cell saying where it runs. The pictures go to the docs (GPUPORTAL_SCREENSHOTS)."""
    if not _torch_label():
        pytest.skip("the session image was built without PyTorch")
    out = folder(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    notebook = Path("/home/alice/in-the-image.ipynb")
    notebook.write_text(
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "execution_count": None,
                        "metadata": {},
                        "outputs": [],
                        "source": NOTEBOOK_CELL,
                    }
                ],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    subprocess.run(["chown", "alice:", str(notebook)], check=True)
    page = log_in(browser, hub, "alice", "alice-demo", viewport={"width": 1280, "height": 844})
    page.set_default_timeout(240_000)
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    # The demo's own, seeded since the archive existed at the hub's start.
    page.check("input[name=environment][value=session-image]")
    chosen = page.locator("[data-environment=session-image]")
    assert "(podman)" in chosen.inner_text()
    chosen.scroll_into_view_if_needed()
    page.screenshot(path=str(out / CONTAINER_SHOTS[0]))
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/alice/lab**")
    page.goto(f"{hub.url}/user/alice/lab/tree/{notebook.name}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_selector("#jp-main-statusbar :text('Idle')")
    page.click("text=Run")
    page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
    output = page.wait_for_selector(".jp-OutputArea-output:has-text('PyTorch')")
    said = output.inner_text()
    assert "Python: /opt/gpuportal-session/venv" in said and "in a container: True" in said, said
    page.screenshot(path=str(out / CONTAINER_SHOTS[1]))
    page.context.close()
    notebook.unlink(missing_ok=True)
    hub.stop_server(hub.login("alice"), "alice")
    wait_for(lambda: not leftovers(), 30, "alice's container to go")


def test_carol_registers_the_image_on_the_environments_page(
    hub: Hub, clean: None, not_an_archive: Path
) -> None:
    """The admin page's form, as an admin registers an image: podman is the engine offered
    first; a file that is no OCI archive is refused at the Image field, the archive is saved."""
    carol = hub.login("carol")
    new = carol.get(f"{hub.url}{PORTAL}/admin/environments/new")
    assert '<option value="podman" selected>' in new.text
    fields = {
        "csrf": form_token(new.text),
        "slug": "podman-page",
        "title": "Session image (from the page)",
        "kind": "container",
        "engine": "podman",
        "image": str(not_an_archive),
        # "enabled" unticked: saved disabled, so the other tests' spawn pages stay as they were
    }
    refused = carol.post(f"{hub.url}{PORTAL}/admin/environments/new", data=fields)
    assert refused.status_code == 422
    assert "is not an OCI archive" in errors(refused.text)["image"]
    fields["image"] = str(ARCHIVE)
    created = carol.post(f"{hub.url}{PORTAL}/admin/environments/new", data=fields)
    assert created.status_code == 200, errors(created.text)
    assert f"{ARCHIVE} (podman)" in created.text
