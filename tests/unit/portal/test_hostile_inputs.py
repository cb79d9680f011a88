"""Every field a user sends the portal, filled with what an attacker would send: each request is
answered with a refusal in words (never a 500), in bounded time and memory (issue 68, item 2).
The job request's fields are the widest door (a user's own, with parameters read as YAML); the
reads of users' files are tests/unit/portal/test_bounded_reads.py's."""

from __future__ import annotations

import time
import tracemalloc
from typing import Any

import pytest
from fastapi.testclient import TestClient

from gpuportal_portal.identity import HubIdentity
from tests.unit.core.test_notebook_params import BOMB
from tests.unit.portal.conftest import API, BOB, NOTEBOOK_JOB

NOTEBOOK: dict[str, Any] = NOTEBOOK_JOB
JOB = {**NOTEBOOK, "launcher": "torchrun", "script": "/home/bob/train.py"}
# What an attacker types into a text field: long, nested, aliased, binary, odd Unicode.
HOSTILE_TEXT = [
    "x" * 200_000,
    "[" * 100_000,
    BOMB,
    "&a [*a]",
    "\x00\x1b[2J\r\n" * 1000,
    "é\u202e\ufeff" * 20_000,
    "../" * 10_000 + "etc/shadow",
    "$(id)`id`;|&>",
]
TEXT_FIELDS = ["name", "gpu_type", "runtime", "partition", "script", "command", "workdir",
               "array", "begin"]  # fmt: skip
# How long and how much one refused request may take: far above what it takes here, far below
# what an expansion or a whole-file read takes (a parameter bomb held a worker 49 s).
SECONDS = 5.0
PEAK_BYTES = 64 * 2**20


def bodies() -> list[tuple[str, dict[str, Any]]]:
    made: list[tuple[str, dict[str, Any]]] = []
    for field in TEXT_FIELDS:
        for number, text in enumerate(HOSTILE_TEXT):
            made.append((f"{field}-{number}", {**JOB, field: text}))
    for number, text in enumerate(HOSTILE_TEXT):
        made.append((f"args-{number}", {**NOTEBOOK, "args": [f"x={text}"]}))
        venv = {"kind": "venv", "prefix": text}
        made.append((f"environment-{number}", {**JOB, "environment": venv}))
        image = {"kind": "apptainer", "image": text}
        made.append((f"container-{number}", {**JOB, "container": image}))
    made.append(("args-many", {**NOTEBOOK, "args": ["x=1"] * 100_000}))
    made.append(("extra-options-many", {**JOB, "extra_options": [["--x", "y"]] * 50_000}))
    return made


@pytest.mark.usefixtures("bob_home")
def test_every_hostile_field_is_refused_in_words_in_bounded_time_and_memory(
    client: tuple[TestClient, HubIdentity],
) -> None:
    """One app for every body (a new one each took most of the time); what fails, one line
    per body."""
    failed = []
    for what, body in bodies():
        tracemalloc.start()
        try:
            started = time.monotonic()
            answer = client[0].post(f"{API}/jobs/preview", headers=BOB, json=body)
            took = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # A refusal (or, for what passes every check, Slurm not here to ask: 503), never a 500.
        if answer.status_code not in (400, 413, 422, 503) or not answer.json().get("detail"):
            failed.append(f"{what}: {answer.status_code} {answer.text[:200]}")
        if took >= SECONDS or peak >= PEAK_BYTES:
            failed.append(f"{what}: {took:.1f} s, {peak / 2**20:.0f} MiB at its peak")
    assert failed == []
