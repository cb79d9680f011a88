"""What a new TLS connection to the hub costs the hub's CPU, by the kind of key its internal
certificate holds: RSA-2048 (what JupyterHub's certipy makes) against EC P-256 (what the portal
makes, gpuportal_spawner.internal_keys).

A session's port callback and activity report and a service's call each open a connection of
their own (the proxy keeps its connections to the hub), and in each TLS handshake the server
signs once with its key. A server like the hub's under internal_ssl (JupyterHub's
make_ssl_context: client certificates required, the hub's CA checked) runs in a child process
on loopback; a client with a certificate of its own, as a session has, opens N connections one
after the other, one request each, then N requests on one kept connection. The server's CPU
time (its own process_time, read over the same HTTPS) gives the cost of each.

    /opt/gpuportal/venv/bin/python -m bench.tls_handshake [--connections 300]
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import multiprocessing
import socket
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from jupyterhub.utils import make_ssl_context

KEYS = {
    "RSA-2048": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "EC P-256": lambda: ec.generate_private_key(ec.SECP256R1()),
}


def _pem_pair(folder: Path, name: str, key: Any, issuer: tuple[Any, x509.Name] | None) -> Path:
    """Write key and certificate (signed by issuer's key, or by its own) to folder/name.pem."""
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    signer, issuer_name = issuer or (key, subject)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), True)
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost")]), False
        )
    cert = builder.sign(signer, hashes.SHA256())
    path = folder / f"{name}.pem"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        + cert.public_bytes(serialization.Encoding.PEM)
    )
    return path


def _serve(pem: str, ca: str, port: int) -> None:
    """The child: a tornado HTTPS server as the hub's, answering its own CPU seconds."""
    from tornado import httpserver, ioloop, web

    class Cpu(web.RequestHandler):
        def get(self) -> None:
            self.write(f"{time.process_time():.6f}")

    context = make_ssl_context(pem, pem, ca, purpose=ssl.Purpose.CLIENT_AUTH)
    server = httpserver.HTTPServer(web.Application([(r"/", Cpu)]), ssl_options=context)
    server.listen(port, "127.0.0.1")
    ioloop.IOLoop.current().start()


def measure(kind: str, connections: int) -> tuple[float, float]:
    """Server CPU ms per new connection and per request on a kept connection."""
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as tmp:
        folder = Path(tmp)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = _pem_pair(folder, "ca", ca_key, None)
        ca_name = x509.load_pem_x509_certificate(ca.read_bytes()).subject
        server_pem = _pem_pair(folder, "server", KEYS[kind](), (ca_key, ca_name))
        client_pem = _pem_pair(folder, "client", KEYS["EC P-256"](), (ca_key, ca_name))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        child = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(str(server_pem), str(ca), port), daemon=True
        )
        child.start()
        try:
            context = make_ssl_context(str(client_pem), str(client_pem), str(ca))

            def new_connection() -> http.client.HTTPSConnection:
                return http.client.HTTPSConnection("localhost", port, context=context, timeout=10)

            def cpu(connection: http.client.HTTPSConnection | None = None) -> float:
                conn = connection or new_connection()
                conn.request("GET", "/")
                seconds = float(conn.getresponse().read())
                if connection is None:
                    conn.close()
                return seconds

            deadline = time.monotonic() + 30
            while True:
                try:
                    cpu()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            for _ in range(20):  # warm up: imports, caches
                cpu()
            before = cpu()
            for _ in range(connections):
                cpu()
            per_connection = (cpu() - before) / (connections + 1)
            kept = new_connection()
            before = cpu(kept)
            for _ in range(connections):
                cpu(kept)
            per_request = (cpu(kept) - before) / (connections + 1)
            kept.close()
        finally:
            child.terminate()
            child.join(5)
    return per_connection * 1000, per_request * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=300)
    args = parser.parse_args()
    print(f"the server's CPU, {args.connections} connections one after the other (TLS 1.3,")
    print("client certificates as under internal_ssl; one small request each):")
    for kind in KEYS:
        per_connection, per_request = measure(kind, args.connections)
        print(
            f"  {kind}: {per_connection:.2f} ms per new connection; "
            f"{per_request:.2f} ms per request on a kept connection"
        )


if __name__ == "__main__":
    main()
