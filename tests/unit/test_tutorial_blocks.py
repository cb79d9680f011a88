"""Issue 54, item 2: every code block of the tutorials says where it runs, so that
tests/integration/third_hour/test_tutorials.py runs each as written: none escapes the tests."""

from __future__ import annotations

from tests.tutorials import TUTORIALS, WHERE, blocks


def test_every_tutorial_block_says_where_it_runs() -> None:
    found = [block for path in sorted(TUTORIALS.glob("*.md")) for block in blocks(path)]
    assert len(found) >= 6
    unmarked = [f"{b.tutorial}:{b.line}" for b in found if not b.where or not b.fenced]
    assert not unmarked, f"fence these and mark each with '% runs in: ' one of {WHERE}"
