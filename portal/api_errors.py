"""The error answers of the portal's API, as its OpenAPI document declares them.

Every error is {"detail": ...}: words saying what to fix (a list of field problems for 422,
which FastAPI declares itself). Each router declares the codes its routes can give.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Problem(BaseModel):
    detail: str


_MEANING = {
    400: "Slurm refused the job; detail is its reason.",
    401: "No token, or not a hub API token: send 'Authorization: token <token>'.",
    403: "The token may not use the portal, or this caller may not do this.",
    404: "No such item for this caller.",
    409: "It conflicts with the current state (a newer version, a reused key, a slug taken).",
    413: "The body is over 1 MiB (gpuportal_portal.body_limit): send less.",
    503: "Slurm or the cluster could not be asked; nothing was changed. Try again.",
}


def declared(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The `responses` entry of a router for these error codes, and 413, which any request
    with a body over the limit gets before a route sees it."""
    return {code: {"model": Problem, "description": _MEANING[code]} for code in (*codes, 413)}
