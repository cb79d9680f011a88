"""`python -m portal`: what the hub runs as the managed service."""

from __future__ import annotations

import logging
from urllib.parse import urlparse

import uvicorn

from core.process import die_with_parent
from portal.app import create_app
from portal.settings import PortalSettings


def main() -> None:
    logging.basicConfig(
        level=logging.INFO, format="[%(levelname)s %(asctime)s %(name)s] %(message)s"
    )
    die_with_parent()  # never outlive the hub that runs this service
    settings = PortalSettings()
    url = urlparse(settings.service_url)
    uvicorn.run(
        create_app(settings),
        host=url.hostname or "127.0.0.1",
        port=url.port or 8090,
        proxy_headers=True,
        log_level="info",
    )


if __name__ == "__main__":
    main()
