"""Single sign-on: the hub signs users in through a real identity provider (LemonLDAP::NG on the
host `sso`, deploy/local/sso.sh) with their LDAP password and a TOTP code; LDAP stays the
directory. A hub of this module's own with PORTAL_LOGIN=sso (the other tests' hubs use the
password form), its own port (registered with the provider) and hub id.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from tests.hubproc import LOCAL_STATE, REPO, Hub, state_dir, wait_for
from tests.integration.conftest import cancel_user_jobs
from tests.integration.test_docs_screenshots import folder
from tests.integration.test_preflight import preflight
from tests.sso import (
    PASSWORDS,
    PROVIDER,
    SSO_SH,
    code,
    forget_failed_sign_ins,
    sign_in,
    sign_in_in_browser,
    start_provider,
    submit_form,
    wrong_code,
)

PORT = 8250  # sso.sh registers https://127.0.0.1:8250/hub/oauth_callback with the provider
HOSTS_SH = REPO / "deploy" / "local" / "hosts.sh"
PORTAL = "/services/portal"
# The docs' screenshots of single sign-on (docs/how-to/sso.md; test_docs_screenshots names them).
SSO_SHOTS = (
    "sso-login-light.png",
    "sso-code-light.png",
    "sso-refused-light.png",
    "sso-signed-out-light.png",
)


@pytest.fixture(scope="module")
def sso_hub(cluster: None) -> Iterator[Hub]:
    start_provider()
    cancel_user_jobs("alice")
    hub = Hub(state_dir("sso"), PORT, env={"PORTAL_LOGIN": "sso", "PORTAL_HUB_ID": "test-sso"})
    hub.start()
    yield hub
    hub.stop()
    cancel_user_jobs("alice")


def audit_records(hub: Hub) -> list[dict[str, Any]]:
    path = hub.state / "audit" / "audit-hub.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def audited_refusal(hub: Hub, user: str) -> dict[str, Any]:
    """The hub's latest login_failed record of the user, waited for (the provider's log is
    read every 2 s)."""

    def refusals() -> list[dict[str, Any]]:
        return [
            r
            for r in audit_records(hub)
            if r.get("action") == "login_failed" and r.get("user") == user
        ]

    wait_for(refusals, 15, f"a refusal of {user} in the hub's audit stream")
    return refusals()[-1]


def sign_in_page(
    browser: Any, hub: Hub, user: str, totp: str | None = None, shots: Path | None = None
) -> Any:
    """A fresh browser context through the hub's login button, the provider's password form
    and its TOTP form; the page wherever that ends. page.hosts: every host it asked. With
    shots: the hub's login page and the provider's code form, as the docs show them."""
    page = browser.new_context(viewport={"width": 1100, "height": 640}).new_page()
    page.set_default_timeout(30_000)
    page.hosts = set()
    page.on("request", lambda request: page.hosts.add(urlsplit(request.url).hostname))
    paths = [shots / name for name in SSO_SHOTS[:2]] if shots else None
    sign_in_in_browser(page, hub.url, user, totp, paths)
    page.wait_for_load_state()
    return page


def test_alice_signs_in_with_password_and_code_and_lands_on_the_hub(
    sso_hub: Hub, browser: Any, tmp_path: Path
) -> None:
    started = time.monotonic()
    page = sign_in_page(browser, sso_hub, "alice", shots=folder(tmp_path))
    page.wait_for_url(f"{sso_hub.url}/hub/**")
    took = time.monotonic() - started
    assert "/hub/spawn" in page.url or "/hub/home" in page.url, page.url
    # The hub's pages and the provider's loaded nothing from elsewhere (no CDN).
    assert page.hosts == {"127.0.0.1", "sso.example.org"}, page.hosts
    assert page.inner_text("#gp-nav-user, .navbar", timeout=10_000).count("alice") >= 1
    # Her hub session works for the portal too (the hub's OAuth, no second sign-in).
    page.goto(f"{sso_hub.url}{PORTAL}/jobs")
    assert "alice" in page.inner_text("body")
    login = [
        r for r in audit_records(sso_hub) if r.get("action") == "login" and r.get("user") == "alice"
    ]
    assert login and login[-1].get("via") == "sso" and "ds" in login[-1].get("groups", [])
    print(f"\n[sso] alice: login button to the hub, password and TOTP code included: {took:.1f} s")
    page.context.close()


# The refusals are tried by users the other tests do not sign in (erin, bob): the provider's
# brute-force protection holds a user back for 30 s after three failures within 20 minutes (a
# wrong code counts twice), so each test first clears its user's failures of an earlier run.


def test_a_wrong_code_is_refused_by_the_provider(sso_hub: Hub, browser: Any) -> None:
    forget_failed_sign_ins("erin")
    page = sign_in_page(browser, sso_hub, "erin", totp=wrong_code("erin"))
    # The provider keeps her: no redirect to the hub, and the hub has no session for her.
    assert page.url.startswith(PROVIDER), page.url
    said = page.inner_text("body")
    page.goto(f"{sso_hub.url}/hub/home")
    assert "/hub/login" in page.url, (page.url, said)
    page.context.close()
    # The provider's log says so, and the hub audits it as a failed login (provider_log).
    refused = audited_refusal(sso_hub, "erin")
    assert refused["why"] == "second factor refused"


def test_after_a_wrong_code_try_again_leads_back_to_the_hub(
    sso_hub: Hub, browser: Any, tmp_path: Path
) -> None:
    """Issue 54, item 11: the provider's refusal offered only "Go to portal", its own menu;
    its button now reads "Try again" and keeps the hub's sign-in request. frank: no other
    test of this module refuses him, so the provider's brute-force guard leaves him alone."""
    forget_failed_sign_ins("frank")
    page = sign_in_page(browser, sso_hub, "frank", totp=wrong_code("frank"))
    again = page.locator("#gp-sign-in-again")
    assert again.inner_text().strip() == "Try again", page.inner_text("body")
    page.screenshot(path=str(folder(tmp_path) / "issue54-sso-try-again-light.png"))
    again.click()
    page.fill("input[name=user]", "frank")
    page.fill("input[name=password]", PASSWORDS["frank"])
    page.click("button[type=submit]")
    page.fill("input[name=code]", code("frank"))
    page.click("button[type=submit]")
    page.wait_for_url(f"{sso_hub.url}/hub/**")
    assert page.inner_text("#gp-nav-user, .navbar", timeout=10_000).count("frank") >= 1
    page.context.close()


