"""Issue 34: the journeys' second hour, end to end in Chromium: alice's working session (the
launcher's terminal, VS Code, the TensorBoard page, Extend, a job with its output and use, a
mistake on the jobs form), carol's admin pages (the audit, the API docs' Try it out), and
nothing goes wrong that the user did not cause: no console error, no failed request, no 4xx or
5xx, and no version warning from JupyterLab's extensions (item 17)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, cancel_user_jobs, wait_for
from tests.integration.first_hour.test_journeys import Trouble
from tests.integration.jobs import install_job_files
from tests.integration.second_hour.test_api_docs import try_it
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


class Warned(Trouble):
    """Trouble, and the console's warnings of mismatched shared modules (JupyterLab's)."""

    def watch(self, page: Any) -> Any:
        page.on(
            "console",
            lambda m: (
                self.seen.append(f"console {m.type}: {m.text}")
                if m.type == "warning" and "Unsatisfied version" in m.text
                else None
            ),
        )
        return super().watch(page)


def _vscode_waited_for_github(seen: str) -> bool:
    # VS Code waits 5 s for its built-in GitHub sign-in provider to register when it starts
    # and logs this when it is later: seen once in a clean-clone make test, on the 2-core
    # machine running both lanes and the Debian 13 install. Nothing the user sees changes, and
    # a cluster without internet has no GitHub to sign in to; any other error still fails.
    return "Timed out waiting for authentication provider 'github' to register" in seen


def test_the_second_hour_has_no_console_error_and_no_failed_request(
    hub: Hub, clean: None, browser: Any
) -> None:
    install_job_files("alice")
    cancel_user_jobs("alice")
    trouble = Warned()
    alice = trouble.watch(
        log_in(browser, hub, "alice", "alice-demo", viewport={"width": 1400, "height": 900})
    )
    alice.set_default_timeout(120_000)
    alice.goto(f"{hub.url}/hub/spawn")
    alice.check("input[name=profile][value=gpu-1]")
    alice.click("#spawn_form button[type=submit]")
    alice.wait_for_url("**/user/alice/lab**")
    alice.goto(f"{hub.url}/user/alice/lab?reset")
    # VS Code from its tile, in a tab of its own; then the terminal (it replaces the launcher).
    with alice.context.expect_page() as opened:
        alice.click(".jp-LauncherCard:has-text('VS Code')")
    in_code = Warned()  # VS Code's own: checked while it is in use (below)
    code = in_code.watch(opened.value)
    code.set_default_timeout(120_000)
    code.wait_for_selector(".explorer-folders-view :text('templates')")
    code.wait_for_timeout(3000)  # what it asks after the workbench shows (marketplace, vsda)
    assert [seen for seen in in_code.seen if not _vscode_waited_for_github(seen)] == []
    # Closed now: as its tab closes VS Code logs errors of its own ("Long running operations
    # during shutdown are unsupported in the web"), and with the session stopped, its
    # reconnection's; neither is a fault here.
    code.close()
    alice.click(".jp-LauncherCard[title='Start a new terminal session']")
    alice.wait_for_selector(".jp-Terminal .xterm-helper-textarea", state="attached")
    alice.goto(f"{hub.url}/user/alice/tensorboard/")
    alice.wait_for_selector("#nav-lab")

    # Extend on the home page, and it says so.
    alice.goto(f"{hub.url}/hub/home")
    card = alice.locator('.gp-card[data-server=""]')
    card.locator(".gp-state", has_text="Running").wait_for()
    card.locator(".gp-extend").click()
    card.locator(".gp-card-note").wait_for()

    # A mistake on the jobs form (said at the field, a 422 the user caused: not counted), then
    # a job, its output and what it used.
    alice.goto(f"{hub.url}/services/portal/jobs")
    alice.fill("#name", "second-hour")
    alice.check("#what-command")
    alice.select_option("#launcher", "srun")
    alice.fill("#command", "srun hostname")
    alice.click("#preview")
    alice.wait_for_selector("#error-command:has-text('leave out')")
    caused = [line for line in trouble.seen if "422" in line]
    assert len(caused) == 2, trouble.seen  # the answer, and the console's line about it
    for line in caused:
        trouble.seen.remove(line)
    alice.fill("#command", "hostname")
    alice.click("#submit")
    row = alice.locator("#jobs tbody tr:has-text('second-hour')")
    row.locator("td.gp-state:has-text('Completed')").wait_for()
    row.locator("button:has-text('Output')").click()
    wait_for(lambda: "gpu0" in alice.inner_text("#job-detail"), 30, "the job's output")
    alice.wait_for_timeout(2000)  # the use: asked only once known

    # Stop from the card.
    alice.goto(f"{hub.url}/hub/home")
    card.locator(".gp-stop").click()
    card.locator(".gp-stop-confirm").click()
    card.locator(".gp-state", has_text="Not running").wait_for(timeout=60_000)

    # carol: the audit a page at a time, the API docs' Try it out with her login.
    carol = trouble.watch(log_in(browser, hub, "carol", "carol-demo"))
    carol.goto(f"{hub.url}/services/portal/admin/audit?user=alice")
    carol.wait_for_selector("#events")
    carol.goto(f"{hub.url}/services/portal/docs")
    carol.wait_for_selector("#swagger-ui .opblock")
    status, body = try_it(carol, "GET", "/api/usage/waste")
    assert status == "200", body

    carol.wait_for_timeout(1000)  # answers still on their way
    assert trouble.seen == []
