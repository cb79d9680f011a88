"""The hub is served over HTTPS with the demo CA's certificate, plain HTTP redirects to it,
cookies are Secure, HSTS is sent, and no page warns of an unsecured connection (issue 33, 2).
Every other test reaches the hub over the same HTTPS (tests/hubproc.py), trusting the demo CA as
a site's users trust the site's: requests through its bundle, Chromium through its own store
(deploy/local/https.sh trust)."""

from __future__ import annotations

import socket
import ssl
from typing import Any

import certifi
import pytest
import requests

from tests.hubproc import DEMO_CA, PASSWORDS, Hub

pytestmark = pytest.mark.integration

# The public CAs alone (certifi's list): the machine's own store has the demo CA (https.sh make
# adds it, as a site adds its CA to its hosts).
PUBLIC_CAS = certifi.where()


def test_the_hub_speaks_tls_with_a_certificate_of_the_demo_ca(hub: Hub) -> None:
    assert hub.url.startswith("https://127.0.0.1:")
    context = ssl.create_default_context(cafile=str(DEMO_CA))
    with (
        socket.create_connection(("127.0.0.1", hub.port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
        names = [value for _, value in tls.getpeercert()["subjectAltName"]]
    assert {"127.0.0.1", "localhost", "hub"} <= set(names)
    # The site's name and every user's subdomain of it, as JupyterHub's subdomain_host needs
    # (issue 68): a wildcard, as a site's CA issues one.
    assert {"hub.example.org", "*.hub.example.org"} <= set(names), names
    # A client that does not trust the demo CA is refused: it is a real check, not a pass-all.
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(f"{hub.url}/hub/login", verify=PUBLIC_CAS, timeout=10)


def test_plain_http_redirects_to_https(hub: Hub) -> None:
    answer = requests.get(
        f"http://127.0.0.1:{hub.redirect_port}/hub/login?next=%2Fhub%2Fhome",
        allow_redirects=False,
        timeout=10,
    )
    assert answer.status_code in (301, 302, 307, 308), answer.status_code
    assert answer.headers["Location"] == f"{hub.url}/hub/login?next=%2Fhub%2Fhome"


def test_cookies_are_secure_and_hsts_is_sent(hub: Hub) -> None:
    session = requests.Session()
    page = session.get(f"{hub.url}/hub/login", timeout=10)
    assert page.headers["Strict-Transport-Security"].startswith("max-age=")
    login = session.post(
        f"{hub.url}/hub/login",
        data={
            "username": "alice",
            "password": PASSWORDS["alice"],
            "_xsrf": session.cookies.get("_xsrf", ""),
        },
        allow_redirects=False,
        timeout=30,
    )
    assert login.status_code == 302
    set_cookies = [c for c in login.raw.headers.getlist("Set-Cookie") if "=;" not in c]
    assert set_cookies and all("; Secure" in cookie for cookie in set_cookies), set_cookies
    portal = session.get(f"{hub.url}/services/portal/jobs", timeout=30)
    assert portal.status_code == 200
    assert portal.headers["Strict-Transport-Security"].startswith("max-age=")
    assert all(cookie.secure for cookie in session.cookies), [
        (cookie.name, cookie.secure) for cookie in session.cookies
    ]


def test_the_login_page_shows_no_unsecured_connection_warning(hub: Hub, browser: Any) -> None:
    page = browser.new_page()
    try:
        answer = page.goto(f"{hub.url}/hub/login")
        assert answer is not None and answer.ok
        assert page.evaluate("window.isSecureContext") is True
        page.wait_for_load_state("networkidle")
        warning = page.locator("#insecure-login-warning")
        assert warning.count() == 0 or not warning.is_visible()
        assert "unsecured" not in page.inner_text("body")
    finally:
        page.close()
