"""Issue 34, item 16: words that said the wrong thing. In Chromium, as alice: the waiting
page's address carries no form token; a cancelled job shows no "exit code 0"; a job that wrote
nothing says so once it has ended, not "(no output yet)"; the Remove dialog names the job by
its Slurm number, as its row does. (The card's "Time left ... left": test_session_cards; the
OAuth page's words: test_shared_tensorboard.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, cancel_user_jobs, user_jobs, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def test_the_waiting_page_address_has_no_form_token(hub: Hub, clean: None, browser: Any) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    seen: list[str] = []
    page.on("framenavigated", lambda frame: seen.append(frame.url))
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/alice/lab**", timeout=120_000)
    pending = [url for url in seen if "/hub/spawn-pending/" in url]
    assert pending, seen
    assert not [url for url in seen if "_xsrf" in url], seen


def submit(page: Any, name: str, command: str) -> Any:
    page.fill("#name", name)
    page.check("#what-command")
    page.select_option("#launcher", "srun")
    page.fill("#nodes", "1")
    page.fill("#command", command)
    page.click("#submit")
    return page.locator(f"#jobs tbody tr:has-text('{name}')")


def test_cancelled_and_silent_jobs_in_plain_words(hub: Hub, browser: Any) -> None:
    cancel_user_jobs("alice")
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/services/portal/jobs")

    silent = submit(page, "says-nothing", "true")
    silent.locator("td.gp-state:has-text('Completed')").wait_for(timeout=90_000)
    silent.locator("button:has-text('Output')").click()
    page.wait_for_selector("#detail-box:not([hidden])")
    wait_for(lambda: page.inner_text("#job-detail") == "(it wrote no output)", 20, "the words")

    long = submit(page, "cancel-me", "sleep 300")
    wait_for(lambda: user_jobs("alice", "%T") == ["RUNNING"], 60, "the job to run")
    slurm_id = user_jobs("alice", "%i")[0]
    # Cancel asks first, as a session's Stop does (issue 54, item 13), naming the job.
    cancel_asked: list[str] = []
    page.once("dialog", lambda dialog: (cancel_asked.append(dialog.message), dialog.accept()))
    long.locator("button:has-text('Cancel')").click()
    wait_for(lambda: cancel_asked, 10, "the Cancel dialog")
    assert cancel_asked == [f"Cancel cancel-me (Slurm job {slurm_id})? Slurm ends it now."]
    state = long.locator("td.gp-state")
    state.filter(has_text="Cancelled").wait_for(timeout=60_000)
    assert "exit code" not in state.inner_text(), state.inner_text()

    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", answer)
    long.locator("button:has-text('Remove')").click()
    wait_for(lambda: asked, 10, "the Remove dialog")
    assert asked == [
        f"Remove job cancel-me (Slurm job {slurm_id}) from your list? Its output file stays."
    ]
