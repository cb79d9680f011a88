"""The hub's internal TLS certificates carry EC P-256 keys, and work as certipy's RSA ones did."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from certipy import Certipy
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jupyterhub.httpclient import JupyterHubHTTPClient
from jupyterhub.utils import make_ssl_context

from gpuportal_spawner import compat
from gpuportal_spawner.hub_app import GpuPortalHub
from tests.unit.hub.memory_tls import handshake

MADE_AT_START = ("hub-ca", "hub-internal", "proxy-api", "proxy-client", "notebooks-ca")


@pytest.fixture(autouse=True)
def certipy_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub's start changes certipy for the process (gpuportal_spawner.compat): put
    certipy's own back after each test."""
    monkeypatch.setattr(Certipy, "create_key_pair", Certipy.create_key_pair)


@pytest.fixture(autouse=True)
def http_client_cleared() -> Iterator[None]:
    """init_internal_ssl makes the hub's HTTP client for its loop: none left for other tests."""
    yield
    if JupyterHubHTTPClient.initialized():
        JupyterHubHTTPClient.clear_instance()


def started(store: Path, *, internal_ssl: bool = True) -> GpuPortalHub:
    """A hub that has made its internal certificates, as at its start (in its event loop)."""
    hub = GpuPortalHub(internal_ssl=internal_ssl, internal_certs_location=str(store))
    compat.install(hub.log, internal_ssl=internal_ssl)  # what its init_logging does first
    hub.init_internal_ssl()
    return hub


def key_pem(store: Path, name: str) -> bytes:
    return Path(Certipy(store_dir=str(store)).store.get_record(name)["files"]["key"]).read_bytes()


def key_of(store: Path, name: str) -> object:
    return serialization.load_pem_private_key(key_pem(store, name), password=None)


async def test_the_hubs_cas_and_certificates_get_ec_keys(tmp_path: Path) -> None:
    started(tmp_path)
    for name in MADE_AT_START:
        key = key_of(tmp_path, name)
        assert isinstance(key, ec.EllipticCurvePrivateKey), name
        assert key.curve.name == "secp256r1"


async def test_a_service_certificate_made_later_gets_one_too(tmp_path: Path) -> None:
    """Managed services' certificates are made at each service's start, after the hub's."""
    started(tmp_path)
    Certipy(store_dir=str(tmp_path)).create_signed_pair("portal-service", "services-ca")
    assert isinstance(key_of(tmp_path, "portal-service"), ec.EllipticCurvePrivateKey)


async def test_a_store_made_before_keeps_its_keys(tmp_path: Path) -> None:
    """An existing RSA certificate stays (sessions running have its CA): nothing is remade."""
    old = Certipy(store_dir=str(tmp_path))
    old.create_ca("hub-ca")
    old.create_signed_pair("hub-internal", "hub-ca", alt_names=["DNS:localhost"])
    before = key_pem(tmp_path, "hub-internal")
    started(tmp_path)
    assert isinstance(key_of(tmp_path, "hub-internal"), rsa.RSAPrivateKey)
    assert key_pem(tmp_path, "hub-internal") == before


async def test_without_internal_tls_certipy_is_left_alone(tmp_path: Path) -> None:
    started(tmp_path, internal_ssl=False)
    Certipy(store_dir=str(tmp_path)).create_ca("hub-ca")
    assert isinstance(key_of(tmp_path, "hub-ca"), rsa.RSAPrivateKey)


async def test_a_client_of_the_hubs_ca_with_its_own_certificate_completes_the_handshake(
    tmp_path: Path,
) -> None:
    """What a session does when it calls the hub: both sides' certificates checked, with the
    contexts JupyterHub builds (make_ssl_context), the hub's for a server."""
    hub = started(tmp_path)
    store = Certipy(store_dir=str(tmp_path))
    store.create_signed_pair("session", "notebooks-ca", alt_names=["DNS:localhost"])
    session = store.store.get_record("session")["files"]
    server = make_ssl_context(
        hub.internal_ssl_key, hub.internal_ssl_cert, hub.internal_ssl_ca,
        purpose=ssl.Purpose.CLIENT_AUTH,
    )  # fmt: skip
    notebooks_ca = hub.internal_trust_bundles["notebooks-ca"]
    client = make_ssl_context(session["key"], session["cert"], notebooks_ca)
    asking, served = handshake(server, client, "localhost")
    assert asking.version() == "TLSv1.3"
    assert served.getpeercert()["subject"] == ((("commonName", "session"),),)
    hub_cert = x509.load_der_x509_certificate(asking.getpeercert(binary_form=True))
    assert isinstance(hub_cert.public_key(), ec.EllipticCurvePublicKey)
