"""The jobs page: a form for a multi-node job and a live table of the caller's jobs.

The page talks to the jobs API from the browser (cookie + the page's CSRF token), so the page
and the REST API can never disagree on what is allowed.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from portal import pages
from portal.deps import PageCaller, SettingsDep
from spawner.core.batch import LAUNCHERS

router = APIRouter(include_in_schema=False)


@router.get("/jobs", response_class=HTMLResponse)
def jobs_page(request: Request, caller: PageCaller, settings: SettingsDep) -> HTMLResponse:
    return pages.render(
        request,
        "jobs.html",
        {
            "caller": caller,
            "launchers": LAUNCHERS,
            "partition": settings.default_partition,
            "home": f"/home/{caller.name}",
        },
    )
