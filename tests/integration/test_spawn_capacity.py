"""The spawn form sees the cluster (issue 11, 1): free GPUs, and whether each profile starts now,
kept current while the page stays open. Real Slurm, real hub, Chromium."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest

from tests.integration.conftest import Hub, wait_for
from tests.integration.faults.helpers import fill_gpus, state_of
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def capacity_lines(page: Any) -> dict[str, str]:
    return {
        line.get_attribute("data-capacity-for"): line.inner_text()
        for line in page.query_selector_all("[data-capacity-for]")
    }


def test_busy_gpus_show_an_expected_start_and_the_form_flips_when_they_free(
    hub: Hub, clean: None, browser: Any
) -> None:
    blockers = fill_gpus("gpu01", "gpu02")
    wait_for(lambda: all(state_of(j) == "RUNNING" for j in blockers), 30, "the GPUs to fill")
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/hub/spawn")
    assert set(capacity_lines(page)) >= {"gpu-1", "gpu-2", "gpu-4"}
    # The hub may still hold a look at the cluster from before (10 s TTL, "as of" shown): the
    # page updates itself.
    wait_for(
        lambda: not any("Starts now" in t for t in capacity_lines(page).values()),
        30,
        "the form to see the busy GPUs",
    )
    lines = capacity_lines(page)
    # The blockers' 10-minute limits end them: Slurm could start gpu-4 then.
    assert re.search(r"GPUs busy: expected start about \d\d:\d\d \(in (9|10) min\)", lines["gpu-4"])
    assert "Free GPUs in gpu: 0 of 8." in page.inner_text("#gp-free")

    subprocess.run(["scancel", *blockers], check=True)
    # No reload: the page asks the hub again by itself (shared snapshot, 10 s TTL).
    wait_for(lambda: capacity_lines(page)["gpu-4"] == "Starts now", 40, "the form to see free GPUs")
    assert "Free GPUs in gpu: 8 of 8." in page.inner_text("#gp-free")


def test_the_form_remembers_the_time_limit_and_checks_the_maximum_itself(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "bob", "bob-demo")
    page.set_default_timeout(120_000)
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    page.fill("#gp-runtime", "99:00:00")
    message = page.eval_on_selector("#gp-runtime", "e => e.validationMessage")
    assert message.startswith("At most ") and "for this profile" in message, message
    page.fill("#gp-runtime", "02:30:00")
    assert page.eval_on_selector("#gp-runtime", "e => e.validationMessage") == ""
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/bob/lab**")
    hub.stop_server(hub.login("bob"), "bob")
    page.goto(f"{hub.url}/hub/spawn")
    assert page.input_value("#gp-runtime") == "02:30:00"
    assert page.is_checked("input[name=profile][value=gpu-1]")
