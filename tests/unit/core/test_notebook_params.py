"""A notebook job's name=value parameters (gpuportal_core.notebook_params): read as YAML,
refused with words where a notebook could not be given them."""

from __future__ import annotations

import pytest

from gpuportal_core.notebook_params import ParameterError, parse_parameters, python_cell


def test_values_are_read_as_yaml_and_written_as_python_literals() -> None:
    parameters = parse_parameters(
        ["lr=0.01", "epochs=20", "model=resnet", "tags=[a, b]", 'opts={"x": 1}', "dry=false"]
    )
    assert parameters == {
        "lr": 0.01,
        "epochs": 20,
        "model": "resnet",
        "tags": ["a", "b"],
        "opts": {"x": 1},
        "dry": False,
    }
    cell = python_cell(parameters)
    namespace: dict[str, object] = {}
    exec(cell, namespace)  # the cell a kernel runs gives back the same values
    assert {name: namespace[name] for name in parameters} == parameters


def test_an_empty_value_is_an_empty_string_and_quotes_keep_text() -> None:
    assert parse_parameters(["note=", "version='3'"]) == {"note": "", "version": "3"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("lr", "write it as name=value"),
        ("1lr=3", "not a name a notebook can assign"),
        ("class=3", "not a name a notebook can assign"),
        ("x=[1, 2", "is not a JSON or YAML value"),
        ("x={a: 1", "is not a JSON or YAML value"),
        ("when=2026-11-29", "reads as a date"),
    ],
)
def test_what_a_notebook_cannot_take_is_refused_with_words(text: str, words: str) -> None:
    with pytest.raises(ParameterError, match=words):
        parse_parameters([text])


def test_a_name_given_twice_is_refused() -> None:
    with pytest.raises(ParameterError, match="lr is given twice"):
        parse_parameters(["lr=1", "lr=2"])
