"""The base of the hub's small JSON endpoints (capacity, sessions, extend)."""

from __future__ import annotations

import json
from typing import Any

from jupyterhub.handlers.base import BaseHandler


class JsonHandler(BaseHandler):  # type: ignore[misc]
    def send(self, body: Any, status: int = 200) -> None:
        """Answer with body as JSON; never cached (it says what the cluster does now)."""
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body))
