"""No secret in a log line (gpuportal_core.log_secrets): the lines that carried them, as
tornado and uvicorn write them, pass through the filter."""

from __future__ import annotations

import io
import logging

from uvicorn.logging import AccessFormatter

from gpuportal_core.log_secrets import RedactSecrets, install, redact

CALLBACK = "/hub/oauth_callback?session_state=s3ss.ion&code=c0de-123&state=eyJzdGF0ZSI6&next=%2Fhub"


def test_the_sign_in_callbacks_values_go_its_other_parameters_stay() -> None:
    cleaned = redact(f"403 GET {CALLBACK} (127.0.0.1): You signed in as guest")
    assert "c0de-123" not in cleaned and "s3ss.ion" not in cleaned and "eyJzdGF0ZSI6" not in cleaned
    assert "code=[secret]" in cleaned and "session_state=[secret]" in cleaned
    assert "next=%2Fhub" in cleaned and "You signed in as guest" in cleaned


def test_tokens_and_headers() -> None:
    assert redact("GET /api/x?token=abc123") == "GET /api/x?token=[secret]"
    assert redact("Authorization: token 0123abcd sent") == "Authorization: token [secret] sent"
    assert redact("id_token_hint=eyJh.eyJi.sig&client_id=hub").startswith("id_token_hint=eyJ")
    assert redact("/end?id_token_hint=eyJh.eyJi.sig&client_id=hub") == (
        "/end?id_token_hint=[secret]&client_id=hub"
    )
    assert redact("Job 5 ended, exit code 0") == "Job 5 ended, exit code 0"


def run_through(logger: logging.Logger, formatter: logging.Formatter) -> io.StringIO:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    install(logger)
    return out


def test_tornados_warning_line_is_redacted() -> None:
    logger = logging.getLogger("test.tornado.general")
    out = run_through(logger, logging.Formatter("%(message)s"))
    logger.warning("%d %s: %s", 403, f"GET {CALLBACK} (127.0.0.1)", "refused")
    assert "c0de-123" not in out.getvalue() and "code=[secret]" in out.getvalue()


def test_uvicorns_access_line_keeps_its_shape() -> None:
    # uvicorn's AccessFormatter reads the record's arguments, not its message.
    logger = logging.getLogger("test.uvicorn.access")
    out = run_through(
        logger, AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s')
    )
    path = "/services/portal/oauth_callback?code=c0de-123&state=eyJzdGF0ZSI6"
    logger.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:0", "GET", path, "1.1", 302)
    line = out.getvalue()
    assert "c0de-123" not in line and "eyJzdGF0ZSI6" not in line
    assert "GET /services/portal/oauth_callback?code=[secret]&state=[secret] HTTP/1.1" in line
    assert "302" in line


def test_installed_once_per_handler() -> None:
    logger = logging.getLogger("test.twice")
    run_through(logger, logging.Formatter("%(message)s"))
    install(logger)
    assert sum(isinstance(f, RedactSecrets) for f in logger.handlers[0].filters) == 1
