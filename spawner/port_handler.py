"""The hub endpoint a starting job calls with its port: the port and nothing else.

batchspawner's own handler setattr()s any attribute the job posts (exec_prefix,
batch_query_cmd, ...), and some of those are later run through a shell. This one takes a
single integer. The hub routes batchspawner's URL here (gpuportal_spawner.hub_app), so the
stock batchspawner-singleuser keeps working.
"""

from __future__ import annotations

import json
from typing import Any

from jupyterhub.apihandlers import APIHandler
from tornado import web

CALLBACK_PATH = r"/api/batchspawner"


def parse_port(body: Any) -> int:
    """The port from a callback body; anything but exactly {"port": N} is refused."""
    if not isinstance(body, dict) or set(body) != {"port"}:
        keys = sorted(body) if isinstance(body, dict) else type(body).__name__
        raise ValueError(f'send exactly {{"port": N}}; got {keys}')
    port = body["port"]
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an integer from 1 to 65535, got {port!r}")
    return port


class PortCallbackHandler(APIHandler):
    @web.authenticated
    async def post(self) -> None:
        user = self.current_user
        token = self.get_auth_token()
        spawner = next(
            (s for s in getattr(user, "spawners", {}).values() if token and s.api_token == token),
            None,
        )
        if spawner is None:
            raise web.HTTPError(404, "No starting server of yours uses this token.")
        try:
            port = parse_port(self.get_json_body())
        except ValueError as error:
            raise web.HTTPError(400, str(error)) from None
        if not hasattr(spawner, "report_port"):
            # Another spawner (stock batchspawner under wrapspawner, as bench/spawn_latency.py
            # runs it for comparison): the port, as batchspawner's own handler sets it.
            spawner.port = port
            self.set_status(201)
            self.finish(json.dumps({"message": "port recorded"}))
            return
        spawner.report_port(port)  # GpuProfilesSpawner.report_port
        self.log.info("%s reported port %d", spawner._log_name, port)
        if spawner.ready:
            # A session that is already served started again (Slurm requeued its job): point
            # the route at where JupyterLab runs now.
            await self._move_route(user, spawner, await spawner.current_host(), port)
        self.set_status(201)
        self.finish(json.dumps({"message": "port recorded"}))

    async def _move_route(self, user: Any, spawner: Any, host: str, port: int) -> None:
        if not host or spawner.server is None:
            return
        spawner.server.ip, spawner.server.port = host, port
        self.db.commit()
        await self.proxy.add_user(user, spawner.name)
        self.log.info("%s moved to %s:%d", spawner._log_name, host, port)
