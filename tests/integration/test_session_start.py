"""What a session's server loads before it answers, and what after (issue 41: three seconds from
Start to the file browser): Dask's server extension loads after the start
(gpuportal_session.deferred_extensions), and the Dask panel's requests are answered all the same,
also those that come before it has loaded."""

from __future__ import annotations

import time
from pathlib import Path

import requests

from tests.integration.conftest import Hub, user_jobs, wait_for
from tests.integration.test_environment_spawn import spawn


def session_log(user: str) -> str:
    job = user_jobs(user, "%i")[0]
    return Path(f"~{user}/.jupyterhub-logs/jupyter-{job}.log").expanduser().read_text()


def test_the_dask_panel_is_answered_while_its_extension_loads_after_the_start(
    hub: Hub, clean: None
) -> None:
    alice = hub.login("alice")
    token = hub.api(alice, "POST", "/users/alice/tokens", json={"note": "dask panel"}).json()
    spawn(hub, alice, "session")
    ready = time.monotonic()
    # Right after the start: the request waits for the extension, then is sent to it (307).
    answer = requests.get(
        f"{hub.url}/user/alice/dask/clusters",
        headers={"Authorization": f"token {token['token']}"},
        timeout=60,
    )
    waited = time.monotonic() - ready
    assert answer.status_code == 200, answer.text
    assert answer.json() == []
    assert [r.status_code for r in answer.history] in ([307], []), answer.history
    if answer.history:
        assert waited > 1, "a request sent on although the extension was not there yet"

    log = session_log("alice")
    before, _, after = log.partition("is running at")
    assert "dask_labextension" not in before
    wait_for(
        lambda: "dask_labextension | extension loaded after the start" in session_log("alice"),
        30,
        "the Dask extension to load",
    )
    assert "extension failed" not in after
