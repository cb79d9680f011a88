"""The portal listens before it imports its app, so the hub's first look at its URL is
answered as soon as the app is up (JupyterHub's backoff would otherwise see it seconds late)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Builds or starts processes: make test runs it, make check leaves it out (issue 53).
pytestmark = pytest.mark.builds


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_port_takes_a_request_before_the_app_is_imported(tmp_path: Path) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}",
        "JUPYTERHUB_API_TOKEN": "secret",
        "PORTAL_DATABASE_URL": f"sqlite:///{tmp_path / 'portal.db'}",
        "PORTAL_SLURM_BIN_DIR": str(tmp_path / "no-slurm"),
        "PORTAL_JOB_LOOK_SECONDS": "0",
        "PORTAL_USE_LOOK_SECONDS": "0",
    }
    # -X importtime writes a line to stderr as each import completes.
    imports = tmp_path / "imports.txt"
    with imports.open("w") as stderr:
        portal = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "gpuportal_portal"],
            env=env, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert portal.poll() is None, imports.read_text()[-2000:]
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "the portal never listened"
                time.sleep(0.02)
        imported_when_accepted = "gpuportal_portal.app" in imports.read_text()
        with connection:
            connection.sendall(b"GET /services/portal/docs HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = connection.recv(64)
    finally:
        portal.terminate()
        portal.wait(timeout=30)
    assert not imported_when_accepted, "the port opened only after the app's imports"
    # The early request, answered by the app (the docs ask the browser to log in first).
    assert answer.startswith(b"HTTP/1.1 302"), answer
