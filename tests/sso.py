"""Signing in through the local cluster's identity provider (deploy/local/sso.sh), as a browser
does, for tests that need a user's hub session without driving Chromium.

The provider's pages are followed as they come: its password form, then its TOTP form (the
code computed from the key `sso.sh start` registered for the user, as their phone would), then
its redirect back to the hub, which finishes the sign-in.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pyotp
import requests

from tests.hubproc import LOCAL_STATE, REPO

SSO_SH = REPO / "deploy" / "local" / "sso.sh"
TOTP_KEYS = LOCAL_STATE / "sso-totp"
# The provider's persistent sessions (sso_config.py's persistentStorageOptions): a user's TOTP
# key and sign-in history, one JSON file each, named by the MD5 of the uid (getPSessionID).
PERSISTENT_SESSIONS = LOCAL_STATE / "sso" / "psessions"
PROVIDER = "https://sso.example.org"
# Every user the provider knows: the demo's (users.tsv) and the directory's guest, who is no
# cluster user (deploy/local/cluster.sh).
PASSWORDS = {
    line.split("\t")[0]: line.split("\t")[2]
    for line in (REPO / "deploy" / "local" / "users.tsv").read_text().splitlines()
    if line and not line.startswith("#")
} | {"guest": "guest-demo"}


def start_provider() -> None:
    """The provider up, its demo users' keys registered (safe to call again)."""
    subprocess.run(["bash", str(SSO_SH), "start"], check=True, capture_output=True, timeout=120)


def code(user: str) -> str:
    """A TOTP code of the user's that the provider has not accepted yet.

    The provider accepts each code once (OnceTOTP) and the step after now's too: each sign-in
    takes the step after the last one taken, now's or the next, else waits for one. The last
    step is kept in a file (locked) beside the key, so that the two lanes' processes and a
    test run again within the minute never send a code twice.
    """
    totp = pyotp.TOTP((TOTP_KEYS / user).read_text().strip())
    with (TOTP_KEYS / f".{user}.last-step").open("a+") as last:
        fcntl.flock(last, fcntl.LOCK_EX)
        last.seek(0)
        taken = int(last.read().strip() or 0)
        now = int(time.time() // totp.interval)
        step = max(now, taken + 1)
        if step > now + 1:  # both taken: the next step's code is good once its step starts
            time.sleep((step - 1) * totp.interval - time.time() + 0.1)
        last.seek(0)
        last.truncate()
        last.write(str(step))
    return totp.at(step * totp.interval)


def wrong_code(user: str) -> str:
    """A code that is not the user's now, nor in the window either side the provider accepts."""
    totp = pyotp.TOTP((TOTP_KEYS / user).read_text().strip())
    now = time.time()
    accepted = {totp.at(now + 30 * step) for step in (-2, -1, 0, 1, 2)}
    return next(c for c in (f"{n:06d}" for n in range(1000000)) if c not in accepted)


def forget_failed_sign_ins(user: str) -> None:
    """Clear the user's failed sign-ins from the provider's history.

    Its brute-force guard counts failures of the last 20 minutes (300 s times 1 + 3 allowed;
    each wrong code counts twice), so a test that refuses codes on purpose, run again within
    them (or in CI right after a developer's run), would be held before its first try. Done
    under the provider's own lock of the file (Apache::Session::Lock::File's flock).
    """
    name = hashlib.md5(user.encode()).hexdigest()
    record = PERSISTENT_SESSIONS / name
    with (PERSISTENT_SESSIONS / "lock" / f"Apache-Session-{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        session = json.loads(record.read_text())
        session.get("_loginHistory", {}).pop("failedLogin", None)
        fresh = record.with_name(f".{name}.forget")
        fresh.write_text(json.dumps(session))
        owner = record.stat()
        os.chown(fresh, owner.st_uid, owner.st_gid)
        fresh.chmod(owner.st_mode & 0o777)
        fresh.replace(record)


def sign_in_in_browser(
    page: Any,
    hub_url: str,
    user: str,
    totp: str | None = None,
    shots: list[Path] | None = None,
    password: str | None = None,
) -> None:
    """A Playwright page through the hub's login button, the provider's password form and its
    TOTP form; the page is wherever that ends. With shots: the hub's login page and the
    provider's code form, saved to the first two paths. password: a user the demo does not
    know (a test's own); the demo's users' are known."""
    page.goto(f"{hub_url}/hub/login")
    if shots:
        page.screenshot(path=str(shots[0]))
    page.click("text=Sign in with single sign-on")
    page.wait_for_url(f"{PROVIDER}/**")
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", password or PASSWORDS[user])
    page.click("button[type=submit]")
    page.wait_for_selector("input[name=code]")
    if shots:
        page.screenshot(path=str(shots[1]))
    page.fill("input[name=code]", totp or code(user))
    page.click("button[type=submit]")


def submit_form(
    browser: requests.Session, page: requests.Response, fields: dict[str, str]
) -> requests.Response:
    """Post the page's form (its hidden fields and these) as a browser would."""
    form = re.search(r"<form[^>]*action=\"([^\"]*)\"[^>]*>(.*?)</form>", page.text, re.S)
    said = re.findall(r'(?:trmsg|trspan)="([^"]+)"', page.text)  # the provider's message keys
    assert form, f"no form on {page.url} ({page.status_code}): {said}"
    action = form.group(1)
    target = page.url.split("#")[0] if action in ("", "#") else urljoin(page.url, action)
    data = {}
    for tag in re.findall(r"<input[^>]*type=\"hidden\"[^>]*>", form.group(2)):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            data[name.group(1)] = value.group(1) if value else ""
    return browser.post(target, data={**data, **fields}, timeout=30)


def sign_in(hub_url: str, user: str, totp: str | None = None) -> requests.Session:
    """A requests session signed in to the hub as `user` through the provider."""
    browser = requests.Session()  # the demo CA trusted through REQUESTS_CA_BUNDLE (hubproc)
    page = browser.get(f"{hub_url}/hub/oauth_login", timeout=30)
    page = submit_form(browser, page, {"user": user, "password": PASSWORDS[user]})
    page = submit_form(browser, page, {"code": totp or code(user)})
    assert page.url.startswith(hub_url), (
        f"{user} not back at the hub: {page.url} {page.status_code}"
    )
    # The hub's own: a user with a running server also has her JupyterLab's (/user/NAME/).
    hub_xsrf = [c.value for c in browser.cookies if c.name == "_xsrf" and c.path.startswith("/hub")]
    browser.headers["X-XSRFToken"] = (hub_xsrf or [""])[0] or ""
    return browser


def provider_log() -> str:
    return (LOCAL_STATE / "sso-log" / "portal.log").read_text(errors="replace")
