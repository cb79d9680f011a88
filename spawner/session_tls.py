"""Internal TLS for sessions on compute nodes: JupyterHub's `internal_ssl` where batchspawner
never had it (jupyterhub/batchspawner#192).

JupyterHub signs a server's certificate before `Spawner.start()` (`create_certs`) and leaves it
to `move_certs` to bring it where the server runs. A Slurm job's node is known only once the
job runs, so the certificate names every node the job may be placed on (the partition's nodes
that can hold it), by name and by the address the name resolves to here: the hub and the proxy
connect by name and check it. The key and certificate reach the job as its token does: a 0600
file in the user's log folder, written as the user (spawner.job_files); the job's environment
holds only their paths (JUPYTERHUB_SSL_KEYFILE, ...), and the hub keeps no copy of the key.

JupyterLab then serves only TLS and accepts only clients whose certificate the hub's CAs signed
(the hub's and the proxy's): another user's process, with a session certificate of its own,
is refused at the handshake.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spawner.job_files import JobFiles

NOTEBOOKS_CA = "notebooks-ca"
# certipy keeps its records in one JSON file: one signing at a time in this process.
_signing = asyncio.Lock()


def alt_names(nodes: Iterable[str]) -> list[str]:
    """DNS and IP names of the nodes, as the hub resolves them (a name it cannot resolve is
    left with its DNS entry only: the hub connects by name)."""
    names: list[str] = []
    for node in sorted(set(nodes)):
        names.append(f"DNS:{node}")
        with contextlib.suppress(OSError):
            names.append(f"IP:{socket.gethostbyname(node)}")
    return names


async def sign(spawner: Any, nodes: Iterable[str]) -> dict[str, str]:
    """A fresh key and certificate of the hub's notebooks CA for these nodes, in the hub's
    internal certificate store: create_certs()'s answer (the files' paths)."""
    from certipy import Certipy  # JupyterHub's own; imported only where internal_ssl is on

    names = alt_names(nodes)
    if spawner.ssl_alt_names_include_local:
        names = ["DNS:localhost", "IP:127.0.0.1", *names]
    # One record per spawn, removed once handed over: two spawns never share files.
    record_name = f"session-{spawner.user.name}-{uuid.uuid4().hex[:12]}"

    def make() -> dict[str, str]:
        store = Certipy(store_dir=spawner.internal_certs_location)
        pair = store.create_signed_pair(record_name, NOTEBOOKS_CA, alt_names=names)
        return {
            "keyfile": pair["files"]["key"],
            "certfile": pair["files"]["cert"],
            "cafile": spawner.internal_trust_bundles[NOTEBOOKS_CA],
            "record": record_name,
        }

    async with _signing:
        paths = await asyncio.to_thread(make)
    spawner.log.info(
        "TLS certificate for %s: %s", spawner._log_name, ";".join(names) or "(no names)"
    )
    return paths


async def hand_over(spawner: Any, files: JobFiles, paths: dict[str, str]) -> dict[str, str]:
    """move_certs(): key and certificate into the user's 0600 file, the CAs beside it; the
    hub's copy removed. Answers the paths the job reads."""
    from certipy import Certipy

    def read(name: str) -> str:
        return Path(paths[name]).read_text()

    log_dir = await files.log_dir()
    pem, ca = files.tls_files(log_dir)
    try:
        key, cert, cas = await asyncio.to_thread(
            lambda: [read(n) for n in ("keyfile", "certfile", "cafile")]
        )
        await files.write_private(log_dir, pem, key + cert)
        await files.write_private(log_dir, ca, cas)
    finally:

        def forget() -> None:
            Certipy(store_dir=spawner.internal_certs_location).store.remove_files(
                paths["record"], delete_dir=True
            )

        async with _signing:
            await asyncio.to_thread(forget)
    # One file holds both: ssl's load_cert_chain reads the key and the certificate from it.
    return {"keyfile": pem, "certfile": pem, "cafile": ca}
