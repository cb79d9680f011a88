"""gpuportal-singleuser, the in-job launcher: the port report, the exec, the skipped import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import pytest

from gpuportal_session.singleuser import report_port

# Builds or starts processes: make test runs it, make check leaves it out (issue 53).
pytestmark = pytest.mark.builds


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.path, self.headers["Authorization"], body))
        self.send_response(201)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def fake_hub() -> Iterator[str]:
    _Recorder.seen = []
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hub/api"
    server.shutdown()
    server.server_close()


def test_report_port_sends_only_the_port_with_the_token(fake_hub: str) -> None:
    report_port(fake_hub + "/", "secret-token", 43210)
    assert _Recorder.seen == [("/hub/api/batchspawner", "token secret-token", b'{"port": 43210}')]


def test_report_port_gives_up_with_a_clear_message() -> None:
    with pytest.raises(SystemExit, match="could not report the port to the hub at http://127"):
        report_port("http://127.0.0.1:9/hub/api", "t", 1, attempts=1)


def test_other_commands_are_execed_with_the_reported_port_in_their_service_url(
    fake_hub: str,
) -> None:
    env = dict(
        os.environ,
        JUPYTERHUB_API_URL=fake_hub,
        JUPYTERHUB_API_TOKEN="tok",
        JUPYTERHUB_SERVICE_URL="http://0.0.0.0:0/user/alice/",
    )
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuportal_session.singleuser",
            "sh",
            "-c",
            "echo $JUPYTERHUB_SERVICE_URL",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    port = json.loads(_Recorder.seen[0][2])["port"]
    assert shown == f"http://0.0.0.0:{port}/user/alice/"


def in_a_fresh_interpreter(code: str) -> str:
    """What code prints, run by a Python of its own (sys.modules is process-wide: the skips
    must not change this one's)."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_skipped_import_leaves_jupyter_server_and_its_event_schemas_working() -> None:
    # In a fresh interpreter: sys.modules is process-wide, and this test must not change ours.
    code = """
import sys
from gpuportal_session.singleuser import skip_slow_imports
skip_slow_imports()
try:
    import rfc3987_syntax
except ImportError:
    pass
else:
    raise SystemExit("rfc3987_syntax was imported")
import jupyter_server.serverapp
from jupyter_events.schema import EventSchema
from jsonschema import ValidationError
schema = {
    "$id": "https://example.org/portal/test", "version": "1", "type": "object",
    "properties": {"when": {"type": "string", "format": "date-time"}},
}
EventSchema(schema).validate({"when": "2026-11-22T10:00:00Z"})
try:
    EventSchema(schema).validate({"when": 5})
except ValidationError:
    print("validated")
"""
    assert in_a_fresh_interpreter(code) == "validated"


def test_httpx_without_its_command_line_client_still_works() -> None:
    code = """
import sys
from gpuportal_session.singleuser import skip_slow_imports
skip_slow_imports()
import jupyterlab.extensions  # the extension manager, which imports httpx
import httpx
assert not [m for m in ("rich", "pygments", "click") if m in sys.modules]
assert httpx.Client and httpx.AsyncClient
print("ok")
"""
    assert in_a_fresh_interpreter(code) == "ok"


def test_the_hubs_database_layer_is_not_imported_and_still_there_if_used() -> None:
    # In a fresh interpreter, as the session's server starts.
    code = """
import sys
from gpuportal_session.singleuser import skip_hub_database
skip_hub_database()
import jupyterhub.singleuser
from jupyterhub.log import log_request
heavy = [m for m in ("alembic", "sqlalchemy.orm", "jupyterhub.handlers.base") if m in sys.modules]
assert not heavy, heavy

class Request:
    method, uri, remote_ip, headers = "GET", "/user/alice/api/status", "10.0.0.1", {}
    def request_time(self):
        return 0.01

class Handler:
    request = Request()
    current_user = None
    def get_status(self):
        return 200

log_request(Handler())  # the isinstance() against the hub's health check: a stand-in class
import jupyterhub.orm
assert jupyterhub.orm.User.__tablename__ == "users"  # loaded when used
import jupyterhub.handlers.base  # another of the handlers' modules still imports
print("ok")
"""
    assert in_a_fresh_interpreter(code) == "ok"


@pytest.mark.parametrize("skipped", [False, True])
def test_jupyterlab_is_imported_without_running_node_for_yarn(tmp_path, skipped: bool) -> None:
    # A `node` on PATH that leaves a mark: JupyterLab runs it at import (yarn's registry)
    # unless skip_yarn_config came first. The unskipped run shows the test can see it.
    mark = tmp_path / "node-ran"
    node = tmp_path / "node"
    node.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    node.chmod(0o755)
    code = "import jupyterlab.labapp"
    if skipped:
        code = (
            "from gpuportal_session.singleuser import skip_yarn_config\nskip_yarn_config()\n" + code
        )
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert mark.exists() is not skipped


def test_python_dash_m_runs_jupyterhub_singleuser_in_process(fake_hub: str) -> None:
    # The job runs `python -m gpuportal_session.singleuser jupyterhub-singleuser ...` (the Python
    # of the chosen environment); --version stands in for a real start.
    env = dict(os.environ, JUPYTERHUB_API_URL=fake_hub, JUPYTERHUB_API_TOKEN="tok")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuportal_session.singleuser",
            "jupyterhub-singleuser",
            "--version",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    import jupyterhub

    assert result.stdout.strip() == jupyterhub.__version__
    assert json.loads(_Recorder.seen[0][2])["port"] > 0
