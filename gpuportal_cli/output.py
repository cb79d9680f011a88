"""How the CLI prints: aligned columns for people, JSON (--json) for scripts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click


def as_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=True))


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> None:
    """Columns as wide as their longest cell; an empty list says so."""
    if not rows:
        click.echo("(none)")
        return
    cells = [[str(c) for c in headers], *([("" if c is None else str(c)) for c in r] for r in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for number, row in enumerate(cells):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        click.echo(click.style(line.rstrip(), bold=True) if number == 0 else line.rstrip())
