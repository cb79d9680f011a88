"""Refused spawns are logged as one line (gpuportal_spawner.errors.RefusalsWithoutTraceback)."""

from __future__ import annotations

import logging

import pytest

from gpuportal_spawner.errors import RefusalsWithoutTraceback, spawn_error


def logged(error: Exception, caplog: pytest.LogCaptureFixture) -> logging.LogRecord:
    log = logging.getLogger("test-refusals")
    log.addFilter(RefusalsWithoutTraceback())
    with caplog.at_level(logging.ERROR, logger="test-refusals"):
        try:
            raise error
        except Exception:
            log.error("Failed to spawn single-user server with form", exc_info=True)
    return caplog.records[-1]


def test_a_refusal_is_one_line_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    record = logged(
        spawn_error("runtime must be at least 00:01:00", reason="invalid_options"), caplog
    )
    assert record.exc_info is None
    assert record.getMessage() == (
        "Failed to spawn single-user server with form: refused (invalid_options): "
        "runtime must be at least 00:01:00"
    )
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize(
    "error",
    [spawn_error("Slurm is down", reason="slurm", status_code=503), RuntimeError("bug")],
)
def test_a_fault_keeps_its_traceback(error: Exception, caplog: pytest.LogCaptureFixture) -> None:
    record = logged(error, caplog)
    assert record.exc_info is not None
    assert "Traceback" in caplog.text
