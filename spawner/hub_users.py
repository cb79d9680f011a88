"""The hub's list of users, page by page, as its REST API gives it to a service (JupyterHub's
paginated form: `items`, and `_pagination.next` until the last page)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

PAGE = 200  # users per page

Call = Callable[[str, str, Any], Awaitable[Any]]


async def each_user(call: Call, query: str) -> AsyncIterator[dict[str, Any]]:
    """Every user's model that `GET /users?QUERY` lists, one page at a time."""
    offset = 0
    while True:
        page = await call("GET", f"/users?{query}&offset={offset}&limit={PAGE}", None)
        for user in page.get("items") or []:
            yield user
        following = (page.get("_pagination") or {}).get("next")
        if not following:
            return
        offset = following["offset"]
