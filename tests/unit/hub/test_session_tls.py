"""spawner.session_tls: a certificate for the nodes a session may run on, handed over into
the user's files (a stand-in for the sudo-writing JobFiles) and forgotten by the hub."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from certipy import Certipy
from cryptography import x509

from spawner import session_tls


def read(path: str) -> str:
    return Path(path).read_text()


def exists(path: str) -> bool:
    return Path(path).exists()


class Files:
    """JobFiles' hand-over, keeping what it would write as the user."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.written: dict[str, str] = {}

    async def log_dir(self) -> str:
        return str(self.folder)

    def tls_files(self, log_dir: str) -> tuple[str, str]:
        return f"{log_dir}/tls-test-default.pem", f"{log_dir}/tls-test-default-ca.pem"

    async def write_private(self, log_dir: str, path: str, text: str) -> None:
        self.written[path] = text


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


def test_alt_names_give_each_node_by_name_and_by_the_address_it_resolves_to():
    assert session_tls.alt_names(["localhost", "no-such-node.invalid", "localhost"]) == [
        "DNS:localhost",
        "IP:127.0.0.1",
        "DNS:no-such-node.invalid",
    ]


async def test_the_certificate_names_the_nodes_and_the_hub_keeps_no_copy(spawner, tmp_path):
    paths = await session_tls.sign(spawner, ["localhost"])
    cert = x509.load_pem_x509_certificate(read(paths["certfile"]).encode())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert exists(paths["keyfile"])

    files = Files(tmp_path)
    job = await session_tls.hand_over(spawner, files, paths)

    pem, ca = files.tls_files(str(tmp_path))
    assert job == {"keyfile": pem, "certfile": pem, "cafile": ca}
    assert "PRIVATE KEY" in files.written[pem] and "CERTIFICATE" in files.written[pem]
    assert files.written[ca] == read(spawner.internal_trust_bundles["notebooks-ca"])
    # The hub's copy is gone, record and files.
    assert not exists(paths["keyfile"])
    store = Certipy(store_dir=spawner.internal_certs_location).store
    assert paths["record"] not in store.store


async def test_each_spawn_gets_its_own_key(spawner):
    first = await session_tls.sign(spawner, ["localhost"])
    second = await session_tls.sign(spawner, ["localhost"])
    assert first["record"] != second["record"]
    assert read(first["keyfile"]) != read(second["keyfile"])
