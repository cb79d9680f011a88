"""Spawn errors as the user reads them."""

from __future__ import annotations

from jupyterhub.spawner import SpawnException


def spawn_error(message: str, *, reason: str, status_code: int = 400) -> SpawnException:
    """A SpawnException whose page and API text is just the message.

    JupyterHub shows `jupyterhub_message` when set, else the exception's repr
    ("400 SpawnException(reason=...): ..."), which is noise to a user.
    """
    error = SpawnException(message, reason=reason, status_code=status_code)
    error.jupyterhub_message = message  # type: ignore[attr-defined]
    return error
