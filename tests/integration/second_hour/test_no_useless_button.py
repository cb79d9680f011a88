"""Issue 34, item 12: with a maintenance window ahead and the group at its GPU limit, the
gpu-4 card says it waits for the group's limit and offers no shorter limit to "start now"
(none would: Slurm holds it for the group). Real Slurm (a MAINT reservation, ds's GrpTRES of
6 GPUs), real hub, Chromium as bob while alice holds 4 of ds's GPUs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, wait_for
from tests.integration.faults.helpers import spawn
from tests.integration.test_live_profiles import log_in
from tests.integration.test_maintenance import maintenance_in_two_hours  # noqa: F401
from tests.integration.test_spawn_capacity import capacity_lines

pytestmark = pytest.mark.integration


@pytest.mark.usefixtures("maintenance_in_two_hours")
def test_a_profile_held_by_the_group_limit_offers_no_limit_to_start_now(
    hub: Hub, clean: None, browser: Any
) -> None:
    alice = hub.login("alice")
    started = spawn(hub, alice, "alice", profile="gpu-4", runtime="01:00:00")
    assert started.status_code in (201, 202), started.text
    hub.wait_ready(alice, "alice")

    page = log_in(browser, hub, "bob", "bob-demo")
    page.goto(f"{hub.url}/hub/spawn")

    def held() -> bool:
        return capacity_lines(page)["gpu-4"].startswith("Waits for your group's GPU limit")

    wait_for(held, 90, "bob's page to see his group at its limit")
    assert page.locator("[data-fit-for='gpu-4']").is_hidden()
    # gpu-1 fits the group, and its 8 h would run into the window: it is offered a limit.
    assert "Choose at most" in capacity_lines(page)["gpu-1"]
    assert page.locator("[data-fit-for='gpu-1']").is_visible()
