"""What the hub changes of JupyterHub's and certipy's own code, each change behind its guards
(gpuportal_adapters.compat says how; docs/explanation/upstream.md has each one and what was
asked of its library):

- a request's user found by id (gpuportal_spawner.user_lookup): JupyterHub's
  `BaseHandler._user_for_cookie` and `find_user`, replaced while their source is 6.1.1's;
- EC P-256 keys for internal TLS (gpuportal_spawner.internal_keys): certipy's
  `Certipy.create_key_pair`, replaced while its source is 0.2.3's.

Both only make the hub faster: on an unknown upstream each is left out, and the hub's log says
so at start. rfc3987_syntax is kept from importing before JupyterHub is (hub_command, with
gpuportal_adapters.compat's IRI_PARSERS, which the session shares). The portal's two routes
ahead of JupyterHub's (gpuportal_spawner.hub_app) are a subclass's, not a patch;
`routes_taken_over` checks at start that JupyterHub still serves a server's stop where the
portal's handler takes its place.
"""

from __future__ import annotations

import logging
from typing import Any

from certipy import Certipy
from jupyterhub.handlers.base import BaseHandler

from gpuportal_adapters.compat import (
    Patch,
    UnknownUpstream,
    apply,
    same_source,
)
from gpuportal_spawner import internal_keys, user_lookup

# The libraries' own, as this process found them (the guards look at these, and the tests
# compare the replacements with them).
LOOKUPS = ("_user_for_cookie", "find_user")
JUPYTERHUB_OWN: dict[str, Any] = {name: getattr(BaseHandler, name) for name in LOOKUPS}
CERTIPY_OWN = Certipy.create_key_pair
# sha256 of their source where the replacements were written against.
UPSTREAM = {
    "_user_for_cookie": "75e6f158a88ad57f3f8b4000c93bd5bdcda8df101ef87e6b1af0aa8a755653f9",
    "find_user": "677565b6727ef13aec9ef3ff1b665cb80ea7355f774199265261c9ea1bd59669",
    "create_key_pair": "97403d71eb1ee78e32e4fde694bd886dd0f295881a95b22ea4654f483a59a26e",
}


def _users_by_id() -> None:
    for name in LOOKUPS:
        setattr(BaseHandler, name, getattr(user_lookup, name))


USERS_BY_ID = Patch(
    "a request's user found by id (gpuportal_spawner.user_lookup)",
    guards=tuple(
        same_source(
            f"JupyterHub's BaseHandler.{name}",
            lambda name=name: JUPYTERHUB_OWN[name],  # type: ignore[misc]
            UPSTREAM[name],
            "jupyterhub 6.1.1",
        )
        for name in LOOKUPS
    ),
    change=_users_by_id,
    done=lambda: BaseHandler.find_user is user_lookup.find_user,
)


def _ec_keys() -> None:
    Certipy.create_key_pair = internal_keys.ec_key_pair


EC_KEYS = Patch(
    "EC P-256 keys for internal TLS (gpuportal_spawner.internal_keys)",
    guards=(
        same_source(
            "certipy's Certipy.create_key_pair",
            lambda: CERTIPY_OWN,
            UPSTREAM["create_key_pair"],
            "certipy 0.2.3",
        ),
    ),
    change=_ec_keys,
    done=lambda: Certipy.create_key_pair is internal_keys.ec_key_pair,
)

AT_START = (USERS_BY_ID, EC_KEYS)


def install(log: logging.Logger, *, internal_ssl: bool) -> list[str]:
    """The hub's patches, at its start (GpuPortalHub.init_logging, before it makes its
    certificates or serves a request); certipy's only where the hub uses it (internal TLS)."""
    return apply(AT_START if internal_ssl else (USERS_BY_ID,), log)


def routes_taken_over(server_paths: list[str]) -> None:
    """JupyterHub's stop of a server is where the portal's handler takes its place (a user's
    default server, a named one): else a stop would skip the portal's wait for a pending spawn,
    unnoticed."""
    if len(server_paths) != 2:
        raise UnknownUpstream(
            "JupyterHub's UserServerAPIHandler serves "
            f"{len(server_paths)} paths, not 2 (jupyterhub 6.1's): the portal's server stop "
            "would not take its place (gpuportal_spawner.hub_app)"
        )
