"""JSON bounded before it is parsed (gpuportal_core.bounded_json), as the hub's JSON handlers
read their bodies: each refusal a ValueError with words, in bounded time."""

from __future__ import annotations

import json
import time

import pytest

from gpuportal_core import bounded_json


def test_a_body_nested_past_the_limit_is_refused_before_json_recurses() -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    with pytest.raises(RecursionError):  # what the hub's handlers met: a 500, not a ValueError
        json.loads(deep)
    with pytest.raises(bounded_json.TooDeep, match="nests 200000 deep: at most 32"):
        bounded_json.loads(deep)


def test_a_body_over_the_size_is_refused_before_anything_is_read() -> None:
    with pytest.raises(bounded_json.TooLarge, match="is 1048577 bytes: at most 1048576"):
        bounded_json.loads(b" " * (1024 * 1024 + 1))


def test_brackets_in_strings_are_text_and_escapes_are_followed() -> None:
    text = json.dumps({"a": "[[[[{{{{", "b": ['x"]]]]', "\\"], "c": {"d": [1]}})
    assert bounded_json.depth(text.encode()) == 3
    assert bounded_json.loads(text)["b"] == ['x"]]]]', "\\"]
    assert bounded_json.depth(b"3") == 0


@pytest.mark.parametrize(
    "data",
    [
        b"[" * (1024 * 1024),  # nothing but brackets
        b'"\\"' * 340_000,  # a string of escaped quotes never closed: no match may fail
        b'"' + b"\\" * (1024 * 1024 - 1),
    ],
)
def test_the_depth_of_a_megabyte_is_found_in_bounded_time(data: bytes) -> None:
    started = time.monotonic()
    bounded_json.depth(data)
    # A bound far above its figure here (under 0.2 s), far below a quadratic scan (hours).
    assert time.monotonic() - started < 5


def test_what_passes_is_what_json_reads() -> None:
    body = {"name": "run", "args": ["lr=0.1"], "nested": [[[[1]]]]}
    assert bounded_json.loads(json.dumps(body)) == body
    with pytest.raises(ValueError, match="Expecting property name"):
        bounded_json.loads(b"{")
