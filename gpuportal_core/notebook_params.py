"""A notebook job's parameters: `name=value` pairs, as papermill's `-p name value` takes them.

Each value is read as YAML (so JSON too): `lr=0.01` is a float, `epochs=20` an int,
`tags=[a, b]` a list, `name=resnet` the string "resnet". The run writes them as Python
assignments into a cell after the one tagged `parameters` (gpuportal_session.notebook_run), as
papermill and Jupyter Scheduler do. They are checked where the job is asked for, so that a bad
one is refused at its field and nothing is submitted.
"""

from __future__ import annotations

import keyword
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


class ParameterError(ValueError):
    """A parameter that cannot be used: what is wrong with it, in words."""


def parse_parameter(text: str) -> tuple[str, Any]:
    """`name=value` -> (name, value): the value read as YAML (JSON is YAML too)."""
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
        value = yaml.safe_load(raw) if raw.strip() else ""
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
    for text in texts:
        name, value = parse_parameter(text)
        if name in parameters:
            raise ParameterError(f"{name} is given twice")
        parameters[name] = value
    return parameters


def _literal(value: Any) -> bool:
    """Whether repr(value) is Python source for it: YAML can also give dates and the like."""
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
