"""`python -m gpuportal_portal`: what the hub runs as the managed service (through
gpuportal_adapters.hub_service).

The portal listens before it imports its app. JupyterHub waits for a managed service's URL
before it routes to any session, polling with an exponential backoff (0.2 s, 0.4 s, ... apart,
up to 5 s): a port that opened after the app's 2 to 3 s of imports was seen up to 3 s late, at
every hub start. Listening first, the hub's first poll is taken at once and waits in the
socket's backlog until the app answers it.
"""

from __future__ import annotations

import logging
import socket
from urllib.parse import urlparse

import uvicorn

from gpuportal_adapters import compat
from gpuportal_core import log_secrets
from gpuportal_portal.settings import PortalSettings


def listen(service_url: str) -> socket.socket:
    url = urlparse(service_url)
    return socket.create_server((url.hostname or "127.0.0.1", url.port or 8090), backlog=128)


def main() -> None:
    compat.install()  # its calls to the hub are TLS (gpuportal_adapters.compat)
    logging.basicConfig(
        level=logging.INFO, format="[%(levelname)s %(asctime)s %(name)s] %(message)s"
    )
    settings = PortalSettings()
    listening = listen(settings.service_url)
    from gpuportal_portal.app import create_app  # FastAPI, SQLAlchemy, JupyterHub's auth

    config = uvicorn.Config(
        create_app(settings),
        proxy_headers=True,
        log_level="info",
        # Open streams (the audit page, a job's output) end on a stop rather than hold it up.
        timeout_graceful_shutdown=2,
    )
    # uvicorn's access log prints the sign-in callback's URL: its code and state redacted.
    log_secrets.install(logging.getLogger("uvicorn.access"), logging.getLogger("uvicorn.error"))
    uvicorn.Server(config).run(sockets=[listening])


if __name__ == "__main__":
    main()
