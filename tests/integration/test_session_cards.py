"""Sessions you can see and keep (issue 11, 3): a card per session on the hub home with its time
left, extend within the profile's maximum (checked with squeue), and named sessions side by side.
Real Slurm, real hub, Chromium."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.integration.conftest import Hub, user_jobs, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def time_limit(job_id: str) -> str:
    lines = user_jobs("alice", "%i|%l")
    return next(line.split("|")[1] for line in lines if line.split("|")[0] == job_id)


def card(page: Any, server: str = "") -> Any:
    return page.locator(f'.gp-card[data-server="{server}"]')


def test_the_home_card_shows_the_session_and_extend_moves_its_time_limit(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")  # before the spawn: after it, /user/...
    alice = hub.login("alice")
    options = {"profile": "gpu-1", "runtime": "23:00:00"}
    response = hub.api(alice, "POST", "/users/alice/server", json={"user_options": options})
    assert response.status_code in (201, 202), response.text
    hub.wait_ready(alice, "alice")
    [job] = [line.split("|")[0] for line in user_jobs("alice")]

    page.goto(f"{hub.url}/hub/home")
    home = card(page)
    home.locator(".gp-state", has_text="Running").wait_for()
    facts = home.locator("dl").inner_text()
    assert "1 GPU" in facts and re.search(r"Node\s+gpu0[12]", facts), facts
    assert re.search(r"Job\s+" + job, facts), facts
    # The label says "left"; the value does not again (issue 34, item 16).
    assert re.search(r"Time left\s+22 h 59 min\n", facts), facts
    # 1 h left to the 24 h maximum: the menu offers what fits and no more.
    assert home.locator(".gp-extend-by option").all_inner_texts() == ["+30 min", "+1 h"]

    # Past the maximum: refused with what is allowed, and Slurm's limit stays.
    refused = alice.post(
        f"{hub.url}/hub/gpuportal/extend", json={"server": "", "add": "02:00:00"}, timeout=30
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == (
        "at most 01:00:00 more: profile gpu-1 allows 24 h in all and this session has 23 h"
    )
    assert time_limit(job) == "23:00:00"
    # Another user cannot reach it: only the caller's own servers are looked at.
    bob = hub.login("bob")
    other = bob.post(f"{hub.url}/hub/gpuportal/extend", json={"server": "", "add": "00:30:00"})
    assert other.status_code == 409 and time_limit(job) == "23:00:00"

    home.locator(".gp-extend-by").select_option("00:30:00")
    home.locator(".gp-extend").click()
    wait_for(lambda: time_limit(job) == "23:30:00", 20, "Slurm's time limit to move")
    home.locator("dd", has_text="23:30:00 (at most 24:00:00)").wait_for()
    assert re.search(r"Time left\s+23 h 29 min\n", home.locator("dl").inner_text())
    # And the card says it worked (issue 34, item 14).
    assert home.locator(".gp-card-note").inner_text() == (
        "Extended by 30 min: the time limit is now 23:30:00."
    )

    home.locator(".gp-extend").click()  # the last 30 min
    wait_for(lambda: time_limit(job) == "1-00:00:00", 20, "Slurm's time limit to reach 24 h")
    home.locator(".gp-hint", has_text="At the profile's maximum time").wait_for()
    assert home.locator(".gp-extend").count() == 0
    assert "Audit: extend user=alice server='' job=" + job in hub.log_tail(200)


def test_a_second_named_session_runs_beside_the_first_within_the_limit(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    alice = hub.login("alice")
    response = hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert response.status_code in (201, 202), response.text
    hub.wait_ready(alice, "alice")

    page.goto(f"{hub.url}/hub/home")
    page.fill("#gp-new-name", "Bad Name")
    page.click("#gp-new button[type=submit]")
    assert page.url.endswith("/hub/home")  # refused in the page, nothing spawned
    page.fill("#gp-new-name", "second")
    page.click("#gp-new button[type=submit]")
    page.wait_for_url("**/hub/spawn/alice/second")
    page.check("input[name=profile][value=gpu-1]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/alice/second/lab**", timeout=120_000)

    tags = sorted(line.split("|")[1] for line in user_jobs("alice", "%i|%k"))
    assert tags == ["gpuportal:session:test:alice:", "gpuportal:session:test:alice:second"]
    page.goto(f"{hub.url}/hub/home")
    for server in ("", "second"):
        card(page, server).locator(".gp-state", has_text="Running").wait_for()

    # The limit (2 named sessions running besides the default one) is the hub's to enforce,
    # in words that say what to do (issue 20, item 4).
    options = {"user_options": {"profile": "gpu-1"}}
    third = hub.api(alice, "POST", "/users/alice/servers/third", json=options)
    assert third.status_code in (201, 202), third.text
    fourth = hub.api(alice, "POST", "/users/alice/servers/fourth", json=options)
    assert fourth.status_code == 409
    assert "You already run 2 named sessions (second, third)" in fourth.json()["message"]
    assert not [line for line in user_jobs("alice", "%k") if line.endswith(":fourth")]

    # A named session extends like the default one.
    extended = alice.post(
        f"{hub.url}/hub/gpuportal/extend", json={"server": "second", "add": "00:30:00"}
    )
    assert extended.status_code == 200, extended.text
    [limit] = [
        line.split("|")[0] for line in user_jobs("alice", "%l|%k") if line.endswith("second")
    ]
    assert limit == "8:30:00"
    unknown = alice.post(
        f"{hub.url}/hub/gpuportal/extend", json={"server": "nope", "add": "01:00:00"}
    )
    assert (
        unknown.status_code == 404 and unknown.json()["error"] == "you have no session named 'nope'"
    )

    card(page, "second").locator(".gp-stop").click()
    card(page, "second").locator(".gp-stop-confirm").click()
    card(page, "second").locator(".gp-start").wait_for(timeout=60_000)
    assert not [line for line in user_jobs("alice", "%k") if line.endswith(":second")]
    assert card(page).locator(".gp-state", has_text="Running").count() == 1
