"""The schedules API refuses what cannot be scheduled at its field, before anything is kept or
submitted (the runs themselves: tests/integration/test_notebook_schedules.py)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event

from gpuportal_portal import schedule_service
from gpuportal_portal.identity import HubIdentity
from gpuportal_portal.models import JobRecord, NotebookSchedule, utcnow
from tests.unit.portal.conftest import API, BOB, NOTEBOOK_JOB

JOB = NOTEBOOK_JOB


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"schedule": "every night"}, "schedule", "not a cron schedule: five fields"),
        ({"schedule": "0 3 * * *", "timezone": "Mars/Olympus"}, "timezone", "not a time zone"),
    ],
)
def test_a_schedule_that_cannot_be_read_is_refused_and_nothing_is_kept(
    client: tuple[TestClient, HubIdentity], body: dict[str, str], field: str, words: str
) -> None:
    test_client = client[0]
    refused = test_client.post(f"{API}/schedules", headers=BOB, json={"job": JOB, **body})
    assert refused.status_code == 422, refused.text
    (problem,) = refused.json()["detail"]
    assert problem["loc"] == ["body", field] and words in problem["msg"]
    assert test_client.get(f"{API}/schedules", headers=BOB).json() == []


def test_a_job_that_begins_later_needs_a_zone(client: tuple[TestClient, HubIdentity]) -> None:
    test_client = client[0]
    refused = test_client.post(
        f"{API}/jobs/preview", headers=BOB, json={**JOB, "begin": "2026-12-01T03:00:00"}
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["detail"][0]["loc"] == ["body", "begin"]


def test_someone_elses_schedule_is_not_found(client: tuple[TestClient, HubIdentity]) -> None:
    test_client = client[0]
    for method in ("GET", "PATCH", "DELETE"):
        answer = test_client.request(
            method, f"{API}/schedules/7", headers=BOB, json={} if method == "PATCH" else None
        )
        assert answer.status_code == 404, (method, answer.text)


def test_the_list_looks_up_the_queued_runs_in_one_query(
    client: tuple[TestClient, HubIdentity],
) -> None:
    """Each definition's next run and its begin, for 5 definitions: one query for the runs, not
    one per definition (the Jobs page asks every 5 s)."""
    test_client = client[0]
    app: Any = test_client.app
    with app.state.database.sessions() as session:
        for index in range(5):
            run = JobRecord(
                user="bob", name="nightly", launcher="notebook", script="", output="",
                request={**JOB, "begin": f"2026-12-0{index + 1}T03:00:00+00:00"},
            )  # fmt: skip
            session.add(run)
            session.flush()
            session.add(
                NotebookSchedule(
                    user="bob", name=f"nightly-{index}", request=JOB, schedule="0 3 * * *",
                    next_record_id=run.id,
                )
            )  # fmt: skip
        session.commit()
    statements: list[str] = []
    engine = app.state.database.engine
    listen = lambda *args: statements.append(args[2])  # noqa: E731 (the event's signature)
    event.listen(engine, "before_cursor_execute", listen)
    try:
        listed = test_client.get(f"{API}/schedules", headers=BOB).json()
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    assert [d["next_run"][:10] for d in listed] == [f"2026-12-0{i}" for i in (5, 4, 3, 2, 1)]
    assert sum("FROM jobs" in statement for statement in statements) == 1, statements


def test_a_schedule_that_runs_more_often_than_the_site_allows_is_refused(
    client: tuple[TestClient, HubIdentity],
) -> None:
    refused = client[0].post(
        f"{API}/schedules", headers=BOB, json={"job": JOB, "schedule": "*/5 * * * *"}
    )
    assert refused.status_code == 422, refused.text
    (problem,) = refused.json()["detail"]
    assert problem["loc"] == ["body", "schedule"]
    assert "runs 5 minutes apart at its closest" in problem["msg"]
    assert "at most every 15 minutes" in problem["msg"]


def test_a_user_keeps_at_most_the_sites_count_of_definitions(
    client: tuple[TestClient, HubIdentity],
) -> None:
    test_client = client[0]
    app: Any = test_client.app
    with app.state.database.sessions() as session:
        for index in range(20):
            session.add(
                NotebookSchedule(user="bob", name=f"n{index}", request=JOB, schedule="0 3 * * *")
            )
        session.commit()
    refused = test_client.post(
        f"{API}/schedules", headers=BOB, json={"job": JOB, "schedule": "0 4 * * *"}
    )
    assert refused.status_code == 422, refused.text
    assert "you keep 20 definitions on a schedule" in refused.json()["detail"][0]["msg"]


@pytest.mark.usefixtures("bob_home")
def test_a_begin_years_ahead_is_refused_at_its_field(
    client: tuple[TestClient, HubIdentity],
) -> None:
    refused = client[0].post(
        f"{API}/jobs/preview", headers=BOB, json={**JOB, "begin": "9999-01-01T03:00:00+00:00"}
    )
    assert refused.status_code == 422, refused.text
    (problem,) = refused.json()["detail"]
    assert problem["loc"] == ["body", "begin"] and "over 366 days ahead" in problem["msg"]


def test_a_definition_that_keeps_failing_is_paused_with_the_reason(
    client: tuple[TestClient, HubIdentity],
) -> None:
    app: Any = client[0].app
    settings = app.state.settings
    with app.state.database.sessions() as session:
        definition = NotebookSchedule(user="bob", name="n", request=JOB, schedule="0 3 * * *")
        session.add(definition)
        session.commit()
        for _ in range(settings.schedule_pause_after - 1):
            schedule_service._note_problem(session, definition, "no partition 'gone'", settings)
        assert definition.active  # tried again later, every RETRY_AFTER
        schedule_service._note_problem(session, definition, "no partition 'gone'", settings)
        assert not definition.active  # before: tried every 5 minutes for ever
        assert definition.problem == "Paused after 3 tries in a row: no partition 'gone'"


def test_a_definition_whose_user_is_gone_is_paused(
    client: tuple[TestClient, HubIdentity],
) -> None:
    app: Any = client[0].app
    with app.state.database.sessions() as session:
        definition = NotebookSchedule(
            user="nobody-here", name="n", request=JOB, schedule="0 3 * * *",
            updated_at=utcnow() - timedelta(hours=1),
        )  # fmt: skip
        session.add(definition)
        session.commit()
        definition_id = definition.id
    deps = schedule_service.Deps(
        app.state.settings, app.state.catalog, app.state.slurm, app.state.output_folders
    )
    assert asyncio.run(schedule_service.keep(app.state.database, deps)) == 0
    with app.state.database.sessions() as session:
        kept = session.get(NotebookSchedule, definition_id)
        assert kept is not None and not kept.active
        assert kept.problem == "Paused: nobody-here is no longer a user of this cluster"
