"""`gpuportal-hub` is JupyterHub's command without rfc3987_syntax (seconds of its start here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Builds or starts processes: make test runs it, make check leaves it out (issue 53).
pytestmark = pytest.mark.builds

PROBE = """
import atexit, sys
def report():
    print("skipped" if sys.modules.get("rfc3987_syntax", "absent") is None else "imported")
    print("jupyterhub" if "jupyterhub.app" in sys.modules else "no hub")
atexit.register(report)
sys.argv = ["gpuportal-hub", "--version"]
from gpuportal_spawner.hub_command import main
main()
"""


def test_the_hub_command_is_jupyterhubs_without_the_slow_import() -> None:
    ran = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    version, skipped, hub = ran.stdout.split()
    assert ran.returncode == 0, ran.stderr
    import jupyterhub

    assert version == jupyterhub.__version__  # JupyterHub's own main answered
    assert (skipped, hub) == ("skipped", "jupyterhub")
