"""gpuportal_spawner.session_tls: a certificate for the nodes a session may run on, handed over into
the user's files (a stand-in for the sudo-writing JobFiles) and never kept by the hub."""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from certipy import Certipy
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from gpuportal_spawner import session_tls
from tests.unit.hub.memory_tls import handshake


def read(path: str) -> str:
    return Path(path).read_text()


def names_in(folder: str) -> set[str]:
    return {path.name for path in Path(folder).rglob("*")}


class Files:
    """JobFiles' paths."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def log_dir(self) -> str:
        return str(self.folder)

    def tls_files(self, log_dir: str) -> tuple[str, str]:
        return f"{log_dir}/tls-test-default.pem", f"{log_dir}/tls-test-default-ca.pem"


@pytest.fixture
def spawner(tmp_path: Path) -> SimpleNamespace:
    store = Certipy(store_dir=str(tmp_path / "internal-ssl"))
    store.create_ca("notebooks-ca")
    bundle = store.create_bundle("notebooks-ca_trust.crt", names=["notebooks-ca"])
    return SimpleNamespace(
        user=SimpleNamespace(name="alice"),
        _log_name="alice",
        log=logging.getLogger("test"),
        internal_certs_location=str(tmp_path / "internal-ssl"),
        internal_trust_bundles={"notebooks-ca": bundle},
        ssl_alt_names_include_local=False,
    )


async def test_alt_names_give_each_node_by_name_and_by_the_address_it_resolves_to():
    assert await session_tls.alt_names(["localhost", "no-such-node.invalid", "localhost"]) == [
        "DNS:localhost",
        "IP:127.0.0.1",
        "DNS:no-such-node.invalid",
    ]


async def test_the_nodes_are_resolved_off_the_hubs_loop(monkeypatch):
    """Issue 56: each node was resolved with socket.gethostbyname on the hub's loop, at every
    spawn; a site's DNS holds the loop for each node of the partition."""
    loop_thread = threading.get_ident()
    asked: list[tuple[str, bool]] = []
    real = socket.getaddrinfo

    def resolver(host, *args, **kwargs):
        asked.append((host, threading.get_ident() == loop_thread))
        return real("localhost", *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    monkeypatch.setattr(socket, "gethostbyname", lambda host: resolver(host, None)[0][4][0])
    names = await session_tls.alt_names(["gpu02", "gpu01"])
    assert names == ["DNS:gpu01", "IP:127.0.0.1", "DNS:gpu02", "IP:127.0.0.1"]
    assert sorted(asked) == [("gpu01", False), ("gpu02", False)]


async def test_the_certificate_names_the_nodes_and_is_signed_by_the_notebooks_ca(spawner):
    pair = await session_tls.sign(spawner, ["localhost"])
    cert = x509.load_pem_x509_certificate(pair["cert"].encode())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(a) for a in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(usage) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    ca = x509.load_pem_x509_certificate(
        read(spawner.internal_trust_bundles["notebooks-ca"]).encode()
    )
    cert.verify_directly_issued_by(ca)  # raises if another key signed it
    # The key is the certificate's.
    key = serialization.load_pem_private_key(pair["key"].encode(), password=None)
    assert key.public_key() == cert.public_key()


async def test_a_tls_server_with_it_is_trusted_by_a_client_of_the_notebooks_ca(spawner, tmp_path):
    """What the proxy and the hub do when they connect to the session: verify its certificate
    against the notebooks CA, for the name they connect to."""
    pair = await session_tls.sign(spawner, ["localhost"])
    pem = tmp_path / "session.pem"
    pem.write_text(pair["key"] + pair["cert"])
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(pem)
    client = ssl.create_default_context(cafile=spawner.internal_trust_bundles["notebooks-ca"])
    asking, _ = handshake(server, client, "localhost")
    assert asking.getpeercert()["subjectAltName"][0] == ("DNS", "localhost")


async def test_the_hand_over_gives_the_job_key_and_certificate_and_the_cas(spawner, tmp_path):
    pair = await session_tls.sign(spawner, ["localhost"])
    files = Files(tmp_path)
    job, texts = await session_tls.hand_over(files, pair)

    pem, ca = files.tls_files(str(tmp_path))
    assert job == {"keyfile": pem, "certfile": pem, "cafile": ca}
    assert texts[pem] == pair["key"] + pair["cert"]
    assert texts[ca] == read(spawner.internal_trust_bundles["notebooks-ca"])
    # Nothing of the session's is left in the hub's certificate store.
    left = names_in(spawner.internal_certs_location)
    assert not [name for name in left if "session" in name or "alice" in name]


async def test_each_spawn_gets_its_own_key(spawner):
    first = await session_tls.sign(spawner, ["localhost"])
    second = await session_tls.sign(spawner, ["localhost"])
    assert first["key"] != second["key"]


async def test_the_notebooks_ca_is_read_once_per_hub_and_kept_by_it(spawner, monkeypatch):
    """Issue 56, item 6: kept in the hub's state (HubState.notebooks_ca), not in a cache of the
    module for the process's life: two hubs in one process keep their own."""
    real, reads = session_tls.notebooks_ca, []
    monkeypatch.setattr(
        session_tls, "notebooks_ca", lambda store: reads.append(store) or real(store)
    )
    await session_tls.sign(spawner, ["localhost"])
    await session_tls.sign(spawner, ["localhost"])
    assert len(reads) == 1
    other_hub = SimpleNamespace(**{**vars(spawner), "user": SimpleNamespace(name="bob")})
    await session_tls.sign(other_hub, ["localhost"])
    assert len(reads) == 2
