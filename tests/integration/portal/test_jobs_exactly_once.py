"""A multi-node job is submitted exactly once: under two concurrent POSTs with one
Idempotency-Key, and when sbatch answers only after the portal gave up on it."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from gpuportal_portal.app import create_app
from gpuportal_portal.settings import PortalSettings
from tests.hubproc import Hub
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.faults.helpers import late_sbatch
from tests.integration.jobs import install_job_files
from tests.integration.portal.test_jobs_api import API, WHERE, as_user

pytestmark = pytest.mark.integration


@pytest.fixture
def no_jobs() -> Iterator[None]:
    install_job_files("alice")
    cancel_user_jobs("alice")
    yield
    cancel_user_jobs("alice")


def test_two_concurrent_posts_with_one_key_submit_one_job(
    portal: TestClient, tokens: dict[str, str], no_jobs: None
) -> None:
    headers = as_user(tokens["alice"], **{"Idempotency-Key": "twice-at-once"})
    with ThreadPoolExecutor(2) as pool:
        answers = list(
            pool.map(lambda _: portal.post(f"{API}/jobs", headers=headers, json=WHERE), range(2))
        )
    assert sorted(a.status_code for a in answers) == [200, 201], [a.text for a in answers]
    assert answers[0].json()["id"] == answers[1].json()["id"]
    assert len(user_jobs("alice")) == 1
    listed = portal.get(f"{API}/jobs", headers=as_user(tokens["alice"])).json()
    assert len(listed) == 1


def test_sbatch_answering_too_late_still_gives_one_job(
    hub: Hub, database_url: str, tokens: dict[str, str], no_jobs: None
) -> None:
    with late_sbatch() as bin_dir:
        settings = PortalSettings(
            database_url=database_url,
            hub_api_token=(hub.state / "portal-api-token").read_text().strip(),
            hub_api_url=hub.api_url,
            **hub.client_tls,
            oauth_client_id="service-portal",
            slurm_bin_dir=str(bin_dir),
            slurm_timeout=3,
        )
        with TestClient(create_app(settings)) as portal:
            headers = as_user(tokens["alice"], **{"Idempotency-Key": "late-answer"})
            first = portal.post(f"{API}/jobs", headers=headers, json=WHERE)
            # sbatch timed out, but the job carries its tag: found, recorded, reported.
            assert first.status_code == 201, first.text
            job_id = first.json()["slurm_job_id"]
            tag = _comments()[job_id]
            assert tag.startswith(f"gpuportal:job:local:alice:{first.json()['id']}."), tag
            assert [j for j, comment in _comments().items() if comment == tag] == [job_id]
            again = portal.post(f"{API}/jobs", headers=headers, json=WHERE)
            assert (again.status_code, again.json()["id"]) == (200, first.json()["id"])
            assert [j for j, comment in _comments().items() if comment == tag] == [job_id]


def _comments() -> dict[str, str]:
    """alice's jobs (finished ones too: the test job is done in a second) and their tags."""
    lines = user_jobs("alice", "%i|%k", "--states=all")
    return dict(line.split("|", 1) for line in lines)
