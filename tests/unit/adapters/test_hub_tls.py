"""The session's TLS contexts (gpuportal_adapters.hub_tls) against a real TLS socket, with
certificates of a throwaway CA made by certipy (as the hub makes its own)."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from certipy import Certipy

from gpuportal_adapters.hub_tls import client_context, server_context
from tests.local_server import accept_each


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    store = Certipy(store_dir=str(tmp_path_factory.mktemp("pki")))
    store.create_ca("hub-ca")
    store.create_ca("rogue-ca")
    names = ["DNS:localhost", "IP:127.0.0.1"]
    made = {
        "server": store.create_signed_pair("server", "hub-ca", alt_names=names),
        "hub": store.create_signed_pair("hub", "hub-ca"),
        "rogue": store.create_signed_pair("rogue", "rogue-ca"),
    }
    ca = store.store.get_files("hub-ca").cert.file_path
    return {
        who: {
            "JUPYTERHUB_SSL_KEYFILE": pair["files"]["key"],
            "JUPYTERHUB_SSL_CERTFILE": pair["files"]["cert"],
            "JUPYTERHUB_SSL_CLIENT_CA": ca,
        }
        for who, pair in made.items()
    }


@pytest.fixture
def tls_server(pki: dict[str, dict[str, str]]) -> Iterator[int]:
    """Answers b"ok" over TLS to each client that completes the handshake."""
    context = server_context(pki["server"])
    assert context is not None
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer(conn: socket.socket) -> None:
        try:
            with context.wrap_socket(conn, server_side=True) as tls:
                tls.sendall(b"ok")
        except (ssl.SSLError, OSError):
            conn.close()

    accept_each(listener, answer)
    yield port
    listener.close()


def _read(port: int, context: ssl.SSLContext) -> bytes:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        return tls.recv(2)


def test_without_certificate_paths_there_is_no_tls():
    assert client_context({}) is None
    assert server_context({"JUPYTERHUB_API_URL": "http://hub:8081/hub/api"}) is None


def test_a_client_with_a_certificate_of_the_hubs_ca_is_served(tls_server, pki):
    context = client_context(pki["hub"])
    assert context is not None and context.check_hostname
    assert _read(tls_server, context) == b"ok"


def test_a_client_without_a_certificate_is_refused(tls_server, pki):
    bare = ssl.create_default_context(cafile=pki["hub"]["JUPYTERHUB_SSL_CLIENT_CA"])
    with pytest.raises((ssl.SSLError, ConnectionError)):
        _read(tls_server, bare)


def test_a_client_with_another_cas_certificate_is_refused(tls_server, pki):
    rogue = dict(pki["rogue"], JUPYTERHUB_SSL_CLIENT_CA=pki["hub"]["JUPYTERHUB_SSL_CLIENT_CA"])
    context = client_context(rogue)
    assert context is not None
    with pytest.raises((ssl.SSLError, ConnectionError)):
        _read(tls_server, context)


def test_the_client_checks_the_servers_name(tls_server, pki):
    context = client_context(pki["hub"])
    assert context is not None
    with (
        socket.create_connection(("127.0.0.1", tls_server), timeout=5) as raw,
        pytest.raises(ssl.SSLCertVerificationError),
    ):
        context.wrap_socket(raw, server_hostname="gpu99")


def test_one_file_may_hold_the_key_and_the_certificate(tls_server, pki, tmp_path: Path):
    """As the hub hands it over (gpuportal_spawner.session_tls): key and certificate in one file."""
    hub = pki["hub"]
    both = tmp_path / "tls.pem"
    both.write_text(
        Path(hub["JUPYTERHUB_SSL_KEYFILE"]).read_text()
        + Path(hub["JUPYTERHUB_SSL_CERTFILE"]).read_text()
    )
    environ = dict(hub, JUPYTERHUB_SSL_KEYFILE=str(both), JUPYTERHUB_SSL_CERTFILE=str(both))
    context = client_context(environ)
    assert context is not None
    assert _read(tls_server, context) == b"ok"