def test_a_wrong_password_at_the_provider_is_audited_by_the_hub(sso_hub: Hub) -> None:
    forget_failed_sign_ins("bob")
    browser = requests.Session()
    page = browser.get(f"{sso_hub.url}/hub/oauth_login", timeout=30)
    page = submit_form(browser, page, {"user": "bob", "password": "not-bobs"})
    assert page.url.startswith(PROVIDER) and 'name="code"' not in page.text
    refused = audited_refusal(sso_hub, "bob")
    assert (refused["why"], refused["via"]) == ("wrong name or password", "sso")


def test_carol_is_an_admin_through_her_ldap_group(sso_hub: Hub, browser: Any) -> None:
    page = sign_in_page(browser, sso_hub, "carol")
    page.wait_for_url(f"{sso_hub.url}/hub/**")
    # The hub's admin page opens for her (hpc-admins in LDAP), and the API says why.
    response = page.goto(f"{sso_hub.url}/hub/admin")
    assert response is not None and response.status == 200, page.url
    page.context.close()
    carol = sign_in(sso_hub.url, "carol")
    me = sso_hub.api(carol, "GET", "/user").json()
    # Her groups are LDAP's (the module's hub reads LDAP): not the provider's own `mfa`. She
    # manages users through her group's role, and is no JupyterHub admin (issue 55).
    assert me["admin"] is False and me["groups"] == ["hpc-admins"]
    assert sso_hub.api(carol, "GET", "/users").status_code == 200
    alice = sign_in(sso_hub.url, "alice")
    assert sso_hub.api(alice, "GET", "/user").json()["admin"] is False
    assert sso_hub.api(alice, "GET", "/users").status_code == 403


