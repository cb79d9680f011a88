"""The other way a site puts HTTPS in front (issue 33, 2): nginx with the site's certificate,
the hub on plain HTTP behind it on loopback. deploy/nginx/gpuportal.conf, the file the docs
print, runs here with only its names, ports and files changed; through it a user logs in, gets
Secure cookies and HSTS, starts a session and runs code over the kernel's websocket."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from bench.kernel_trip import Kernel
from tests.hubproc import HUB_TLS_CERT, REPO, Hub, state_dir, wait_for
from tests.integration.conftest import cancel_user_jobs

pytestmark = pytest.mark.integration

HUB_PORT = 8700  # the hub behind nginx: plain HTTP on loopback
HTTPS_PORT, HTTP_PORT = 8743, 8780
SITE = REPO / "deploy" / "nginx" / "gpuportal.conf"
USER = "bob"


def site_config(folder: Path) -> str:
    """The documented file, for this machine: names, ports and files only."""
    text = SITE.read_text()
    for old, new in (
        ("/etc/ssl/certs/portal.example.org.pem", str(folder / "site.crt")),
        ("/etc/ssl/private/portal.example.org.key", str(folder / "site.key")),
        ("portal.example.org", "127.0.0.1"),
        ("listen 443 ssl;", f"listen 127.0.0.1:{HTTPS_PORT} ssl;"),
        ("listen 80;", f"listen 127.0.0.1:{HTTP_PORT};"),
        ("https://$host$request_uri", f"https://$host:{HTTPS_PORT}$request_uri"),
        ("http://127.0.0.1:8000", f"http://127.0.0.1:{HUB_PORT}"),
    ):
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.fixture
def nginx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not shutil.which("nginx"):
        pytest.fail("nginx is missing (deploy/local/install.sh --test installs it)")
    folder = Path(tmp_path_factory.mktemp("nginx"))
    shutil.copy(HUB_TLS_CERT, folder / "site.crt")
    shutil.copy(HUB_TLS_CERT.with_suffix(".key"), folder / "site.key")
    (folder / "site.conf").write_text(site_config(folder))
    (folder / "nginx.conf").write_text(
        f"pid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
        "events {}\n"
        f"http {{\n access_log off;\n client_body_temp_path {folder}/body;\n"
        f" proxy_temp_path {folder}/proxy;\n include {folder}/site.conf;\n}}\n"
    )
    subprocess.run(["nginx", "-t", "-p", str(folder), "-c", str(folder / "nginx.conf")],
                   check=True, capture_output=True, timeout=30)  # fmt: skip
    subprocess.run(["nginx", "-p", str(folder), "-c", str(folder / "nginx.conf")],
                   check=True, capture_output=True, timeout=30)  # fmt: skip
    try:
        yield folder
    finally:
        subprocess.run(["nginx", "-p", str(folder), "-c", str(folder / "nginx.conf"), "-s", "quit"],
                       capture_output=True, timeout=30)  # fmt: skip


@pytest.fixture
def hub_behind_nginx(cluster: None, nginx: Path) -> Iterator[Hub]:
    cancel_user_jobs(USER)
    env = {"PORTAL_HUB_ID": "test-nginx", "PORTAL_PUBLIC_TLS_CERT": "", "PORTAL_TLS_IN_FRONT": "1"}
    instance = Hub(state_dir("nginx"), HUB_PORT, env=env, public_tls=False)
    # Every request of the test, the hub's start check included, goes through nginx.
    instance.url = f"https://127.0.0.1:{HTTPS_PORT}"
    instance.start()
    try:
        yield instance
    finally:
        instance.stop()
        cancel_user_jobs(USER)


def test_a_session_through_nginx(hub_behind_nginx: Hub) -> None:
    hub = hub_behind_nginx
    redirect = requests.get(f"http://127.0.0.1:{HTTP_PORT}/hub/login", allow_redirects=False)
    assert redirect.status_code == 301
    assert redirect.headers["Location"] == f"{hub.url}/hub/login"

    session = hub.login(USER)
    assert all(cookie.secure for cookie in session.cookies), list(session.cookies)
    home = session.get(f"{hub.url}/hub/home", timeout=30)
    assert home.status_code == 200
    assert home.headers["Strict-Transport-Security"] == "max-age=31536000"

    started = hub.api(session, "POST", f"/users/{USER}/server", json={"user_options": {}})
    assert started.status_code in (201, 202), started.text
    hub.wait_ready(session, USER)
    token = hub.api(session, "POST", f"/users/{USER}/tokens", json={}).json()["token"]
    kernel = Kernel(hub.url, USER, token)  # its channels over wss:// through nginx
    try:
        assert kernel.result("6 * 7") == "42"
    finally:
        kernel.close()
    hub.stop_server(session, USER)
    wait_for(lambda: hub.server(session, USER) is None, 60, "the session to stop")
