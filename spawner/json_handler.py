"""The base of the hub's small JSON endpoints (capacity, sessions, extend, shared boards)."""

from __future__ import annotations

import json
from typing import Any

from jupyterhub.handlers.base import BaseHandler
from jupyterhub.scopes import has_scope

from gpuportal_core import bounded_json


class JsonHandler(BaseHandler):
    # A hub token works here as in the REST API (the `gpuportal` CLI, scripts), besides the
    # browser's cookie; a token must hold the scope each method asks for (require_scope).
    _accept_token_auth = True

    def send(self, body: Any, status: int = 200) -> None:
        """Answer with body as JSON; never cached (it says what the cluster does now)."""
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body))

    def json_body(self) -> dict[str, Any]:
        """The request's JSON object (empty body: {}); ValueError if it is not one, or if it is
        over a megabyte or nests over 32 deep (checked before it is parsed)."""
        body = bounded_json.loads(self.request.body or b"{}")
        if not isinstance(body, dict):
            raise ValueError("send a JSON object")
        return body

    def require_scope(self, scope: str, user: str = "", server: str | None = None) -> bool:
        """Whether the caller holds `scope` for `user` (default: their own), or for one of
        their servers, e.g. "servers", "read:servers"; if not, a 403 that names it has been
        sent. A browser's login holds the user's own.

        JupyterHub's own check (jupyterhub.scopes.has_scope), so that every filter a role may
        carry counts: !user=, !server=, and !group= (read from the hub's database).
        """
        name = user or self.current_user.name
        wanted = f"{scope}!server={name}/{server}" if server is not None else f"{scope}!user={name}"
        if has_scope(wanted, self.parsed_scopes, db=self.db):
            return True
        self.send({"error": f"this token lacks the {scope} scope for {name}"}, 403)
        return False
