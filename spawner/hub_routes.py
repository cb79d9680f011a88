"""The hub's own endpoints beside JupyterHub's, and the roles and scopes that the users, their
sessions and the hub's services hold: one list each, which deploy/jupyterhub_config.py sets as
c.JupyterHub.extra_handlers, custom_scopes and load_roles.
"""

from __future__ import annotations

from typing import Any

from gpuportal_spawner import admin_entry
from gpuportal_spawner.board_sharing import BOARDS_PATH, BoardsHandler
from gpuportal_spawner.capacity import CAPACITY_PATH, CapacityHandler
from gpuportal_spawner.culling import (
    CULL_CHECK_PATH,
    GPU_ACTIVITY_PATH,
    CullCheckHandler,
    GpuActivityHandler,
)
from gpuportal_spawner.last_session import LAST_SESSION_PATH, LastSessionHandler
from gpuportal_spawner.notebook_definitions import DEFINITIONS_ROUTE, NotebookDefinitionsHandler
from gpuportal_spawner.notebook_jobs import (
    NOTEBOOK_JOBS_ROUTE,
    NOTEBOOK_JOBS_SCOPE,
    SCOPE_DESCRIPTION,
    NotebookJobsHandler,
)
from gpuportal_spawner.notices import NOTICES_PATH, NoticesHandler
from gpuportal_spawner.sessions import EXTEND_PATH, SESSIONS_PATH, ExtendHandler, SessionsHandler


def extra_handlers() -> list[tuple[str, type]]:
    """/hub/gpuportal/...: the spawn page's live capacity (free GPUs, when each profile starts),
    the home page's session cards and "extend", shared TensorBoards, the sessions' GPU readings
    and the culler's check before it stops one."""
    return [
        (rf"/{CAPACITY_PATH}", CapacityHandler),
        (rf"/{SESSIONS_PATH}", SessionsHandler),
        (rf"/{EXTEND_PATH}", ExtendHandler),
        (rf"/{BOARDS_PATH}", BoardsHandler),
        (rf"/{GPU_ACTIVITY_PATH}", GpuActivityHandler),
        (rf"/{CULL_CHECK_PATH}", CullCheckHandler),
        # The cluster team's notices for every page (hub, portal, JupyterLab): from the portal.
        (rf"/{NOTICES_PATH}", NoticesHandler),
        # The home page's line on the last session's use, and a smaller ask that would have done.
        (rf"/{LAST_SESSION_PATH}", LastSessionHandler),
        # JupyterLab's Notebook Jobs in a session: to the portal's jobs API, as the user.
        (NOTEBOOK_JOBS_ROUTE, NotebookJobsHandler),
        (DEFINITIONS_ROUTE, NotebookDefinitionsHandler),
    ]


CUSTOM_SCOPES = {NOTEBOOK_JOBS_SCOPE: {"description": SCOPE_DESCRIPTION}}


def roles(admin_groups: set[str], *, admins_enter: bool = False) -> list[dict[str, Any]]:
    """Every role the hub loads: the users', their sessions', the admins' and the services'."""
    return [
        # Every user may open the portal (its pages decide what they may do there).
        {
            "name": "user",
            "scopes": ["self", "access:services!service=portal", f"{NOTEBOOK_JOBS_SCOPE}!user"],
        },
        # A session's token: JupyterHub's own two, and its user's notebook jobs (not the portal,
        # which refuses a session's token: gpuportal_portal.identity).
        {
            "name": "server",
            "scopes": [
                "users:activity!user",
                "access:servers!server",
                f"{NOTEBOOK_JOBS_SCOPE}!user",
            ],
        },
        # Prometheus reads the hub's and the portal's metrics, and nothing else.
        {
            "name": "prometheus",
            "scopes": ["read:metrics", "access:services!service=portal"],
            "services": ["prometheus"],
        },
        {
            "name": "spawn-resumer",
            "scopes": ["list:users", "read:users", "admin:server_state", "servers"],
            "services": ["spawn-resumer"],
        },
        admin_entry.admin_role(admin_groups, enter=admins_enter),
        {
            "name": "idle-culler",
            "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
            "services": ["idle-culler"],
        },
    ]
