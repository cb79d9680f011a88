"""The CLI's HTTP side: where the token comes from, and refusals in the server's words."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from gpuportal_cli import client
from gpuportal_cli.client import CliError, _detail, find_token


def answer(status: int, body: bytes) -> requests.Response:
    response = requests.Response()
    response.status_code, response._content = status, body
    return response


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"detail": "No job 9 of yours."}', "No job 9 of yours."),
        (
            b'{"detail": [{"loc": ["body", "nodes"], "msg": "must be at least 1"}]}',
            "nodes: must be at least 1",
        ),
        (b'{"error": "only a running session can be extended"}', "only a running session"),
        (b'{"status": 409, "message": "already has the maximum"}', "already has the maximum"),
        (b"<html>Bad gateway</html>", "<html>Bad gateway</html>"),
    ],
)
def test_refusals_are_told_in_the_servers_words(body: bytes, said: str) -> None:
    assert _detail(answer(400, body)).startswith(said)


def test_the_token_comes_from_the_option_the_environment_or_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GPUPORTAL_TOKEN", raising=False)
    monkeypatch.setattr(client, "TOKEN_FILE", tmp_path / "token")
    with pytest.raises(CliError, match="Make one on the hub's Token page"):
        find_token(None)
    (tmp_path / "token").write_text("from-file\n")
    assert find_token(None) == "from-file"
    monkeypatch.setenv("GPUPORTAL_TOKEN", "from-env")
    assert find_token(None) == "from-env"
    assert find_token(" given ") == "given"
