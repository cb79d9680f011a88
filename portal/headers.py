"""Headers every portal response carries: not framed by other sites, no type sniffing, and a
content policy that allows only the portal's own origin (nothing from a CDN, no plug-ins).
The API docs page follows it: Swagger UI's files are served from the swagger-ui-bundle package.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import swagger_ui_bundle
from fastapi import FastAPI, Request, Response
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

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


def add_security_headers(app: FastAPI) -> None:
    @app.middleware("http")
    async def _headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response


def add_api_docs(app: FastAPI, prefix: str) -> None:
    """The interactive API docs at PREFIX/docs, with Swagger UI from this server, not a CDN."""
    assets = f"{prefix}/static/swagger-ui"
    app.mount(assets, StaticFiles(directory=swagger_ui_bundle.swagger_ui_path), name="swagger-ui")

    @app.get(f"{prefix}/docs", include_in_schema=False)
    async def _docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=f"{prefix}/openapi.json",
            title=f"{app.title} API",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon-32x32.png",
        )
