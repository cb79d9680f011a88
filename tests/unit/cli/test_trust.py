"""Issue 54, item 3: a hub whose certificate the machine does not trust is said to be that, with
what to do, not "Cannot reach the hub (is it up?)" while it is up."""

from __future__ import annotations

import http.server
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuportal_cli.client import Client, CliError


@pytest.fixture
def https_url(tmp_path: Path) -> Iterator[str]:
    """An HTTPS server on loopback with a certificate of a CA nobody trusts (its own)."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_an_untrusted_certificate_is_said_with_what_to_do(
    https_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(CliError) as said:
        Client(https_url, "token", timeout=10).me()
    assert str(said.value).startswith(
        f"The hub at {https_url} presents a certificate this machine does not trust."
    )
    assert "update-ca-certificates" in str(said.value)
