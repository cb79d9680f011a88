"""jupyterhub-idle-culler's arbiter: ask the hub whether a server is due under its profile.

Loaded by the culler service through deploy/idle_culler_config.py. The culler computes how long
a server has been inactive, as always; this hook sends that to the hub (gpuportal_spawner.culling),
which answers from the session's profile limits and its GPU readings, and marks the session so that
its stop says why. On any failure to ask, the answer is "keep": a glitch never stops a session.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from typing import Any

from gpuportal_adapters.hub_tls import client_context
from gpuportal_adapters.token_calls import CallFailed, call

log = logging.getLogger("gpuportal.cull")


def check_url(api_url: str) -> str:
    """The hub's cull-check endpoint beside its REST API ("http://h:8081/hub/api")."""
    return api_url.rstrip("/").removesuffix("/api") + "/gpuportal/cull-check"


async def ask_the_hub(
    *, inactive: timedelta | None, inactive_limit: int, server: dict[str, Any], **_: Any
) -> bool:
    """True if the hub says this server is due (idle, or its GPUs idle, past its limit)."""
    if inactive is None:
        return False
    user, _slash, name = str(server.get("full_name", "")).partition("/")
    body = {"user": user, "server": name, "inactive": inactive.total_seconds()}
    try:
        answer = await call(
            check_url(os.environ["JUPYTERHUB_API_URL"]),
            token=os.environ["JUPYTERHUB_API_TOKEN"],
            method="POST",
            body=body,
            timeout=20,
            tls=client_context(),  # the culler service's certificate, under internal TLS
        )
    except CallFailed as error:
        log.warning("Keeping %s/%s: the hub could not be asked (%s)", user, name, error)
        return False
    return isinstance(answer, dict) and answer.get("cull") is True
