"""No secret in a log line: the values of a URL's secret parameters (a sign-in's `code`,
`state` and `session_state`, tokens, nonces) and of Authorization headers become [secret].

JupyterHub scrubs the URLs of its own access log, but not those other lines carry: tornado's
warning for a refused request prints the whole URL (`403 GET /hub/oauth_callback?code=...`),
and uvicorn's access log prints the portal's callback the same way. One filter on the
processes' log handlers catches every line, whoever wrote it:

    install(logging.getLogger("uvicorn.access"), ...)   # each logger's handlers, and root's
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

SECRET = "[secret]"
# A query parameter whose name holds one of these words (as JupyterHub's SCRUB_PARAM_KEYS,
# and more): its value, up to the next separator.
_PARAMETER = re.compile(
    r"(?P<name>(?<=[?&;])[\w.-]*(?:code|state|token|auth|key|nonce|secret|verifier|_xsrf)"
    r"[\w.-]*=)(?P<value>[^&\s\"';#]+)",
    re.IGNORECASE,
)
_HEADER = re.compile(
    r"(?P<name>\b(?:authorization|cookie|set-cookie)\s*[:=]\s*['\"]?(?:(?:token|bearer|basic)\s+)?)"
    r"(?P<value>[^\s'\",]+)",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """The text with every secret value replaced."""
    text = _PARAMETER.sub(lambda m: m["name"] + SECRET, text)
    return _HEADER.sub(lambda m: m["name"] + SECRET, text)


class RedactSecrets(logging.Filter):
    """Redacts a record's message and its arguments (uvicorn's access formatter reads the
    arguments, not the message, so both are redacted and each keeps its shape)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {
                k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()
            }
        return True


def install(*loggers: logging.Logger) -> None:
    """The filter on the handlers of these loggers and of the root logger (once each)."""
    for logger in (*loggers, logging.getLogger()):
        for handler in logger.handlers:
            if not any(isinstance(f, RedactSecrets) for f in handler.filters):
                handler.addFilter(RedactSecrets())
