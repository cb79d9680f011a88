"""How many named sessions a user runs at a time: the home page's "You may run N named sessions".

JupyterHub's named_server_limit_per_user counts every named server it keeps, running or stopped,
so a user who had stopped two named sessions could start no third, and met JupyterHub's bare
"400: already has the maximum of 2 named servers" page. Here JupyterHub's limit only caps what
is kept (the running limit, the shared boards, and KEPT_STOPPED stopped sessions, which are
remembered settings with Start and Remove on their cards), and the running limit is checked
before a spawn, in words that say what to do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuportal_core.boards import is_board
from gpuportal_spawner.board_sharing import count_boards
from gpuportal_spawner.errors import spawn_error

# Stopped named sessions kept besides the running ones; past that, one must be removed.
KEPT_STOPPED = 10


def kept_limit(running: int) -> Callable[[Any], int]:
    """JupyterHub's named_server_limit_per_user: every named server it may keep for a user."""

    def limit(handler: Any) -> int:
        return running + count_boards(handler) + KEPT_STOPPED

    return limit


def running_named(user: Any, *, besides: str) -> list[str]:
    """The user's named sessions that run or are starting (not shared boards), but `besides`."""
    return sorted(
        name
        for name, spawner in user.spawners.items()
        if name and name != besides and not is_board(name) and spawner.active
    )


def check_running_limit(user: Any, name: str, limit: int) -> None:
    """Refuse a named session past the running limit, naming the ones that run."""
    if not name or is_board(name) or limit <= 0:
        return
    running = running_named(user, besides=name)
    if len(running) < limit:
        return
    sessions = "session" if limit == 1 else "sessions"
    raise spawn_error(
        f"You already run {limit} named {sessions} ({', '.join(running)}), the most at a time. "
        f"Stop one on your home page, then start {name!r}.",
        reason="named_session_limit",
        status_code=409,
    )
