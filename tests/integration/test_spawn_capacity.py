"""The spawn form sees the cluster (issue 11, 1): free GPUs, and whether each profile starts now,
kept current while the page stays open. Real Slurm, real hub, Chromium."""

from __future__ import annotations

import json
import re
import subprocess
import time
from typing import Any

import pytest

from gpuportal_core.capacity import gpus_in
from tests.integration.conftest import Hub, user_jobs, wait_for
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
    # The time, with the day's name when it is another day than today (a run near midnight).
    assert re.search(
        r"GPUs busy: expected start about (\w{3} )?\d\d:\d\d \(in (9|10) min\)", lines["gpu-4"]
    )
    assert "Free GPUs in gpu: 0 of 4 a100, 0 of 4 h100." in page.inner_text("#gp-free")

    subprocess.run(["scancel", *blockers], check=True)
    # No reload: the page asks the hub again by itself (shared snapshot, 10 s TTL).
    wait_for(lambda: capacity_lines(page)["gpu-4"] == "Starts now", 40, "the form to see free GPUs")
    assert "Free GPUs in gpu: 4 of 4 a100, 4 of 4 h100." in page.inner_text("#gp-free")


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


def test_the_waiting_page_says_the_place_in_line_and_the_expected_start_at_once(
    hub: Hub, clean: None
) -> None:
    blockers = fill_gpus("gpu01", "gpu02")
    wait_for(lambda: all(state_of(j) == "RUNNING" for j in blockers), 30, "the GPUs to fill")
    alice = hub.login("alice")
    begun = time.monotonic()
    answer = hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-4"}}
    )
    assert answer.status_code in (201, 202), answer.text
    url = f"{hub.url}/hub/api/users/alice/server/progress"
    seen: list[dict[str, Any]] = []
    with alice.get(url, stream=True, timeout=30) as stream:
        for line in stream.iter_lines(decode_unicode=True):
            if line and line.startswith("data:"):
                seen.append(json.loads(line[5:]))
                if "waiting for partition gpu" in seen[-1].get("message", ""):
                    break
    took = time.monotonic() - begun
    message, percent = seen[-1]["message"], seen[-1]["progress"]
    assert took < 5, f"{took:.1f} s before the waiting page said where the job stands"
    assert re.fullmatch(
        # Slurm's reason is "None" until its scheduler has looked at the job.
        r"Job \d+ is queued: waiting for (GPUs to become free|the scheduler to place it)\. "
        r"1st of 1 waiting for partition "
        r"gpu\. Expected start about (\w{3} )?\d\d:\d\d \(in (9|10) min, [^)]+\)\. "
        r"Waiting \d+ s so far\.",
        message,
    ), message
    assert 15 <= percent <= 20, percent


# Records notifications where the test can read them after the page moves on to JupyterLab,
# and plays a user who allowed them and switched to another tab.
NOTIFICATION_STUB = """
Object.defineProperty(document, "hidden", {get: () => true});
window.Notification = function (title) {
  var seen = JSON.parse(localStorage.getItem("gp-notes") || "[]");
  seen.push(title);
  localStorage.setItem("gp-notes", JSON.stringify(seen));
};
window.Notification.permission = "granted";
window.Notification.requestPermission = () => Promise.resolve("granted");
"""


def test_the_waiting_page_follows_the_queue_and_notifies_when_ready(
    hub: Hub, clean: None, browser: Any
) -> None:
    blockers = fill_gpus("gpu01", "gpu02")
    wait_for(lambda: all(state_of(j) == "RUNNING" for j in blockers), 30, "the GPUs to fill")
    context = browser.new_context()
    context.add_init_script(NOTIFICATION_STUB)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", "alice")
    page.fill("#password_input", "alice-demo")
    page.click("#login_submit")
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-4]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/spawn-pending/**")
    assert page.inner_text("#gp-pending-title") == "Your session is on its way."
    page.wait_for_selector("#progress-message:has-text('1st of 1 waiting for partition gpu')")
    assert "Expected start about" in page.inner_text("#progress-message")

    subprocess.run(["scancel", *blockers], check=True)
    page.wait_for_url("**/user/alice/lab**")
    assert json.loads(page.evaluate("localStorage.getItem('gp-notes')")) == ["JupyterLab is ready"]
    context.close()


def test_spawn_by_url_with_opt_parameters_is_checked_like_the_form(hub: Hub, clean: None) -> None:
    """JupyterHub 6: /hub/spawn?opt-profile=...&opt-runtime=... (issue 11, 4)."""
    bob = hub.login("bob")
    bad = bob.get(f"{hub.url}/hub/spawn?opt-profile=gpu-2&opt-runtime=99:00:00", timeout=60)
    assert bad.status_code == 400
    assert "runtime 99:00:00 is over the maximum of 24:00:00 (24 h) for profile gpu-2" in bad.text
    assert user_jobs("bob") == []
    assert "Traceback" not in hub.log_tail(30)  # a refusal, logged as one line
    good = bob.get(f"{hub.url}/hub/spawn?opt-profile=gpu-2&opt-runtime=01:30:00", timeout=60)
    assert good.status_code == 200
    hub.wait_ready(bob, "bob")
    [job] = user_jobs("bob", "%b|%l")
    gres, limit = job.split("|")
    # As the Slurm layer reads it: 22.05 prints "gres:gpu:2", 23.02 and newer "gres/gpu:2".
    assert gpus_in(gres) == ("", 2) and limit == "1:30:00", job


@pytest.mark.parametrize("server", ["", "extra"])
def test_a_refused_form_comes_back_as_it_was_sent_with_the_error_at_the_field(
    hub: Hub, clean: None, browser: Any, server: str
) -> None:
    """Issue 11, 4 and 5: the form as sent, the message at the runtime, one log line."""
    page = log_in(browser, hub, "bob", "bob-demo")
    page.goto(f"{hub.url}/hub/spawn/bob/{server}".rstrip("/"))
    page.check("input[name=profile][value=gpu-4]")
    page.fill("#gp-runtime", "00:00:30")  # the page checks the maximum; the minimum is the hub's
    page.click("#spawn_form button[type=submit]")
    error = page.locator("#gp-runtime-error")
    error.wait_for()
    assert error.inner_text() == "runtime must be at least 00:01:00"
    assert page.is_checked("input[name=profile][value=gpu-4]")
    assert page.input_value("#gp-runtime") == "00:00:30"
    assert page.get_attribute("#gp-runtime", "aria-invalid") == "true"
    assert user_jobs("bob") == []
    log = hub.log_tail(30)
    assert "refused (invalid_options): runtime must be at least 00:01:00" in log
    assert "Traceback" not in log
    page.context.close()
