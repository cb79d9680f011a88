"""Run inside the job: pick a free port, tell the hub, then become jupyterhub-singleuser.

A lighter stand-in for batchspawner-singleuser (no requests or HubAuth import) that sends the
same {"port": N} to the same hub URL.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import urllib.request
from urllib.parse import urlparse, urlunparse


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def report_port(api_url: str, token: str, port: int, *, attempts: int = 10) -> None:
    request = urllib.request.Request(
        api_url.rstrip("/") + "/batchspawner",
        data=json.dumps({"port": port}).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(request, timeout=10):
                return
        except OSError as error:
            if attempt == attempts - 1:
                raise SystemExit(
                    f"could not report the port to the hub at {api_url}: {error}"
                ) from None
            # Up to about a minute in all: long enough to ride out a hub restart.
            time.sleep(min(2**attempt, 10))


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit("usage: gpuportal-singleuser COMMAND [ARGS...]")
    port = free_port()
    report_port(os.environ["JUPYTERHUB_API_URL"], os.environ["JUPYTERHUB_API_TOKEN"], port)
    service_url = os.environ.get("JUPYTERHUB_SERVICE_URL", "")
    if service_url:
        url = urlparse(service_url)
        os.environ["JUPYTERHUB_SERVICE_URL"] = urlunparse(
            url._replace(netloc=f"{url.hostname}:{port}")
        )
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
