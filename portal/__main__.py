"""`python -m gpuportal_portal`: what the hub runs as the managed service (through
gpuportal_core.hub_service)."""

from __future__ import annotations

import logging
from urllib.parse import urlparse

import uvicorn

from gpuportal_portal.app import create_app
from gpuportal_portal.settings import PortalSettings


def main() -> None:
    logging.basicConfig(
        level=logging.INFO, format="[%(levelname)s %(asctime)s %(name)s] %(message)s"
    )
    settings = PortalSettings()
    url = urlparse(settings.service_url)
    uvicorn.run(
        create_app(settings),
        host=url.hostname or "127.0.0.1",
        port=url.port or 8090,
        proxy_headers=True,
        log_level="info",
        # Open streams (the audit page, a job's output) end on a stop rather than hold it up.
        timeout_graceful_shutdown=2,
    )


if __name__ == "__main__":
    main()
