"""Sharing a TensorBoard with a hub group: GET/POST /hub/gpuportal/tensorboards.

POST {"folder": "/home/alice/runs", "group": "ds"} starts a named server tb-runs that runs only
TensorBoard on that folder (gpuportal_spawner.board_spawner) and shares it with the group through
JupyterHub's shares (orm.Share: access to that one server, nothing else of the owner's). The
owner stops and removes it like any named server (REST DELETE with remove=true); the shares go
with it. GET lists the user's shared boards and the groups they may share with.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from jupyterhub import orm
from jupyterhub.utils import url_path_join
from tornado import web

from gpuportal_core.boards import BOARD_PREFIX, is_board
from gpuportal_spawner.audit import audit
from gpuportal_spawner.board_spawner import check_folder, hosting_session
from gpuportal_spawner.json_handler import JsonHandler

BOARDS_PATH = "gpuportal/tensorboards"


# Where the TensorBoard notebook (notebooks/05-tensorboard-logging) writes its runs.
WHERE_RUNS_ARE = "the TensorBoard notebook writes its runs to ~/templates/runs"


def board_name(folder: str, taken: dict[str, str]) -> str:
    """tb-<folder's name>, made unique among the user's boards (taken: name -> folder)."""
    slug = re.sub(r"[^a-z0-9]+", "-", folder.rstrip("/").rsplit("/", 1)[-1].lower()).strip("-")
    base = BOARD_PREFIX + (slug[:24].strip("-") or "board")
    name, number = base, 2
    while name in taken and taken[name] != folder:
        name, number = f"{base}-{number}", number + 1
    return name


def board_model(user: Any, spawner: Any, db: Any) -> dict[str, Any]:
    options = spawner.orm_spawner.user_options or {}
    shares = db.query(orm.Share).filter_by(spawner_id=spawner.orm_spawner.id).all()
    state = "running" if spawner.ready else spawner.pending or "stopped"
    return {
        "name": spawner.name,
        "folder": options.get("tensorboard", ""),
        "groups": sorted(share.group.name for share in shares if share.group is not None),
        "url": user.server_url(spawner.name),
        "state": state,
    }


async def user_boards(user: Any, db: Any) -> list[dict[str, Any]]:
    names = sorted(name for name in user.orm_user.orm_spawners if is_board(name))
    for name in names:
        spawner = user.spawners[name]
        if spawner.ready:
            # A board ends with its session: say so now, not at the hub's next poll.
            await spawner.poll_and_notify()
    return [board_model(user, user.spawners[name], db) for name in names]


async def shared_with(user: Any, db: Any, users: Any, base_url: str) -> list[dict[str, Any]]:
    """Other users' boards shared with one of the user's groups: owner, folder, link, state
    (the home page's "Shared with you", so that nobody needs to be sent the URL). users: the
    hub's users (a handler's `users`), to ask a running board's owner's spawner whether it
    still runs: it ends with its owner's session, which the hub learns only at its next poll."""
    group_ids = [group.id for group in user.groups]
    if not group_ids:
        return []
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for share in db.query(orm.Share).filter(orm.Share.group_id.in_(group_ids)):
        spawner, owner = share.spawner, share.owner
        if spawner is None or owner is None or owner.id == user.id or not is_board(spawner.name):
            continue
        if spawner.server is not None and (owner.name, spawner.name) not in seen:
            running = users[owner].spawners[spawner.name]
            if running.ready:
                await running.poll_and_notify()
        entry = seen.setdefault(
            (owner.name, spawner.name),
            {
                "owner": owner.name,
                "name": spawner.name,
                "folder": (spawner.user_options or {}).get("tensorboard", ""),
                "url": url_path_join(base_url, "user", quote(owner.name), spawner.name) + "/",
                "state": "running" if spawner.server is not None else "stopped",
                "groups": [],
            },
        )
        entry["groups"].append(share.group.name)
    return [seen[key] for key in sorted(seen)]


def count_boards(handler: Any) -> int:
    """How many shared boards the requesting user has (they do not count as sessions)."""
    user = handler.current_user
    spawners = getattr(getattr(user, "orm_user", None), "orm_spawners", {}) or {}
    return sum(1 for name in spawners if is_board(name))


class BoardsHandler(JsonHandler):
    @web.authenticated
    async def get(self) -> None:
        if not self.require_scope("read:servers"):
            return
        user = self.current_user
        groups = sorted(group.name for group in user.groups)
        self.send(
            {
                "boards": await user_boards(user, self.db),
                "groups": groups,
                "shared_with_you": await shared_with(user, self.db, self.users, self.base_url),
            }
        )

    @web.authenticated
    async def post(self) -> None:
        if not self.require_scope("servers"):
            return
        user = self.current_user
        try:
            body = self.json_body()
            folder = check_folder(body.get("folder", ""))
            group_name = str(body.get("group", ""))
        except ValueError as error:
            # In the user's words at the form; what the API expects goes beside it, for scripts.
            home = f"/home/{user.name}"
            self.send(
                {
                    "error": f"{error}, e.g. {home}/templates/runs",
                    "field": "folder",
                    "expected": {"folder": f"{home}/templates/runs", "group": "a group of yours"},
                },
                400,
            )
            return
        group = next((g for g in user.groups if g.name == group_name), None)
        if group is None:
            mine = ", ".join(sorted(g.name for g in user.groups)) or "none"
            self.send({"error": f"you can share only with your own groups ({mine})"}, 400)
            return
        host = hosting_session(user)
        if host is None:
            self.send({"error": "a shared TensorBoard runs in your session: start one first"}, 409)
            return
        if not await host.session.files.readable_folder(folder):
            self.send({"error": f"{folder} is not a folder you can read; {WHERE_RUNS_ARE}"}, 400)
            return
        taken = {
            name: (s.user_options or {}).get("tensorboard", "")
            for name, s in user.orm_user.orm_spawners.items()
            if is_board(name)
        }
        name = board_name(folder, taken)
        spawner = user.get_or_create_spawner(
            name, f"TensorBoard {folder}"[:60], replace_failed=True
        )
        orm.Share.grant(self.db, spawner.orm_spawner, group)
        audit("share_tensorboard", user=user.name, server=name, folder=folder, group=group.name)
        groups = sorted(
            s.group.name
            for s in self.db.query(orm.Share).filter_by(spawner_id=spawner.orm_spawner.id)
            if s.group is not None
        )
        if spawner.active and groups != (spawner.user_options or {}).get("groups"):
            # Shared with one more group: restart it, waiting for the whole stop (the handler's
            # stop_single_user returns early on a slow stop).
            await self.proxy.delete_user(user, name)
            await user.stop(name)
        if not spawner.active:
            try:
                await self.spawn_single_user(
                    user, name, options={"tensorboard": folder, "groups": groups}
                )
            except Exception as error:
                # Nothing left behind: no stopped share whose name the next try would skip.
                message = getattr(error, "jupyterhub_message", "") or str(error)
                self.log.warning("Shared TensorBoard %s of %s failed: %s", name, user.name, message)
                # The hub's own removal, as its DELETE .../servers/NAME {"remove": true} does.
                await user._delete_spawner(spawner)
                self.send({"error": f"the TensorBoard could not start: {message}"}, 400)
                return
        self.send({"board": board_model(user, spawner, self.db)}, 201)
