"""EC P-256 keys for JupyterHub's internal TLS (`internal_ssl`), where certipy makes RSA-2048.

In every TLS handshake the server signs with its key, and under internal_ssl the client signs
too (both certificates are checked). An RSA-2048 signature takes 1.1 ms of this machine's CPU,
an EC P-256 one 0.04 ms (`openssl speed rsa2048 ecdsap256`), and the hub is on one side of most
internal connections: each session's GPU reading, activity report and port callback, each
service's call, the hub's calls to the proxy's API and to the sessions.
`python -m bench.tls_handshake` prints what a new connection costs the server with each key.

certipy, JupyterHub's certificate store, makes only RSA keys (its `KeyType` has no other kind),
and JupyterHub has no setting for the kind. gpuportal_spawner.compat has certipy make EC
P-256 keys in the hub's process (while certipy's method is 0.2.3's): the hub's CAs, its own
certificate and the proxy's (made at the hub's first start), and each managed service's (made
at each start). Sessions' keys are EC already
(gpuportal_spawner.session_tls). A certificate store made before keeps its RSA keys until it is
made again (docs/how-to/upgrades.md says when that is safe).
"""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec


def ec_key_pair(self: Any, cert_type: Any = None, bits: int = 0) -> ec.EllipticCurvePrivateKey:
    """certipy's `create_key_pair(cert_type, bits)`, answering an EC P-256 key whatever the
    kind and size asked (certipy asks RSA-2048 for everything)."""
    return ec.generate_private_key(ec.SECP256R1())
