"""Every body the portal takes is bounded before it is parsed (gpuportal_portal.body_limit, and
gpuportal_core.notebook_params for a notebook's parameters): refused fast, with words, as a 4xx."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from gpuportal_portal.identity import HubIdentity
from tests.unit.core.test_notebook_params import BOMB
from tests.unit.portal.conftest import API, BOB, NOTEBOOK_JOB


@pytest.mark.usefixtures("bob_home")
def test_a_parameter_bomb_is_refused_at_its_field_at_once(
    client: tuple[TestClient, HubIdentity],
) -> None:
    # Before: PyYAML expanded the aliases inside the request (a worker held for good) and a
    # self-referencing one was a 500.
    for value in (BOMB, "&a [*a]"):
        started = time.monotonic()
        answer = client[0].post(
            f"{API}/jobs/preview", headers=BOB, json={**NOTEBOOK_JOB, "args": [f"x={value}"]}
        )
        assert time.monotonic() - started < 5
        assert answer.status_code == 422, answer.text
        (problem,) = answer.json()["detail"]
        assert problem["loc"] == ["body", "args"]
        assert "uses a YAML alias (*name): write the value out in full" in problem["msg"]


def test_a_body_over_a_megabyte_is_a_413_with_words(
    client: tuple[TestClient, HubIdentity],
) -> None:
    body = {**NOTEBOOK_JOB, "args": ["x=" + "1" * 900] * 1300}  # 1.2 MB
    answer = client[0].post(f"{API}/jobs/preview", headers=BOB, json=body)
    assert answer.status_code == 413, answer.text
    assert "at most 1048576 are taken here: send less" in answer.json()["detail"]


def test_a_body_counted_as_it_comes_whatever_its_length_header_says(
    client: tuple[TestClient, HubIdentity],
) -> None:
    chunks = (b"[" + b"1," * 200_000 for _ in range(4))  # chunked: no Content-Length
    answer = client[0].post(
        f"{API}/jobs/preview",
        headers={**BOB, "Content-Type": "application/json"},
        content=chunks,
    )
    assert answer.status_code == 413, answer.text


@pytest.mark.usefixtures("bob_home")
def test_a_body_that_nests_deep_is_a_422_not_a_500(
    client: tuple[TestClient, HubIdentity],
) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    answer = client[0].post(
        f"{API}/jobs/preview", headers={**BOB, "Content-Type": "application/json"}, content=deep
    )
    assert answer.status_code == 422, answer.text
    (problem,) = answer.json()["detail"]
    assert problem["loc"] == ["body"]
    assert problem["msg"] == "the body nests 100000 deep: at most 32: send a flatter JSON document"
    # Brackets inside a string are text: a job whose argument holds them passes this check.
    text = {**NOTEBOOK_JOB, "args": ["note='" + "[" * 200 + "'"]}
    assert client[0].post(f"{API}/jobs/preview", headers=BOB, json=text).status_code != 422


def test_the_413_is_in_the_api_document(client: tuple[TestClient, HubIdentity]) -> None:
    document = client[0].get("/services/portal/openapi.json").json()
    jobs = document["paths"]["/services/portal/api/jobs"]["post"]["responses"]
    assert "413" in jobs and "over 1 MiB" in jobs["413"]["description"]
