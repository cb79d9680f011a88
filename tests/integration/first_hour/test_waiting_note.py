"""Issue 20, "also seen": with both nodes just filled, the waiting page said only "on its way",
its bar at 15 %, before it named where the job stands. Every note it shows while the job
is queued names its place in line and when it may start. Real Slurm, real hub."""

from __future__ import annotations

import json

import pytest

from tests.integration.conftest import Hub
from tests.integration.faults.helpers import fill_gpus

pytestmark = pytest.mark.integration


def test_every_queued_note_names_the_place_in_line_and_the_start_even_as_nodes_fill(
    hub: Hub, clean: None
) -> None:
    fill_gpus("gpu01", "gpu02")  # not waited for: Slurm is busy starting them
    alice = hub.login("alice")
    answer = hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-4"}}
    )
    assert answer.status_code in (201, 202), answer.text
    url = f"{hub.url}/hub/api/users/alice/server/progress"
    queued: list[tuple[int, str]] = []
    with alice.get(url, stream=True, timeout=60) as stream:
        for line in stream.iter_lines(decode_unicode=True):
            if not (line and line.startswith("data:")):
                continue
            event = json.loads(line[5:])
            message = event.get("message", "")
            if " is queued" in message:
                queued.append((event["progress"], message))
            if "Expected start about" in message:
                break
    assert queued, "the waiting page never said the job is queued"
    for percent, message in queued:
        assert "waiting for partition gpu." in message, (percent, message)
        assert "Expected start about" in message or "start any moment" in message, (
            percent,
            message,
        )
