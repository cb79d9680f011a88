"""JupyterLab's Notebook Jobs (Jupyter Scheduler) on Slurm, on the local cluster: the session's
scheduler API, as the lab's dialog calls it, submits a notebook job through the hub to the
portal; the job runs as a Slurm job of the user and survives its session; a new session's list
shows it from the portal's records with its outputs; a profile the user is not offered is
refused with words."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest
import requests

from tests.hubproc import wait_for
from tests.integration.conftest import Hub, cancel_user_jobs
from tests.integration.jobs import install_job_files
from tests.integration.test_environment_spawn import spawn
from tests.integration.test_notebook_jobs import _runs

pytestmark = pytest.mark.integration


def lab(hub: Hub, token: str, method: str, path: str, **kwargs: Any) -> requests.Response:
    """alice's JupyterLab server's API (Jupyter Scheduler's routes), with her token."""
    return requests.request(
        method,
        f"{hub.url}/user/alice/scheduler/{path}",
        headers={"Authorization": f"token {token}"},
        timeout=120,
        **kwargs,
    )


def create(hub: Hub, token: str, **job: Any) -> requests.Response:
    """POST a job for jobs/train_params.ipynb in the session default, as the lab's form does."""
    body = {
        "input_uri": "jobs/train_params.ipynb",
        "runtime_environment_name": "Session default",
        "output_formats": ["ipynb", "html"],
        **job,
    }
    return lab(hub, token, "POST", "jobs", json=body)


def test_a_notebook_job_from_the_labs_scheduler_outlives_its_session(hub: Hub, clean: None) -> None:
    install_job_files("alice")
    cancel_user_jobs("alice")
    runs = _runs("train_params")
    alice = hub.login("alice")
    token = hub.api(alice, "POST", "/users/alice/tokens", json={"note": "scheduler"}).json()[
        "token"
    ]
    spawn(hub, alice, "session")

    environments = lab(hub, token, "GET", "runtime_environments")
    assert environments.status_code == 200, environments.text
    offered = {env["name"]: env for env in environments.json()}
    # The demo's "Session default" is the session venv: offered once, by its title.
    assert list(offered).count("Session default") == 1 and "PyTorch" in offered
    gpu_1 = offered["Session default"]["compute_types"][0]
    assert gpu_1.startswith("gpu-1 · 1 GPU · 8 CPU cores · 48 GB memory")

    refused = create(hub, token, name="too-big", compute_type="gpu-8 · eight GPUs")
    assert refused.status_code == 500
    assert "gpu-8 is not one you may use (yours: gpu-1, gpu-2, gpu-4)" in refused.json()["message"]

    created = create(
        hub,
        token,
        name="from-lab",
        compute_type=gpu_1,
        parameters={"lr": "0.25", "epochs": "2", "run_name": "from-the-lab"},
    )
    assert created.status_code == 200, created.text
    job_id = created.json()["job_id"]
    assert job_id.startswith("portal-")

    # The session ends; the job does not.
    hub.stop_server(alice, "alice")
    portal = f"{hub.url}/services/portal/api/jobs/{job_id.removeprefix('portal-')}"

    def ended() -> dict[str, Any] | None:
        record: dict[str, Any] = requests.get(
            portal, headers={"Authorization": f"token {token}"}, timeout=60
        ).json()
        return record if record["final"] else None

    record = wait_for(ended, 180, "the notebook job to end")
    assert isinstance(record, dict)
    assert (record["launcher"], record["state"]) == ("notebook", "COMPLETED"), record
    assert record["request"]["args"] == ["lr=0.25", "epochs=2", "run_name=from-the-lab"]

    # A new session's list: the portal's record, with the run's files beside the notebook.
    spawn(hub, alice, "session")
    listed = lab(hub, token, "GET", "jobs").json()["jobs"]
    (job,) = [j for j in listed if j["job_id"] == job_id]
    assert (job["status"], job["name"], job["input_filename"]) == (
        "COMPLETED",
        "from-lab",
        "train_params.ipynb",
    )
    assert job["parameters"] == {"lr": "0.25", "epochs": "2", "run_name": "from-the-lab"}
    files = {f["file_format"]: f["file_path"] for f in job["job_files"]}
    (folder,) = runs.iterdir()
    assert files["ipynb"] == f"jobs/train_params-runs/{folder.name}/train_params.ipynb"
    executed = nbformat.read(str(folder / "train_params.ipynb"), as_version=4)
    assert executed.cells[2].outputs[0]["text"].startswith("run from-the-lab: lr=0.25 epochs=2")

    # Delete in the list: the record goes from the portal, the files stay.
    assert lab(hub, token, "DELETE", f"jobs/{job_id}").status_code == 204
    gone = requests.get(portal, headers={"Authorization": f"token {token}"}, timeout=60)
    assert gone.status_code == 404
    assert (folder / "train_params.html").is_file()
