"""No Python file reads a PORTAL_* variable by hand: the settings models are the one reader
(gpuportal_adapters.settings, gpuportal_portal.settings). The docs' settings reference is generated
from them (tests/unit/test_docs.py checks it names every one)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_python_file_reads_a_portal_variable_by_hand() -> None:
    by_hand = []
    for folder in (
        "gpuportal_core",
        "gpuportal_adapters",
        "spawner",
        "portal",
        "deploy",
        "gpuportal_session",
    ):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            if re.search(r"environ(\.get)?\s*[\[(]\s*[\"']PORTAL_", text):
                by_hand.append(str(path.relative_to(ROOT)))
    assert by_hand == []
