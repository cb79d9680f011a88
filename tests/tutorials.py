"""The tutorials' code blocks, each with where it runs, as tests run them (issue 54: a tutorial
that breaks fails `make test`).

Every code block of docs/tutorials/ is fenced and follows a MyST comment line that says where a
reader runs it; tests/unit/test_docs.py refuses a block without one:

    % runs in: login-shell        a shell on the login host, as the reader (the CLI, curl)
    % runs in: session-terminal   the terminal of the reader's running session
    % runs in: notebook           a cell of a notebook in that session
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

TUTORIALS = Path(__file__).resolve().parent.parent / "docs" / "tutorials"
WHERE = ("login-shell", "session-terminal", "notebook")
_MARK = re.compile(r"^%\s*runs in:\s*(\S+)\s*$")


@dataclass(frozen=True)
class Block:
    tutorial: str
    line: int  # where the block starts, 1-based
    where: str  # one of WHERE, or "" where the mark is missing or unknown
    code: str
    fenced: bool


def blocks(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    found = []
    for token in MarkdownIt("commonmark").parse("\n".join(lines)):
        if token.type not in ("fence", "code_block") or token.map is None:
            continue
        if token.info.startswith("{"):
            continue  # a MyST directive ({image}), not code
        start = token.map[0]
        above = [line for line in lines[:start] if line.strip()]
        mark = _MARK.match(above[-1].strip()) if above else None
        where = mark.group(1) if mark and mark.group(1) in WHERE else ""
        found.append(Block(path.name, start + 1, where, token.content, token.type == "fence"))
    return found


def tutorial_blocks(name: str, where: str) -> list[Block]:
    return [block for block in blocks(TUTORIALS / name) if block.where == where]
