"""Headers every portal response carries: not framed by other sites, no type sniffing, and a
content policy that allows only the portal's own origin (nothing from a CDN, no plug-ins).
The API docs page follows it: Swagger UI's files are served from the fastapi-offline package
(Swagger UI 5: the 4.x of swagger-ui-bundle cannot read the OpenAPI 3.1 that FastAPI writes).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from gpuportal_portal import pages
from gpuportal_portal.deps import PageCaller
from gpuportal_portal.routers.oauth import is_https

# Inline scripts and styles stay allowed: the pages carry small ones of their own.
CONTENT_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "frame-ancestors 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "object-src 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


# Browsers keep to HTTPS for a year once they have seen the site over it.
HSTS = "max-age=31536000"


def add_security_headers(app: FastAPI) -> None:
    @app.middleware("http")
    async def _headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if is_https(request):  # as the hub's pages, on the same origin
            response.headers.setdefault("Strict-Transport-Security", HSTS)
        return response


def add_api_docs(app: FastAPI, prefix: str) -> None:
    """The interactive API docs at PREFIX/docs, with Swagger UI from this server, not a CDN."""
    assets = f"{prefix}/static/swagger-ui"
    files = Path(fastapi_offline.__file__).parent / "static"
    app.mount(assets, StaticFiles(directory=files), name="swagger-ui")

    @app.get(f"{prefix}/docs", include_in_schema=False)
    async def _docs(request: Request, caller: PageCaller) -> HTMLResponse:
        # A page of the product, behind the hub's login like the others (and with their
        # navigation); the OpenAPI document itself stays open to scripts.
        context = {"caller": caller, "assets": assets, "openapi_url": f"{prefix}/openapi.json"}
        return pages.render(request, "docs.html", context)
