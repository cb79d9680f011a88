"""A TLS handshake between two SSL contexts, in memory (no socket), for the tests of the hub's
and the sessions' certificates."""

from __future__ import annotations

import contextlib
import ssl


def handshake(
    server: ssl.SSLContext, client: ssl.SSLContext, server_hostname: str
) -> tuple[ssl.SSLObject, ssl.SSLObject]:
    """The client's and the server's ends once the handshake is done (either raises
    ssl.SSLError where a certificate is refused)."""
    server_side, client_side = ssl.MemoryBIO(), ssl.MemoryBIO()
    served = server.wrap_bio(server_side, client_side, server_side=True)
    asking = client.wrap_bio(client_side, server_side, server_hostname=server_hostname)
    for _ in range(10):  # each end answers what the other wrote, until both are done
        for end in (asking, served):
            with contextlib.suppress(ssl.SSLWantReadError):
                end.do_handshake()
    return asking, served
