"""Spawn errors as the user reads them."""

from __future__ import annotations

import logging

from jupyterhub.spawner import SpawnException


def spawn_error(
    message: str, *, reason: str, status_code: int = 400, field: str = ""
) -> SpawnException:
    """A SpawnException whose page and API text is just the message.

    JupyterHub shows `jupyterhub_message` when set, else the exception's repr
    ("400 SpawnException(reason=...): ..."), which is noise to a user. field: the form field
    at fault, if one is (see gpuportal_core.request.InvalidRequest).
    """
    error = SpawnException(message, reason=reason, status_code=status_code)
    error.jupyterhub_message = message
    error.field = field
    return error


class RefusalsWithoutTraceback(logging.Filter):
    """Logs a refused spawn (a SpawnException under 500) as one line, without its traceback.

    JupyterHub's spawn form handler logs every error with exc_info; a refusal (bad options,
    a limit) is the user's, not a fault of the hub, and a traceback would bury real ones.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, SpawnException) and error.status_code < 500:
            record.msg = f"{record.getMessage()}: refused ({error.reason}): {error.log_message}"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True
