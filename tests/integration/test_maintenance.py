"""A maintenance window ahead (issue 24, 2): Slurm starts no job that would run into it, so the
spawn page says that gpu-1's default 8 h would start only after it, and offers the longest limit
that starts now; with it the session starts at once. Real Slurm (a MAINT reservation), real hub,
Chromium."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import Hub, wait_for
from tests.integration.test_live_profiles import log_in
from tests.integration.test_spawn_capacity import capacity_lines

pytestmark = pytest.mark.integration

RESERVATION = "gpuportal-test-maint"


@pytest.fixture
def maintenance_in_two_hours() -> Iterator[None]:
    """A maintenance reservation of the first lane's nodes, from 2 h from now, for 1 h."""
    subprocess.run(["scontrol", "delete", f"reservation={RESERVATION}"], capture_output=True)
    window = ["starttime=now+2hours", "duration=60", "nodes=gpu[01-02]"]
    create = ["scontrol", "create", "reservation", f"reservationname={RESERVATION}", *window]
    subprocess.run([*create, "flags=maint,ignore_jobs", "users=root"], check=True)
    yield
    subprocess.run(["scontrol", "delete", f"reservation={RESERVATION}"], check=True)


def test_the_spawn_page_offers_a_limit_that_ends_before_maintenance_and_it_starts_at_once(
    hub: Hub, clean: None, browser: Any, maintenance_in_two_hours: None
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    page.set_default_timeout(120_000)
    page.goto(f"{hub.url}/hub/spawn")
    # The hub may hold a look from before the reservation (10 s TTL): the page updates itself.
    wait_for(lambda: "Maintenance from" in capacity_lines(page)["gpu-1"], 40, "the page to see it")
    said = capacity_lines(page)["gpu-1"]
    found = re.search(r"Choose at most (\d\d):(\d\d):00 to start now\.", said)
    assert found, said
    assert "with 08:00:00 it would start after it" in said
    offered = int(found.group(1)) * 60 + int(found.group(2))
    assert 100 <= offered < 120, said  # under the 2 h to the window, less a margin

    # One click takes that limit for gpu-1; the session starts at once (no queue).
    page.click("[data-fit-for='gpu-1']")
    assert page.is_checked("input[name=profile][value=gpu-1]")
    assert page.input_value("#gp-runtime") == f"{found.group(1)}:{found.group(2)}:00"
    page.check("input[name=environment][value=session]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/alice/lab**")
    limits = subprocess.run(
        ["squeue", "-h", "-u", "alice", "-o", "%T %l"], capture_output=True, text=True
    ).stdout.split()
    assert limits == ["RUNNING", f"{int(found.group(1))}:{found.group(2)}:00"], limits
    hub.stop_server(hub.login("alice"), "alice")
    wait_for(
        lambda: (
            not subprocess.run(
                ["squeue", "-h", "-u", "alice"], capture_output=True, text=True
            ).stdout.strip()
        ),
        30,
        "alice's session to end",
    )
