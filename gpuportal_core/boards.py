"""Shared TensorBoards are named servers of their own kind: `tb-<folder's name>`. Known here,
without JupyterHub, by the hub's spawners and by the services that look at its servers."""

from __future__ import annotations

BOARD_PREFIX = "tb-"


def is_board(server_name: str) -> bool:
    return server_name.startswith(BOARD_PREFIX)
