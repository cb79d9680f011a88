"""Issue 54, items 2 and 4: the Jobs page offers what the cluster has and says its errors where
they can be read. In Chromium, as erin: the partition is a choice of the cluster's, the GPU
kind's suggestions are the chosen partition's kinds (they were the MIG kinds only), torchrun
picks the environment that has it (the first session tutorial's job failed with `execve():
torchrun: No such file or directory`), and "A script" without a path is said at the script (it
was said under the hidden command field, so Submit seemed to do nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.hubproc import PASSWORDS
from tests.integration.conftest import Hub, user_jobs
from tests.integration.test_live_profiles import log_in
from tests.integration.third_hour.conftest import USER

pytestmark = pytest.mark.integration


def suggested_kinds(page: Any) -> list[str]:
    return page.eval_on_selector_all("#gpu-kinds option", "options => options.map(o => o.value)")


def test_the_jobs_form_offers_the_clusters_choices(hub: Hub, clean: None, browser: Any) -> None:
    page = log_in(browser, hub, USER, PASSWORDS[USER])
    page.goto(f"{hub.url}/services/portal/jobs")

    # The partitions as sinfo has them, the portal's default first and chosen.
    partitions = page.eval_on_selector_all("#partition option", "os => os.map(o => o.value)")
    assert partitions[0] == "lane" and {"gpu", "mig"} <= set(partitions), partitions
    assert page.input_value("#partition") == "lane"
    page.select_option("#partition", "gpu")
    assert suggested_kinds(page) == ["a100", "h100"]
    page.select_option("#partition", "mig")
    assert suggested_kinds(page) == ["1g.10gb", "3g.40gb"]

    # torchrun comes with PyTorch: the form picks it, and says so under the launcher.
    page.select_option("#launcher", "torchrun")
    assert page.eval_on_selector("#env-kind", "s => s.selectedOptions[0].textContent").startswith(
        "PyTorch"
    )
    assert "It runs in PyTorch, which has torchrun." in page.inner_text("#launcher-help")
    page.select_option("#launcher", "srun")
    assert page.eval_on_selector("#env-kind", "s => s.selectedIndex") == 0

    # A script without its path: said at the script field, which is the one shown.
    page.check("#what-script")
    page.fill("#script", "")
    page.click("#submit")
    page.wait_for_selector("#error-script:has-text('a script')")
    assert page.inner_text("#error-script") == "give a command to run, or a script"
    assert user_jobs(USER) == []
    page.context.close()
