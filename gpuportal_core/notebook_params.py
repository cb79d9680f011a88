"""A notebook job's parameters: `name=value` pairs, as papermill's `-p name value` takes them.

Each value is read as YAML (so JSON too): `lr=0.01` is a float, `epochs=20` an int,
`tags=[a, b]` a list, `name=resnet` the string "resnet". A value is bounded before it is
read (MAX_VALUE_CHARS, MAX_DEPTH) and may not use YAML's aliases: a few hundred characters of
nested anchors expand to millions of values, and an alias of its own anchor to a value that
holds itself (the first took a worker of the portal for good, the second was a 500). The run
writes them as Python
assignments into a cell after the one tagged `parameters` (gpuportal_session.notebook_run), as
papermill and Jupyter Scheduler do. They are checked where the job is asked for, so that a bad
one is refused at its field and nothing is submitted.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# The tag papermill and Jupyter Scheduler look for, and the one the injected cell gets.
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"
# Values that become Python literals as they are (repr gives source that reads back).
_PLAIN = (str, int, float, bool, type(None))
# As any other argument of a job (gpuportal_core.batch): one line of at most this many.
MAX_VALUE_CHARS = 1000
# Lists and mappings inside each other: deeper than any configuration a notebook takes, and far
# short of what PyYAML's composer, which recurses, can nest before Python's recursion limit.
MAX_DEPTH = 16
MAX_PARAMETERS = 100


class ParameterError(ValueError):
    """A parameter that cannot be used: what is wrong with it, in words."""


# PyYAML ships no types (and its stubs are not installed): its classes are Any to mypy.
class _Refused(yaml.YAMLError):  # type: ignore[misc]
    """Raised inside the loader: the words, without the parameter's name."""


class _BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML's safe loader without aliases, and with lists and mappings at most MAX_DEPTH deep.

    Both are refused as the composer meets them, before any value is built."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            raise _Refused("uses a YAML alias (*name): write the value out in full")
        nests = self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent)
        self._depth += nests
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(f"nests lists or mappings over {MAX_DEPTH} deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= nests


def _read_value(raw: str) -> Any:
    """One value as YAML, without aliases and at most MAX_DEPTH deep."""
    loader = _BoundedLoader(raw)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def parse_parameter(text: str) -> tuple[str, Any]:
    """`name=value` -> (name, value): the value read as YAML (JSON is YAML too)."""
    if len(text) > MAX_VALUE_CHARS:  # before anything reads it
        raise ParameterError(
            f"{text[:40]!r}... is {len(text)} characters long: at most {MAX_VALUE_CHARS}"
        )
    name, equals, raw = text.partition("=")
    name = name.strip()
    if not equals:
        raise ParameterError(f"{text!r}: write it as name=value, e.g. learning_rate=0.01")
    if not NAME_RE.fullmatch(name) or keyword.iskeyword(name):
        raise ParameterError(
            f"{name!r} is not a name a notebook can assign: letters, digits and _, "
            "not starting with a digit, not a Python keyword"
        )
    try:
        value = _read_value(raw) if raw.strip() else ""
    except _Refused as refused:
        raise ParameterError(f"{name}: the value {refused}") from None
    except yaml.YAMLError:
        raise ParameterError(
            f"{name}: {raw!r} is not a JSON or YAML value: check its brackets and quotes, or "
            "quote it if it is meant as text"
        ) from None
    if not _literal(value):
        raise ParameterError(
            f"{name}: {raw!r} reads as a {type(value).__name__}, which a notebook cannot be "
            "given; use numbers, text, true/false, null, lists and mappings of them"
        )
    return name, value


def parse_parameters(texts: Iterable[str]) -> dict[str, Any]:
    """All of them, in order; a name given twice is refused (which one was meant?)."""
    parameters: dict[str, Any] = {}
    for count, text in enumerate(texts, start=1):
        if count > MAX_PARAMETERS:
            raise ParameterError(f"at most {MAX_PARAMETERS} parameters")
        name, value = parse_parameter(text)
        if name in parameters:
            raise ParameterError(f"{name} is given twice")
        parameters[name] = value
    return parameters


def _literal(value: Any) -> bool:
    """Whether repr(value) is Python source for it: YAML can also give dates and the like."""
    if isinstance(value, float):
        return math.isfinite(value)  # repr(inf) is no Python literal
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, list):
        return all(_literal(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, _PLAIN) and _literal(item) for key, item in value.items())
    return False


def python_cell(parameters: Mapping[str, Any]) -> str:
    """The injected cell's source: one assignment per parameter, in the order given."""
    lines = ["# Parameters of this run (gpuportal notebook job)"]
    lines += [f"{name} = {value!r}" for name, value in parameters.items()]
    return "\n".join(lines)
