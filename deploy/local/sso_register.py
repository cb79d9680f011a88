"""Register a TOTP key for demo users at the identity provider, as each would at a first sign-in.

LemonLDAP::NG requires a second factor of everyone (deploy/local/sso_config.py): a user who has
none is sent from the password form to the registration page, which asks for a new key and
for a code of it. This does the same over HTTP for each LOGIN:PASSWORD given (users.tsv's
demo users), with pyotp in the place of a phone, and keeps each key in KEYS/LOGIN (root's
alone) so that `sso.sh code LOGIN` and the tests can compute codes.

    sso_register.py --portal https://sso.example.org/ --ca CA.pem --keys DIR LOGIN:PASSWORD...
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import pyotp
import requests

# LemonLDAP::NG's registration API wants this header on every call (its CSRF check).
CSRF = {"X-CSRF-Check": "1"}


def hidden_fields(page: str) -> dict[str, str]:
    """The login form's hidden inputs (the form token, the return URL) as a browser posts them."""
    fields = {}
    for tag in re.findall(r"<input[^>]*type=\"hidden\"[^>]*>", page):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            fields[name.group(1)] = value.group(1) if value else ""
    return fields


def register(portal: str, ca: str, login: str, password: str) -> str:
    """Sign in with the password, register a new TOTP key, prove it with a code; the key."""
    with requests.Session() as browser:
        browser.verify = ca
        browser.trust_env = False  # REQUESTS_CA_BUNDLE would win over `verify` otherwise
        form = browser.get(portal, timeout=10)
        form.raise_for_status()
        signed_in = browser.post(
            portal,
            data={**hidden_fields(form.text), "user": login, "password": password},
            timeout=10,
        )
        if "2fregisters" not in signed_in.url:
            raise SystemExit(
                f"{login}: the provider did not ask to register a second factor after the "
                f"password (landed on {signed_in.url}; a wrong password, or one registered?)"
            )
        offer = browser.post(f"{portal}2fregisters/totp/getkey", headers=CSRF, timeout=10)
        offer.raise_for_status()
        key = offer.json()
        if "secret" not in key:
            raise SystemExit(f"{login}: no new key offered: {key}")
        totp = pyotp.TOTP(key["secret"], digits=int(key["digits"]), interval=int(key["interval"]))
        proof = browser.post(
            f"{portal}2fregisters/totp/verify",
            headers=CSRF,
            data={"token": key["token"], "code": totp.now(), "TOTPName": "demo phone"},
            timeout=10,
        )
        if proof.json().get("result") != 1:
            raise SystemExit(f"{login}: the provider refused the key's code: {proof.text}")
        return str(key["secret"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--portal", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--keys", required=True, type=Path)
    parser.add_argument("users", nargs="+", metavar="LOGIN:PASSWORD")
    args = parser.parse_args()
    for pair in args.users:
        login, password = pair.split(":", 1)
        started = time.monotonic()
        secret = register(args.portal, args.ca, login, password)
        target = args.keys / login
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(secret + "\n")
        print(f"[sso] {login}: TOTP key registered ({time.monotonic() - started:.1f} s)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
