"""The preflight's certificates (gpuportal-admin preflight): the hub's internal TLS certificate
and the public one browsers see, or TLS ended in front of the hub (nginx). Verdicts are
gpuportal_core.preflight's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gpuportal_adapters.settings import HubSettings
from gpuportal_core.preflight import Check, certificate_verdict, failed, passed, warned


def _certificate(path: str) -> tuple[datetime, str] | None:
    from cryptography import x509

    try:
        cert = x509.load_pem_x509_certificate(Path(path).read_bytes())
    except (OSError, ValueError):
        return None
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        subject = ", ".join(str(getattr(n, "value", n)) for n in names)
    except x509.ExtensionNotFound:
        subject = cert.subject.rfc4514_string()
    return cert.not_valid_after_utc, subject


def check_certificates(settings: HubSettings) -> list[Check]:
    now = datetime.now(UTC)
    checks = []
    if settings.internal_tls:
        store = Path(settings.hub_state) / "internal-ssl"
        found = _certificate(str(store / "hub-internal" / "hub-internal.crt"))
        if found is None:
            checks.append(
                warned(
                    "internal TLS",
                    f"no hub certificate in {store} yet",
                    "the hub makes it at its first start; run the preflight after it",
                )
            )
        elif settings.hub_connect_ip not in found[1]:
            checks.append(
                failed(
                    "internal TLS",
                    f"the hub's certificate names {found[1]}, not {settings.hub_connect_ip}",
                    f"empty {store} once (the hub makes it again with the new name)",
                )
            )
        else:
            checks.append(certificate_verdict("internal TLS", found[0], now, "hub certificate"))
    if not settings.public_tls_cert and settings.tls_in_front:
        # nginx (or another front) holds the site's certificate; the hub is on loopback.
        checks.append(
            passed(
                "public certificate",
                f"TLS ends in front of the hub, which listens on {settings.hub_bind} only",
            )
            if settings.hub_bind in ("127.0.0.1", "::1", "localhost")
            else warned(
                "public certificate",
                f"TLS ends in front of the hub, but it also answers plain HTTP on "
                f"{settings.hub_bind}",
                "set PORTAL_HUB_BIND=127.0.0.1: browsers must reach it through the front only",
            )
        )
    elif not settings.public_tls_cert:
        checks.append(
            warned(
                "public certificate",
                "the hub serves plain HTTP",
                "set PORTAL_PUBLIC_TLS_CERT/_KEY, or end TLS in front of it (nginx)",
            )
        )
    else:
        found = _certificate(settings.public_tls_cert)
        checks.append(
            failed("public certificate", f"cannot read {settings.public_tls_cert}", "fix the path")
            if found is None
            else certificate_verdict("public certificate", found[0], now, found[1])
        )
    return checks
