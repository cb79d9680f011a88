"""A page the portal does not have, in the portal's look: a browser that follows an old link
(`/services/portal/jobs/99999`) got FastAPI's `{"detail": "Not Found"}`. The API's own
addresses keep their JSON answers."""

from __future__ import annotations

from fastapi import FastAPI, Request, Response, status
from fastapi.exception_handlers import http_exception_handler
from starlette.exceptions import HTTPException

from gpuportal_portal import pages
from gpuportal_portal.identity import COOKIE_NAME, Caller, HubIdentity, MissingScope


async def _signed_in(request: Request) -> Caller | None:
    """Who reads the page, from the portal's cookie, for the navigation bar and the notices
    every page has (nobody, when there is no cookie or the hub does not know it)."""
    identity: HubIdentity = request.app.state.identity
    token = request.cookies.get(COOKIE_NAME, "")
    try:
        return await identity.caller_for_token(token) if token else None
    except MissingScope:
        return None


def add_page_not_found(app: FastAPI) -> None:
    @app.exception_handler(HTTPException)
    async def _not_found(request: Request, error: HTTPException) -> Response:
        prefix = request.app.state.settings.prefix
        is_api = request.url.path.startswith((f"{prefix}/api", f"{prefix}/openapi"))
        if error.status_code != status.HTTP_404_NOT_FOUND or is_api:
            return await http_exception_handler(request, error)
        return pages.render(
            request,
            "message.html",
            {
                "caller": await _signed_in(request),
                "title": "There is nothing here",
                "message": error.detail
                if error.detail != "Not Found"
                else "No page of the portal is at this address. The Jobs page lists your "
                "jobs; a job's output opens from its row there.",
            },
            status_code=status.HTTP_404_NOT_FOUND,
        )
