"""The docs site (`make docs`, docs/) at PREFIX/manual/, where the navigation's "Docs" leads:
a cluster's users read the docs of the version their hub runs, from the hub, with no internet.

Static files, open without a login like the hub's own static files: the docs hold nothing of
the site's. Where they are not built, the page says how to build them instead of a bare 404.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, status
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

# A checkout's build (make docs): the portal package is the checkout's portal/ folder.
CHECKOUT_BUILD = Path(__file__).resolve().parents[1] / "docs" / "_build" / "html"


def built_docs(setting: str) -> Path | None:
    """The folder of the built site: PORTAL_DOCS_DIR, or the checkout's; None if not built."""
    folder = Path(setting) if setting else CHECKOUT_BUILD
    return folder if (folder / "index.html").is_file() else None


def add_manual(app: FastAPI, prefix: str, folder: Path | None) -> None:
    if folder is not None:
        app.mount(f"{prefix}/manual", StaticFiles(directory=folder, html=True), name="manual")
        return

    @app.get(f"{prefix}/manual", include_in_schema=False)
    @app.get(f"{prefix}/manual/{{rest:path}}", include_in_schema=False)
    async def _not_built() -> HTMLResponse:
        return HTMLResponse(NOT_BUILT, status.HTTP_404_NOT_FOUND)


NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>The docs are not here yet</title></head>
<body><h1>The docs are not here yet</h1>
<p>They are not built on this hub. An admin builds them with <code>make docs</code> in the
portal's checkout, or points <code>PORTAL_DOCS_DIR</code> at a built copy.</p>
<p><a href="/hub/home">Back to your sessions</a></p></body></html>
"""
