"""JSON a user sends, bounded before it is parsed: its size, then how deep it nests.

Python's json recurses once per level: a megabyte of `[` is a RecursionError (a 500 where a
caller only expects ValueError), and a body of a hundred megabytes, which tornado and uvicorn
take by default, is held in memory several times over while it is read. Both limits are
checked on the bytes, before json.loads builds anything. The hub's JSON handlers read their
bodies through `loads`; the portal's body limit (gpuportal_portal.body_limit) uses the same
two checks before FastAPI parses a body.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

# The product's own bodies are a few kilobytes (a job request with its parameters and
# environment is the largest); a megabyte leaves room for any of them.
MAX_BYTES = 1024 * 1024
# Deeper than any body the product takes (a notebook parameter's value nests 16 at most).
MAX_DEPTH = 32

# A JSON string, escapes included: its brackets are text, not nesting. One left open runs to
# the end, so that no match fails: a failed one would be tried again from every later quote
# (quadratic in a body of escaped quotes).
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class TooLarge(ValueError):
    """A body over the size limit (413)."""


class TooDeep(ValueError):
    """A body that nests over the depth limit (422)."""


def check_size(size: int, *, max_bytes: int = MAX_BYTES) -> None:
    if size > max_bytes:
        raise TooLarge(f"the body is {size} bytes: at most {max_bytes} are taken here")


def depth(data: bytes) -> int:
    """How deep the JSON text's arrays and objects nest (0 for a plain value).

    Strings are taken out first; what is left is counted in C (translate, accumulate), about
    20 ms a megabyte, so that a body of nothing but brackets costs no more than any other."""
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def check_depth(data: bytes, *, max_depth: int = MAX_DEPTH) -> None:
    deepest = depth(data)
    if deepest > max_depth:
        raise TooDeep(f"the body nests {deepest} deep: at most {max_depth}")


def loads(data: bytes | str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, after the size and depth checks; every refusal is a ValueError with words."""
    raw = data.encode() if isinstance(data, str) else data
    check_size(len(raw), max_bytes=max_bytes)
    check_depth(raw, max_depth=max_depth)
    return json.loads(raw)