def test_dave_is_refused_alices_server_her_token_reaches_it(sso_hub: Hub, browser: Any) -> None:
    alice = sign_in(sso_hub.url, "alice")
    started = sso_hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert started.status_code in (201, 202), started.text
    sso_hub.wait_ready(alice, "alice")
    try:
        page = sign_in_page(browser, sso_hub, "dave")
        page.wait_for_url(f"{sso_hub.url}/hub/**")
        response = page.goto(f"{sso_hub.url}/user/alice/lab")
        # Her JupyterLab asks the hub who dave is; the hub refuses him access to her server.
        assert response is not None and response.status == 403, page.url
        assert page.inner_text("h1") == "You may not do that"
        assert "You do not have permission to access Server at /user/alice/" in page.inner_text(
            "#error-message"
        )
        page.context.close()

        # Tokens made from the sessions the provider gave them, used as the VS Code JupyterHub
        # extension and scripts use a pasted token: alice's reaches her server's Jupyter API,
        # dave's is refused there.
        def token(user: str) -> dict[str, str]:
            made = sso_hub.api(sign_in(sso_hub.url, user), "POST", f"/users/{user}/tokens", json={})
            assert made.status_code == 201, made.text
            return {"Authorization": f"token {made.json()['token']}"}

        kernelspecs = f"{sso_hub.url}/user/alice/api/kernelspecs"
        mine = requests.get(kernelspecs, headers=token("alice"), timeout=30)
        assert mine.status_code == 200 and "python3" in mine.json()["kernelspecs"], mine.text
        assert requests.get(kernelspecs, headers=token("dave"), timeout=30).status_code == 403
    finally:
        sso_hub.stop_server(alice, "alice")


def test_a_person_the_cluster_does_not_know_is_refused_with_a_page_that_says_so(
    sso_hub: Hub, browser: Any, tmp_path: Path
) -> None:
    page = sign_in_page(browser, sso_hub, "guest")
    assert page.url.startswith(f"{sso_hub.url}/hub/oauth_callback"), page.url
    assert page.inner_text("h1") == "You could not be signed in"
    said = page.inner_text("#error-message")
    assert "the cluster has no user guest" in said, said
    assert page.get_attribute("#error-home", "href").endswith("/hub/login")
    page.screenshot(path=str(folder(tmp_path) / SSO_SHOTS[2]))
    refused = [r for r in audit_records(sso_hub) if r.get("action") == "login_failed"]
    assert (
        refused and refused[-1]["user"] == "guest" and refused[-1]["why"] == "not in the directory"
    )
    page.context.close()


def test_a_token_made_on_the_token_page_works_for_the_api_and_portal(sso_hub: Hub) -> None:
    alice = sign_in(sso_hub.url, "alice")
    made = sso_hub.api(
        alice, "POST", "/users/alice/tokens", json={"note": "cli", "expires_in": 600}
    )
    assert made.status_code == 201, made.text
    headers = {"Authorization": f"token {made.json()['token']}"}
    assert (
        requests.get(f"{sso_hub.url}/hub/api/user", headers=headers, timeout=30).json()["name"]
        == "alice"
    )
    jobs = requests.get(f"{sso_hub.url}{PORTAL}/api/jobs", headers=headers, timeout=30)
    assert jobs.status_code == 200, jobs.text


def test_logout_ends_the_hub_session_and_the_providers(
    sso_hub: Hub, browser: Any, tmp_path: Path
) -> None:
    page = sign_in_page(browser, sso_hub, "alice")
    page.wait_for_url(f"{sso_hub.url}/hub/**")
    page.goto(f"{sso_hub.url}/hub/logout")
    page.wait_for_url(f"{sso_hub.url}/hub/signed-out**")
    assert "signed out of the GPU portal and of single sign-on" in page.inner_text(
        "#signed-out-message"
    )
    page.screenshot(path=str(folder(tmp_path) / SSO_SHOTS[3]))
    # The provider's session ended too: signing in again asks for the password.
    page.click("#sign-in-again")
    page.click("text=Sign in with single sign-on")
    page.wait_for_selector("input[name=password]")
    assert page.url.startswith(PROVIDER)
    assert any(
        r.get("action") == "logout" and r.get("user") == "alice" for r in audit_records(sso_hub)
    )
    page.context.close()


