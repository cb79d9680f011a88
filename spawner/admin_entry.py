"""An admin who enters another user's server, in the audit stream.

By default admins do not enter users' servers at all: the LDAP admin groups get the role
`cluster-admin` (deploy/jupyterhub_config.py), which manages users and servers without
JupyterHub's `access:servers`. A site that sets PORTAL_ADMINS_ENTER_SESSIONS adds that one
scope to the role, and nothing else: they never become JupyterHub admins, whose `tokens` scope
made a token for the user that reached the server with no consent step and no record. So the
way in is JupyterHub's OAuth consent page, which says why they may (templates/hub/oauth.html),
and each time the hub lets an admin into a server of someone else (an OAuth authorization for
that server's client, granted as a redirect back to it) the audit gets a `session_entered`
record: who, whose server, when.

JupyterHub has no hook in its authorization handler, so this is told of every request the
hub answered (gpuportal_spawner.request_log, tornado's `log_function`) and picks the
authorizations that let an admin in.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from gpuportal_spawner.audit import audit

# What the cluster's admins may do at the hub when they may not enter servers: JupyterHub's
# admin role less access:servers, shares (which could share a server with themselves), tokens
# (a token made for a user acts as that user) and admin:users (which can make an admin).
ADMIN_SCOPES = [
    "admin-ui",
    "list:users",
    "read:users",
    "read:roles:users",
    "delete:users",
    "servers",
    "list:groups",
    "read:groups",
    "list:services",
    "read:services",
    "access:services",
    "read:hub",
    "read:roles",
    "read:metrics",
]


def admin_role(groups: set[str], *, enter: bool = False) -> dict[str, Any]:
    """The role of the admin groups' members (for c.JupyterHub.load_roles); with `enter`
    (PORTAL_ADMINS_ENTER_SESSIONS) they may open users' servers, through the consent page."""
    if enter:
        return {
            "name": "cluster-admin",
            "description": "Manage users and their servers, and open them (audited)",
            "scopes": [*ADMIN_SCOPES, "access:servers"],
            "groups": sorted(groups),
        }
    return {
        "name": "cluster-admin",
        "description": "Manage users and their servers (start, stop), without entering them",
        "scopes": ADMIN_SCOPES,
        "groups": sorted(groups),
    }


def is_cluster_admin(handler: Any, user: Any) -> bool:
    """Whether the user is in one of the admin groups (the authenticator's admin_ldap_groups)."""
    admins = set(getattr(getattr(handler, "authenticator", None), "admin_ldap_groups", ()) or ())
    return bool(admins & {getattr(group, "name", group) for group in getattr(user, "groups", ())})


# A server's OAuth callback: /user/OWNER/oauth_callback or /user/OWNER/SERVER/oauth_callback.
_CALLBACK = re.compile(r"/user/(?P<owner>[^/]+)/(?:(?P<server>[^/]+)/)?oauth_callback$")


def entered_server(handler: Any, user: Any) -> tuple[str, str] | None:
    """(owner, server) when this request let the admin `user` into another user's server."""
    if not handler.request.path.endswith("/oauth2/authorize") or handler.get_status() != 302:
        return None
    if not (getattr(user, "admin", False) or is_cluster_admin(handler, user)):
        return None
    callback = _CALLBACK.search(urlsplit(handler.get_argument("redirect_uri", "")).path)
    if callback is None or callback["owner"] == user.name:
        return None
    return callback["owner"], callback["server"] or ""


def audit_entry(handler: Any, user: Any) -> None:
    entry = entered_server(handler, user)
    if entry is not None:
        owner, server = entry
        audit(
            "session_entered",
            user=owner,
            server=server,
            by=user.name,
            role="admin",
            address=handler.request.remote_ip,
        )
