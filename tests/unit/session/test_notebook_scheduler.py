"""Jupyter Scheduler on Slurm (gpuportal_session.notebook_scheduler), its hub replaced by a
stand-in that answers as the hub's /hub/gpuportal/notebook-jobs does: the dialog's choices are
the user's environments and profiles, a job is the portal's record of Slurm's state, and its
files are the run's folder beside the notebook."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from jupyter_scheduler.exceptions import SchedulerError
from jupyter_scheduler.models import (
    CreateJob,
    CreateJobDefinition,
    ListJobsQuery,
    Status,
    UpdateJobDefinition,
)

from gpuportal_session.notebook_job_views import describe, described_definition, status_of
from gpuportal_session.notebook_jobs_hub import HubRefused, words
from gpuportal_session.notebook_scheduler import PortalEnvironments, SlurmNotebookScheduler

CHOICES = {
    "profiles": [
        {
            "slug": "gpu-1",
            "summary": "1 GPU · 8 CPU cores · 48 GB memory · default 8 h, up to 24 h",
        },
        {
            "slug": "gpu-2",
            "summary": "2 GPUs · 16 CPU cores · 96 GB memory · default 8 h, up to 24 h",
        },
    ],
    "environments": [{"slug": "tools", "title": "Tools", "kind": "modules", "profiles": ["gpu-1"]}],
}


def record(notebook: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": 7,
        "name": "overnight",
        "slurm_job_id": "1234",
        "state": "PENDING",
        "reason": "Resources",
        "expected_start": "2026-11-29T18:05:00+00:00",
        "exit_code": None,
        "submitted_at": "2026-11-29T14:00:00+00:00",
        "started_at": "",
        "ended_at": "",
        "request": {"script": notebook, "gpus_per_node": 2, "gpu_type": "", "args": ["lr=0.1"]},
        **fields,
    }


class StandInHub:
    """Answers as the hub would; remembers what it was asked."""

    def __init__(self, answers: dict[tuple[str, str], Any]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str, Any]] = []

    async def call(self, method: str, path: str = "", body: Any = None) -> Any:
        self.asked.append((method, path, body))
        answer = self.answers[(method, path)]
        if isinstance(answer, HubRefused):
            raise answer
        return answer


def scheduler(tmp_path: Path, hub: StandInHub) -> SlurmNotebookScheduler:
    made = SlurmNotebookScheduler(
        root_dir=str(tmp_path), environments_manager=PortalEnvironments(hub)
    )
    made.hub = hub  # type: ignore[assignment]
    return made


def test_the_dialog_offers_the_users_environments_with_their_profiles_as_compute_types() -> None:
    """With no environment that is the session venv, "Session default" (no environment) first."""
    environments = asyncio.run(
        PortalEnvironments(StandInHub({("GET", "/choices"): CHOICES})).list_environments()
    )
    assert [(e.name, e.label, e.compute_types) for e in environments] == [
        (
            "Session default",
            "Session default",
            [
                "gpu-1 · 1 GPU · 8 CPU cores · 48 GB memory · default 8 h, up to 24 h",
                "gpu-2 · 2 GPUs · 16 CPU cores · 96 GB memory · default 8 h, up to 24 h",
            ],
        ),
        (
            "Tools",
            "Tools",
            ["gpu-1 · 1 GPU · 8 CPU cores · 48 GB memory · default 8 h, up to 24 h"],
        ),
    ]


def test_create_job_asks_the_hub_for_the_profile_environment_and_parameters(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "train.ipynb").write_text("{}")
    hub = StandInHub({("POST", ""): {"id": 7}, ("GET", "/choices"): CHOICES})
    job = CreateJob(
        input_uri="work/train.ipynb",
        runtime_environment_name="Tools",
        compute_type="gpu-1 · 1 GPU · 8 CPU cores · 48 GB memory · default 8 h, up to 24 h",
        parameters={"lr": "0.1", "epochs": "3"},
        name="overnight",
        idempotency_token="abc",
    )
    assert asyncio.run(scheduler(tmp_path, hub).create_job(job)) == "portal-7"
    assert hub.asked[1:] == [
        (
            "POST",
            "",
            {
                "name": "overnight",
                "notebook": f"{tmp_path}/work/train.ipynb",
                "profile": "gpu-1",
                "environment": "tools",
                "parameters": ["lr=0.1", "epochs=3"],
                "idempotency_key": "abc",
            },
        )
    ]


def test_a_notebook_that_is_not_there_is_refused_before_the_hub(tmp_path: Path) -> None:
    hub = StandInHub({})
    job = CreateJob(input_uri="gone.ipynb", runtime_environment_name="Session default", name="x")
    with pytest.raises(SchedulerError, match=r"There is no notebook gone\.ipynb: save it first"):
        asyncio.run(scheduler(tmp_path, hub).create_job(job))
    assert hub.asked == []


def test_a_form_without_an_input_file_says_where_to_open_it(tmp_path: Path) -> None:
    hub = StandInHub({})
    job = CreateJob(input_uri="", runtime_environment_name="Session default", name="x")
    with pytest.raises(SchedulerError, match=r"no input file: open it from a notebook's toolbar"):
        asyncio.run(scheduler(tmp_path, hub).create_job(job))
    assert hub.asked == []


def test_the_portals_refusal_reaches_the_dialog_in_its_words(tmp_path: Path) -> None:
    (tmp_path / "a.ipynb").write_text("{}")
    refusal = HubRefused(422, "args: lr: '[1,' is not a JSON or YAML value")
    job = CreateJob(input_uri="a.ipynb", runtime_environment_name="Session default", name="x")
    hub = StandInHub({("POST", ""): refusal, ("GET", "/choices"): CHOICES})
    with pytest.raises(SchedulerError, match="is not a JSON or YAML value"):
        asyncio.run(scheduler(tmp_path, hub).create_job(job))


def test_two_environments_of_one_title_are_told_apart_by_their_slugs() -> None:
    twins = [
        {"slug": "torch-a", "title": "PyTorch", "profiles": []},
        {"slug": "torch-b", "title": "PyTorch", "profiles": []},
    ]
    manager = PortalEnvironments(
        StandInHub({("GET", "/choices"): {**CHOICES, "environments": twins}})
    )
    names = [e.name for e in asyncio.run(manager.list_environments())]
    assert names == ["Session default", "PyTorch (torch-a)", "PyTorch (torch-b)"]
    assert asyncio.run(manager.slug_of("PyTorch (torch-b)")) == "torch-b"
    assert asyncio.run(manager.slug_of("Session default")) == ""
    with pytest.raises(SchedulerError, match="Gone is not an environment you are offered"):
        asyncio.run(manager.slug_of("Gone"))


def test_a_waiting_job_says_where_it_stands_and_a_done_one_links_its_outputs(
    tmp_path: Path,
) -> None:
    notebook = tmp_path / "train.ipynb"
    waiting = describe(record(str(notebook)), str(tmp_path))
    assert waiting.status == Status.QUEUED
    assert waiting.status_message == (
        "Slurm job 1234 is waiting in the queue (Resources); Slurm expects it to start at "
        "2026-11-29 18:05"
    )
    # The portal's words when it has them: the hub's waiting page's, as for a session.
    group = "your group is at its GPU limit: it starts as your group's other jobs end"
    held = record(str(notebook), reason="AssocGrpGRES", waiting_because=group)
    assert describe(held, str(tmp_path)).status_message == (
        f"Slurm job 1234 is waiting in the queue ({group}); Slurm expects it to start at "
        "2026-11-29 18:05"
    )
    words = (
        f"Job 1234 is queued: {group}. 1st of 1 waiting for partition gpu. Waiting 2 min so far."
    )
    placed = describe(record(str(notebook), queue=words), str(tmp_path))
    assert placed.status_message == words
    assert waiting.parameters == {"lr": "0.1"}
    assert [f.file_path for f in waiting.job_files] == [None, None]
    runs = tmp_path / "train-runs" / "2026-11-29_18-05-02_job1234"
    runs.mkdir(parents=True)
    (runs / "train.ipynb").write_text("{}")
    (runs / "train.html").write_text("<html>")
    done = describe(
        record(
            str(notebook),
            state="COMPLETED",
            expected_start="",
            ended_at="2026-11-29T19:00:00+00:00",
        ),
        str(tmp_path),
    )
    assert done.status == Status.COMPLETED and done.end_time == 1795978800000
    assert done.status_message is None  # nothing to warn of
    failed = describe(record(str(notebook), state="FAILED", exit_code=1), str(tmp_path))
    assert failed.status_message == "Slurm job 1234 failed; exit code 1"
    assert [f.file_path for f in done.job_files] == [
        "train-runs/2026-11-29_18-05-02_job1234/train.ipynb",
        "train-runs/2026-11-29_18-05-02_job1234/train.html",
    ]


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("PENDING", Status.QUEUED),
        ("SUBMITTING", Status.QUEUED),
        ("RUNNING", Status.IN_PROGRESS),
        ("COMPLETING", Status.STOPPING),
        ("COMPLETED", Status.COMPLETED),
        ("CANCELLED", Status.STOPPED),
        ("FAILED", Status.FAILED),
        ("TIMEOUT", Status.FAILED),
        ("OUT_OF_MEMORY", Status.FAILED),
    ],
)
def test_slurms_states_are_the_lists_statuses(state: str, status: Status) -> None:
    assert status_of(state) == status


def test_the_list_is_the_portals_newest_first_and_filtered(tmp_path: Path) -> None:
    older = record(
        str(tmp_path / "a.ipynb"), id=3, state="FAILED", submitted_at="2026-11-28T10:00:00+00:00"
    )
    newer = record(str(tmp_path / "b.ipynb"), id=9, state="RUNNING")
    hub = StandInHub({("GET", ""): [older, newer]})
    listed = asyncio.run(scheduler(tmp_path, hub).list_jobs(ListJobsQuery()))
    assert [j.job_id for j in listed.jobs] == ["portal-9", "portal-3"]
    failed = asyncio.run(scheduler(tmp_path, hub).list_jobs(ListJobsQuery(status=Status.FAILED)))
    assert [j.job_id for j in failed.jobs] == ["portal-3"]


def test_delete_cancels_a_running_job_then_removes_it_once_it_has_ended(tmp_path: Path) -> None:
    hub = StandInHub(
        {
            ("GET", "/7"): record(str(tmp_path / "a.ipynb"), state="RUNNING"),
            ("DELETE", "/7"): {},
            ("DELETE", "/7/record"): None,
        }
    )
    asyncio.run(scheduler(tmp_path, hub).delete_job("portal-7"))
    assert [(m, p) for m, p, _ in hub.asked] == [
        ("GET", "/7"),
        ("DELETE", "/7"),
        ("DELETE", "/7/record"),
    ]


def test_the_sites_session_venv_environment_is_not_offered_twice() -> None:
    venv = {"slug": "session", "title": "Session default", "profiles": [], "session_venv": True}
    hub = StandInHub({("GET", "/choices"): {**CHOICES, "environments": [venv]}})
    environments = asyncio.run(PortalEnvironments(hub).list_environments())
    assert [e.name for e in environments] == ["Session default"]


def test_a_refusal_names_the_fields_as_the_dialog_does() -> None:
    answer = {
        "detail": [
            {"loc": ["body", "args"], "msg": "lr: '[1,' is not a JSON or YAML value"},
            {"loc": ["body", "profile"], "msg": "gpu-8 is not one you may use"},
        ]
    }
    assert words(answer) == (
        "Parameters: lr: '[1,' is not a JSON or YAML value; "
        "Compute type: gpu-8 is not one you may use"
    )


def test_a_notebook_whose_name_looks_like_a_pattern_still_finds_its_run(tmp_path: Path) -> None:
    notebook = tmp_path / "exp[1].ipynb"
    runs = tmp_path / "exp[1]-runs" / "2026-11-29_18-05-02_job1234"
    runs.mkdir(parents=True)
    (runs / "exp[1].ipynb").write_text("{}")
    done = describe(record(str(notebook), state="COMPLETED"), str(tmp_path))
    assert done.job_files[0].file_path == "exp[1]-runs/2026-11-29_18-05-02_job1234/exp[1].ipynb"


DEFINITION = {
    "id": 4,
    "name": "nightly",
    "job": {"script": "/home/alice/work/train.ipynb", "gpus_per_node": 1, "args": ["lr=0.1"]},
    "schedule": "0 3 * * *",
    "timezone": "Europe/Paris",
    "active": True,
    "created_at": "2026-11-29T14:00:00+00:00",
    "updated_at": "2026-11-29T14:00:00+00:00",
}


def test_a_definition_asks_the_hub_with_its_schedule_and_zone(tmp_path: Path) -> None:
    (tmp_path / "train.ipynb").write_text("{}")
    hub = StandInHub({("POST", "/definitions"): DEFINITION, ("GET", "/choices"): CHOICES})
    model = CreateJobDefinition(
        input_uri="train.ipynb",
        runtime_environment_name="Session default",
        compute_type="gpu-1 · 1 GPU",
        name="nightly",
        schedule="0 3 * * *",
        timezone="Europe/Paris",
    )
    assert asyncio.run(scheduler(tmp_path, hub).create_job_definition(model)) == "portal-4"
    (method, path, body) = hub.asked[-1]
    assert (method, path) == ("POST", "/definitions")
    assert body == {
        "name": "nightly",
        "notebook": f"{tmp_path}/train.ipynb",
        "profile": "gpu-1",
        "environment": "",
        "parameters": [],
        "schedule": "0 3 * * *",
        "timezone": "Europe/Paris",
    }


def test_pausing_a_definition_sends_only_what_changes(tmp_path: Path) -> None:
    hub = StandInHub({("PATCH", "/definitions/4"): DEFINITION})
    pause = UpdateJobDefinition(active=False)
    asyncio.run(scheduler(tmp_path, hub).update_job_definition("portal-4", pause))
    assert hub.asked == [("PATCH", "/definitions/4", {"active": False})]
    # The edit form's Save: a new schedule, the notebook sent back as it was shown.
    hub.answers[("GET", "/definitions/4")] = DEFINITION
    edit = UpdateJobDefinition(schedule="30 2 * * *", timezone="UTC", input_uri="train.ipynb")
    asyncio.run(scheduler(tmp_path, hub).update_job_definition("portal-4", edit))
    assert hub.asked[-1] == (
        "PATCH",
        "/definitions/4",
        {"schedule": "30 2 * * *", "timezone": "UTC"},
    )
    with pytest.raises(SchedulerError, match="compute_type are set when it is made"):
        asyncio.run(
            scheduler(tmp_path, hub).update_job_definition(
                "portal-4", UpdateJobDefinition(compute_type="gpu-2")
            )
        )


def test_a_definition_shows_with_its_schedule_and_its_runs_point_to_it(tmp_path: Path) -> None:
    shown = described_definition(DEFINITION)
    assert (shown.job_definition_id, shown.schedule, shown.timezone, shown.active) == (
        "portal-4",
        "0 3 * * *",
        "Europe/Paris",
        True,
    )
    assert shown.input_filename == "train.ipynb" and shown.parameters == {"lr": "0.1"}
    run = describe(record(f"{tmp_path}/train.ipynb", schedule_id=4), str(tmp_path))
    assert run.job_definition_id == "portal-4"
    assert describe(record(f"{tmp_path}/train.ipynb"), str(tmp_path)).job_definition_id is None
