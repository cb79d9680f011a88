"""The session's TensorBoard page: the product's look and navigation, the folder picker, and
the way back from a closed board."""

from __future__ import annotations

from pathlib import Path

import pytest
from werkzeug.test import Client

from gpuportal_session import tensorboard_page


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Client:
    home = tmp_path / "home"
    (home / "runs" / "exp1").mkdir(parents=True)
    (home / "runs" / "exp1" / "events.out.tfevents.1.node").write_bytes(b"")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GPUPORTAL_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("JUPYTERHUB_BASE_URL", "/")
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/alice/")
    monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    return Client(tensorboard_page.app)


def test_the_page_has_the_products_navigation_and_a_folder_picker(client: Client) -> None:
    response = client.get("/")
    text = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    # The hub's stylesheet and dark mode, and the way back to JupyterLab and to the hub.
    assert 'href="/hub/static/css/style.min.css"' in text
    assert 'src="/hub/static/js/darkmode.js"' in text
    assert 'id="nav-lab" href="/user/alice/lab"' in text
    assert 'href="/hub/home"' in text and 'href="/services/portal/jobs"' in text
    # The runs folder is offered with one click, its form carrying the page's token.
    assert f'name="logdir" value="{Path.home()}/runs"' in text
    assert "1 run · updated just now" in text
    assert text.count(tensorboard_page.FORM_TOKEN) >= 2
    assert "None yet." in text


def test_a_closed_board_leads_back_to_the_page(client: Client) -> None:
    response = client.get("/view/7")
    assert response.status_code == 303 and response.headers["Location"] == "../"


def test_an_empty_folder_name_is_refused_in_words(client: Client) -> None:
    token = tensorboard_page.FORM_TOKEN
    response = client.post("/open", data={"token": token, "logdir": "  "})
    assert response.status_code == 400 and "Name a folder." in response.get_data(as_text=True)
