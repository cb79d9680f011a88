"""Issue 20, "also seen": with both nodes just filled, the waiting page said only "on its way",
its bar at 15 %, before it named where the job stands. Every note it shows while the job
is queued names its place in line and when it may start. Real Slurm, real hub."""

from __future__ import annotations

import json
import time

import pytest

from tests.hubproc import wait_for
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


def test_the_waiting_page_says_where_the_job_stands_within_seconds_after_a_stop(
    hub: Hub, clean: None
) -> None:
    """Issue 38, 4: gpu01 full with another user's 4-GPU job; alice's two 1-GPU sessions on
    gpu02; another 4-GPU job waiting for her GPUs; she stops both sessions and, 3 s later,
    starts a 4-GPU session. Its waiting page said only "on its way" for 5 s and more: no
    reason, no place in line, no expected start. Now it says them within 3 s."""
    fill_gpus("gpu01")
    alice = hub.login("alice")
    for path in ("/users/alice/server", "/users/alice/servers/second"):
        answer = hub.api(alice, "POST", path, json={"profile": "gpu-1"})
        assert answer.status_code in (201, 202), answer.text
    hub.wait_ready(alice, "alice")
    wait_for(
        lambda: hub.api(alice, "GET", "/users/alice").json()["servers"]["second"]["ready"],
        120,
        "her named session",
    )
    fill_gpus("gpu02")  # waits for her two GPUs
    hub.stop_all(alice, "alice")
    time.sleep(3)
    posted = time.monotonic()
    answer = hub.api(alice, "POST", "/users/alice/server", json={"profile": "gpu-4"})
    assert answer.status_code in (201, 202), answer.text
    url = f"{hub.url}/hub/api/users/alice/server/progress"
    said: list[tuple[float, int, str]] = []
    with alice.get(url, stream=True, timeout=60) as stream:
        for line in stream.iter_lines(decode_unicode=True):
            if not (line and line.startswith("data:")):
                continue
            event = json.loads(line[5:])
            said.append((time.monotonic() - posted, event["progress"], event.get("message", "")))
            if "Expected start about" in said[-1][2] or "start any moment" in said[-1][2]:
                break
            if time.monotonic() - posted > 30:
                break
    where = [(at, message) for at, _, message in said if "waiting for partition gpu." in message]
    assert where, f"the waiting page never said where the job stands: {said}"
    assert where[0][0] < 3.0, f"it took {where[0][0]:.1f} s: {said}"
