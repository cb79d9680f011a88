"""Issue 34, item 6: the Dask notebook's dashboard address is a link that opens the dashboard.
In Chromium, as erin (second lane): the notebook's first cell starts two Slurm workers; the
link in its output opens the dashboard's status page through the hub."""

from __future__ import annotations

from typing import Any

import pytest

from tests.hubproc import SECOND_LANE_USERS
from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

NOTEBOOK = "templates/06-dask-on-slurm.ipynb"


def test_the_dashboard_address_opens_the_dashboard(
    second_lane_hub: Hub, second_lane_clean: None, browser: Any
) -> None:
    hub = second_lane_hub
    page = log_in(browser, hub, "erin", SECOND_LANE_USERS["erin"])
    page.set_default_timeout(180_000)
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/erin/lab**")
    page.goto(f"{hub.url}/user/erin/lab/tree/{NOTEBOOK}")
    page.wait_for_selector("#jp-main-statusbar :text('PyTorch | Idle')")
    page.locator(".jp-CodeCell").first.click()
    page.keyboard.press("Shift+Enter")  # the first cell: the cluster, two workers, the link
    link = page.locator(".jp-OutputArea-output a[href*='/dask-dashboard/']")
    link.wait_for()
    href = link.get_attribute("href") or ""
    assert href.startswith("/user/erin/dask-dashboard/") and href.endswith("/status"), href
    assert link.inner_text() == href
    with page.context.expect_page() as opened:
        link.click()
    dashboard = opened.value
    dashboard.wait_for_load_state()
    assert dashboard.url == hub.url + href
    # Dask's own page: its menu of plots is there.
    dashboard.wait_for_selector("a[href='individual-task-stream']", state="attached")
    assert "Dask" in dashboard.title(), dashboard.title()
