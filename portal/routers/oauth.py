"""The end of the hub's OAuth round trip for browsers: trade the code for the user's token."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import RedirectResponse

from gpuportal_portal.deps import IdentityDep
from gpuportal_portal.identity import COOKIE_NAME, STATE_COOKIE_NAME

router = APIRouter(include_in_schema=False)


def is_https(request: Request) -> bool:
    return request.headers.get("x-forwarded-proto", request.url.scheme) == "https"


@router.get("/oauth_callback")
async def oauth_callback(
    request: Request, identity: IdentityDep, code: str = "", state: str = ""
) -> RedirectResponse:
    prefix: str = request.app.state.settings.prefix
    expected = request.cookies.get(STATE_COOKIE_NAME, "")
    if not code or not state or state != expected:
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST,
            f"This login link is stale or was not started here; open {prefix}/ again.",
        )
    token, next_url = await identity.finish_login(code, state)
    if not next_url.startswith(prefix + "/"):
        next_url = prefix + "/"  # never an open redirect
    response = RedirectResponse(next_url, status.HTTP_302_FOUND)
    response.set_cookie(
        COOKIE_NAME,
        token,
        path=prefix + "/",
        httponly=True,
        samesite="lax",
        secure=is_https(request),
    )
    response.delete_cookie(STATE_COOKIE_NAME, path=prefix + "/")
    return response