def test_a_provider_that_does_not_answer_gets_a_page_saying_so_within_5_s(
    sso_hub: Hub, browser: Any
) -> None:
    page = sign_in_page(browser, sso_hub, "alice")
    page.wait_for_url(f"{sso_hub.url}/hub/**")
    subprocess.run(["bash", str(HOSTS_SH), "cut", "sso"], check=True, timeout=30)
    try:
        # Logout ends the hub's session all the same, and says the provider's may be open.
        page.goto(f"{sso_hub.url}/hub/logout")
        logged_out = page.inner_text("#signed-out-message")
        page.click("#sign-in-again")
        started = time.monotonic()
        page.click("text=Sign in with single sign-on")
        page.wait_for_selector("#error-message", timeout=10_000)
        took = time.monotonic() - started
    finally:
        subprocess.run(["bash", str(HOSTS_SH), "mend", "sso"], check=True, timeout=30)
    assert "signed out of the GPU portal, but single sign-on did not answer" in logged_out
    assert took < 5, f"{took:.1f} s"
    assert page.inner_text("h1") == "Signing in is not possible right now"
    assert "single sign-on service (https://sso.example.org) is not answering" in page.inner_text(
        "#error-message"
    )
    print(f"\n[sso] provider cut off: the page said so after {took:.1f} s")
    page.context.close()
    wait_for(
        lambda: requests.get(f"{PROVIDER}/.well-known/openid-configuration", timeout=5).ok,
        30,
        "the provider to answer again",
    )


def test_a_provider_left_up_but_not_answering_is_started_again(sso_hub: Hub) -> None:
    """What a failed `make demo` left (issue 53): nginx up, the portal behind it not answering.
    `sso.sh start` used to take it as running; a second `make demo` must bring it up."""
    pid_file = LOCAL_STATE / "sso" / "run" / "llng.pid"
    subprocess.run(["kill", pid_file.read_text().strip()], check=True, timeout=10)
    discovery = f"{PROVIDER}/.well-known/openid-configuration"
    wait_for(lambda: not requests.get(discovery, timeout=5).ok, 10, "the provider to fail")
    started = subprocess.run(
        ["bash", str(SSO_SH), "start"], capture_output=True, text=True, timeout=120
    )
    assert started.returncode == 0, started.stderr
    assert "does not answer its discovery document: stopping it and starting it again" in (
        started.stdout
    )
    assert requests.get(discovery, timeout=5).ok


def test_the_preflight_checks_the_provider_and_the_client_secret(sso_hub: Hub) -> None:
    _, lines = preflight(sso_hub)
    assert lines["SSO provider"].lstrip().startswith("pass"), lines["SSO provider"]
    assert lines["SSO client secret"].lstrip().startswith("pass"), lines["SSO client secret"]
    # A hub set up with a wrong issuer address fails the check, with what to fix.
    _, lines = preflight(sso_hub, PORTAL_SSO_ISSUER="https://sso.example.org/realms/hpc")
    assert lines["SSO provider"].lstrip().startswith("FAIL"), lines["SSO provider"]
    assert "fix:" in lines["SSO provider"]


def test_groups_can_come_from_the_providers_claim(cluster: None) -> None:
    """A site whose provider sends the groups (PORTAL_SSO_GROUPS_CLAIM=groups): the hub takes
    them from the provider's userinfo, here LemonLDAP::NG's `groups` claim, which has the
    provider's own group `mfa` besides dave's LDAP group (deploy/local/sso_config.py)."""
    start_provider()
    env = {
        "PORTAL_LOGIN": "sso",
        "PORTAL_HUB_ID": "test-sso-claims",
        "PORTAL_SSO_GROUPS_CLAIM": "groups",
    }
    hub = Hub(state_dir("sso-claims"), 8350, env=env)  # 8350: registered with the provider too
    hub.start()
    try:
        dave = sign_in(hub.url, "dave")
        me = hub.api(dave, "GET", "/user").json()
        assert (me["admin"], sorted(me["groups"])) == (False, ["mfa", "vision"])
        log = hub.log_path.read_text()
        assert "Signed in dave" in log
    finally:
        hub.stop()


def test_an_error_the_provider_sends_back_is_a_page_and_an_audit_record(sso_hub: Hub) -> None:
    # What a provider does when the user cancels at its page, or it refuses the hub's request.
    answer = requests.get(
        f"{sso_hub.url}/hub/oauth_callback",
        params={"error": "access_denied", "error_description": "The user cancelled"},
        timeout=30,
    )
    assert answer.status_code == 403
    assert "did not sign you in (The user cancelled)" in answer.text
    assert "Back to the login page" in answer.text
    refused = [r for r in audit_records(sso_hub) if r.get("why") == "refused by the provider"]
    assert refused and refused[-1]["error"] == "access_denied"
