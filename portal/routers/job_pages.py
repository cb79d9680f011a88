"""The jobs page: a form for a multi-node job and a live table of the caller's jobs.

The page talks to the jobs API from the browser (cookie + the page's CSRF token), so the page
and the REST API can never disagree on what is allowed.
"""

from __future__ import annotations

import asyncio
import pwd

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from core.batch import LAUNCHERS
from core.states import states_for_pages
from portal import pages
from portal.deps import PageCaller, SettingsDep

router = APIRouter(include_in_schema=False)


@router.get("/jobs", response_class=HTMLResponse)
async def jobs_page(request: Request, caller: PageCaller, settings: SettingsDep) -> HTMLResponse:
    try:
        home = (await asyncio.to_thread(pwd.getpwnam, caller.name)).pw_dir
    except KeyError:  # not a local user on the portal's host: leave the field for them to fill
        home = ""
    return pages.render(
        request,
        "jobs.html",
        {
            "caller": caller,
            "launchers": LAUNCHERS,
            "states": states_for_pages(),
            "partition": settings.default_partition,
            "home": home,
        },
    )
