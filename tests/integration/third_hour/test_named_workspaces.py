"""Issue 54, item 12: a named session opens its own JupyterLab layout, not the default
session's (it reopened the default's tabs, with an Untitled.ipynb asking for a kernel)."""

from __future__ import annotations

import pytest

from tests.hubproc import wait_for
from tests.integration.conftest import Hub
from tests.integration.third_hour.conftest import USER

pytestmark = pytest.mark.integration

LAYOUT = {
    "data": {"layout-restorer:data": {"main": {"current": "notebook:Untitled.ipynb"}}},
    "metadata": {"id": "default"},
}


def test_a_named_session_has_a_layout_of_its_own(hub: Hub, clean: None) -> None:
    user = hub.login(USER)
    token = hub.api(user, "POST", f"/users/{USER}/tokens", json={"note": "layout"}).json()
    headers = {"Authorization": f"token {token['token']}"}
    options = {"user_options": {"profile": "gpu-1"}}

    def workspace(server: str) -> dict[str, object]:
        base = f"{hub.url}/user/{USER}/{server + '/' if server else ''}lab/api/workspaces/default"
        answer = user.get(base, headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
        data: dict[str, object] = answer.json()["data"]
        return data

    assert hub.api(user, "POST", f"/users/{USER}/server", json=options).status_code in (201, 202)
    hub.wait_ready(user, USER)
    saved = user.put(
        f"{hub.url}/user/{USER}/lab/api/workspaces/default", json=LAYOUT, headers=headers,
        timeout=30,
    )  # fmt: skip
    assert saved.status_code == 204, saved.text
    assert workspace("") == LAYOUT["data"]

    path = f"/users/{USER}/servers/second"
    assert hub.api(user, "POST", path, json=options).status_code in (201, 202)

    def second_ready() -> bool:
        model = hub.api(user, "GET", f"/users/{USER}").json()
        return bool(model["servers"].get("second", {}).get("ready"))

    wait_for(second_ready, 120, "the named session to be ready")
    assert workspace("second") == {}  # its own, empty at first
    assert workspace("") == LAYOUT["data"]  # the default session's is kept
    hub.stop_all(user, USER)
