"""The preflight's checks of single sign-on (PORTAL_LOGIN=sso; gpuportal_spawner.preflight runs
them): the hub's client secret, and the provider as the hub will call it."""

from __future__ import annotations

import pwd
from pathlib import Path

import requests

from gpuportal_adapters.settings import HubSettings
from gpuportal_core.preflight import Check, failed, passed, warned


def check_sso(settings: HubSettings) -> list[Check]:
    """With PORTAL_LOGIN=sso: the client secret is the service account's alone, and the provider
    answers over verified TLS as the configured issuer, with PKCE (S256)."""
    checks = []
    secret = Path(settings.sso_client_secret_file or f"{settings.state}/sso-client/client-secret")
    try:
        stat = secret.stat()
    except OSError as error:
        checks.append(failed("SSO client secret", str(error), "set PORTAL_SSO_CLIENT_SECRET_FILE"))
    else:
        owner = pwd.getpwuid(stat.st_uid).pw_name
        if owner != settings.service_user or stat.st_mode & 0o077:
            checks.append(
                failed(
                    "SSO client secret",
                    f"{secret} is {owner}'s, mode {stat.st_mode & 0o777:o}",
                    f"chown {settings.service_user} {secret}; chmod 0400 {secret}",
                )
            )
        else:
            checks.append(passed("SSO client secret", f"{secret}, {owner}'s alone"))
    issuer = settings.sso_issuer.rstrip("/")
    # A command of the admin's, as `gpuportal` is: requests (the services' calls are async).
    try:
        answer = requests.get(
            f"{issuer}/.well-known/openid-configuration",
            timeout=5,
            verify=settings.sso_ca_file or f"{settings.state}/demo-ca/ca.pem",
        )
        answer.raise_for_status()
        document = answer.json()
    except (requests.RequestException, ValueError) as error:
        checks.append(
            failed(
                "SSO provider",
                f"{issuer}: {error}",
                "check PORTAL_SSO_ISSUER and PORTAL_SSO_CA_FILE, and that the provider runs",
            )
        )
        return checks
    if str(document.get("issuer", "")).rstrip("/") != issuer:
        checks.append(
            failed(
                "SSO provider",
                f"{issuer} calls itself {document.get('issuer')!r}",
                "set PORTAL_SSO_ISSUER to the issuer its discovery document names",
            )
        )
    elif "S256" not in document.get("code_challenge_methods_supported", []):
        checks.append(
            warned(
                "SSO provider",
                f"{issuer} does not list PKCE (S256)",
                "require PKCE with S256 for the hub's client at the provider",
            )
        )
    else:
        checks.append(passed("SSO provider", f"{issuer} over verified TLS, PKCE (S256)"))
    return checks
