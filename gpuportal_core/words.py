"""Small helpers for the words pages say: counts with the right plural."""

from __future__ import annotations


def count(number: int, noun: str) -> str:
    """'1 GPU', '2 GPUs', '0 nodes': a number and its noun, singular only for one."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
