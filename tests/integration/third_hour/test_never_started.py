"""Issue 54, item 14: opening a named session's spawn page (/hub/spawn/USER/NAME) without
starting it left a server NAME in the user's model for good (JupyterHub makes the record when
the form is shown). The spawn-resumer service removes such a record at its second look (here
30 s apart: ten of the test hub's 3 s polls); one started meanwhile is kept."""

from __future__ import annotations

import pytest

from tests.integration.conftest import Hub, wait_for
from tests.integration.third_hour.conftest import USER

pytestmark = pytest.mark.integration


def test_a_spawn_page_only_looked_at_leaves_no_server(hub: Hub, clean: None) -> None:
    user = hub.login(USER)

    def servers() -> set[str]:
        model = hub.api(user, "GET", f"/users/{USER}?include_stopped_servers=1").json()
        return set(model["servers"])

    page = user.get(f"{hub.url}/hub/spawn/{USER}/looked-at", timeout=60)
    assert page.status_code == 200 and "spawn_form" in page.text
    assert "looked-at" in servers()  # JupyterHub's record, made as the form was shown
    wait_for(lambda: "looked-at" not in servers(), 120, "the never-started record to go")
