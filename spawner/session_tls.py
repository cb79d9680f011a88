"""Internal TLS for sessions on compute nodes: JupyterHub's `internal_ssl` where batchspawner
never had it (jupyterhub/batchspawner#192).

JupyterHub signs a server's certificate before `Spawner.start()` (`create_certs`) and leaves it
to `move_certs` to bring it where the server runs. A Slurm job's node is known only once the
job runs, so the certificate names every node the job may be placed on (the partition's nodes
that can hold it), by name and by the address the name resolves to here: the hub and the proxy
connect by name and check it. The key and certificate reach the job as its token does: a 0600
file in the user's log folder, written as the user together with the token
(gpuportal_spawner.job_files); the job's environment holds only their paths
(JUPYTERHUB_SSL_KEYFILE, ...), and once they are written the hub keeps no copy of the key.

JupyterLab then serves only TLS and accepts only clients whose certificate the hub's CAs signed
(the hub's and the proxy's): another user's process, with a session certificate of its own,
is refused at the handshake.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from gpuportal_spawner.hub_state import hub_state
from gpuportal_spawner.job_files import JobFiles

NOTEBOOKS_CA = "notebooks-ca"
# Long enough for a session that waits days in the queue and then runs its time limit; the
# key lives only in the user's files and goes with the session (JobFiles.remove_token).
VALID_FOR = datetime.timedelta(days=30)


async def alt_names(nodes: Iterable[str]) -> list[str]:
    """DNS and IP names of the nodes, as the hub resolves them (a name it cannot resolve is
    left with its DNS entry only: the hub connects by name). Resolved all at once, off the
    hub's loop: a site's DNS or sssd may take a while for each of a partition's nodes."""
    ordered = sorted(set(nodes))
    addresses = await asyncio.gather(*(_address(node) for node in ordered))
    names: list[str] = []
    for node, address in zip(ordered, addresses, strict=True):
        names.append(f"DNS:{node}")
        if address:
            names.append(f"IP:{address}")
    return names


async def _address(node: str) -> str | None:
    """The node's first IPv4 address (as socket.gethostbyname), through the loop's resolver."""
    try:
        found = await asyncio.get_running_loop().getaddrinfo(node, None, family=socket.AF_INET)
    except OSError:
        return None
    return str(found[0][4][0]) if found else None


def notebooks_ca(store_dir: str) -> tuple[x509.Certificate, Any]:
    """The hub's notebooks CA (certificate, key), as JupyterHub's certipy store keeps it."""
    from certipy import Certipy  # JupyterHub's own; imported only where internal_ssl is on

    files = Certipy(store_dir=store_dir).store.get_files(NOTEBOOKS_CA)
    return files.cert.load(), files.key.load()


def _general_name(name: str) -> x509.GeneralName:
    kind, _, value = name.partition(":")
    if kind == "IP":
        return x509.IPAddress(ipaddress.ip_address(value))
    return x509.DNSName(value)


def make_pair(
    ca: tuple[x509.Certificate, Any], common_name: str, names: list[str]
) -> tuple[str, str]:
    """A fresh EC P-256 key and its certificate from the notebooks CA, both PEM.

    Written with `cryptography` rather than certipy's create_signed_pair: that makes an RSA-2048
    key (0.1 to 0.2 s of a 2-core hub, at every spawn) and keeps a record of it on the hub's
    disk; an EC key takes a millisecond and the key never touches the hub's disk. The
    certificate carries what certipy's do (server and client auth, the alt names, the CA's key
    identifier), so JupyterHub's clients and the proxy treat it alike.
    """
    ca_cert, ca_key = ca
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))  # clocks of nodes drift
        .not_valid_after(now + VALID_FOR)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=True,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(_issuer_key(ca_cert)),
            critical=False,
        )
    )
    if names:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([_general_name(n) for n in names]), critical=False
        )
    cert = builder.sign(ca_key, hashes.SHA256())
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return key_pem.decode(), cert.public_bytes(serialization.Encoding.PEM).decode()


async def sign(spawner: Any, nodes: Iterable[str]) -> dict[str, str]:
    """create_certs(): a fresh key and certificate of the hub's notebooks CA for these nodes.

    Unlike stock create_certs, whose answer is paths in the hub's certificate store, this
    answers the key and certificate themselves (PEM, in memory): only move_certs (hand_over)
    reads the answer, and so the key is never on the hub's disk.
    """
    names = await alt_names(nodes)
    if spawner.ssl_alt_names_include_local:
        names = ["DNS:localhost", "IP:127.0.0.1", *names]
    # Read once per hub (its state, HubState.notebooks_ca): the hub makes its CAs at its start
    # and never changes them while it runs.
    cas = hub_state(spawner.user).notebooks_ca
    store = spawner.internal_certs_location
    if store not in cas:
        cas[store] = await asyncio.to_thread(notebooks_ca, store)
    key, cert = await asyncio.to_thread(
        make_pair, cas[store], f"session-{spawner.user.name}", names
    )
    spawner.log.info(
        "TLS certificate for %s: %s", spawner._log_name, ";".join(names) or "(no names)"
    )
    return {"key": key, "cert": cert, "cafile": spawner.internal_trust_bundles[NOTEBOOKS_CA]}


async def hand_over(files: JobFiles, pair: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """move_certs(): the paths the job reads (key and certificate in one 0600 file, the CAs
    beside it), and what goes in each. The spawner writes them as the user together with the
    spawn's token (JobFiles.write_token), a handful of commands fewer per spawn than apart."""
    log_dir = await files.log_dir()
    pem, ca = files.tls_files(log_dir)
    cas = await asyncio.to_thread(Path(pair["cafile"]).read_text)
    # One file holds both: ssl's load_cert_chain reads the key and the certificate from it.
    texts = {pem: pair["key"] + pair["cert"], ca: cas}
    return {"keyfile": pem, "certfile": pem, "cafile": ca}, texts


def _issuer_key(ca_cert: x509.Certificate) -> rsa.RSAPublicKey | ec.EllipticCurvePublicKey:
    """The CA's public key, of a kind a certificate can name its issuer by (the hub's CAs are
    RSA, this module's own are EC)."""
    key = ca_cert.public_key()
    if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        raise ValueError(f"the notebooks' CA has a {type(key).__name__}, neither RSA nor EC")
    return key
