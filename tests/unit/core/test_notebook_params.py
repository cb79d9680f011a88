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


# A "billion laughs": nine levels of nine aliases each, 387,420,489 values from 300 characters.
BOMB = (
    "[&a [x,x,x,x,x,x,x,x,x], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], &c [*b,*b,*b,*b,*b,*b,*b,*b,*b],"
    " &d [*c,*c,*c,*c,*c,*c,*c,*c,*c], &e [*d,*d,*d,*d,*d,*d,*d,*d,*d],"
    " &f [*e,*e,*e,*e,*e,*e,*e,*e,*e], &g [*f,*f,*f,*f,*f,*f,*f,*f,*f],"
    " &h [*g,*g,*g,*g,*g,*g,*g,*g,*g], &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]]"
)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (BOMB, "uses a YAML alias"),  # expanded, it took a worker of the portal for good
        ("&a [*a]", "uses a YAML alias"),  # a list that holds itself: a RecursionError, a 500
        ("{a: &k 1, b: *k}", "uses a YAML alias"),
        ("[" * 17 + "]" * 17, "over 16 deep"),
        ("[" * 400 + "]" * 400, "over 16 deep"),  # PyYAML's composer recursed past the limit
        (".inf", "reads as a float"),  # repr(inf) is no literal: the run's cell would fail
    ],
)
def test_values_that_would_exhaust_the_reader_are_refused_before_they_are_built(
    value: str, words: str
) -> None:
    with pytest.raises(ParameterError, match=words):
        parse_parameters([f"x={value}"])


def test_a_value_is_bounded_in_length_before_it_is_read() -> None:
    # Without the bound, a megabyte of flow sequence was read by PyYAML before any check.
    with pytest.raises(ParameterError, match="is 1000002 characters long: at most 1000"):
        parse_parameters(["x=" + "1," * 500_000])
    assert parse_parameters(["x=" + "a" * 998]) == {"x": "a" * 998}


def test_anchors_without_aliases_and_sixteen_levels_are_still_values() -> None:
    assert parse_parameters(["x=&a 3", "y=" + "[" * 16 + "]" * 16])["x"] == 3


def test_at_most_a_hundred_parameters() -> None:
    with pytest.raises(ParameterError, match="at most 100 parameters"):
        parse_parameters(f"p{n}=1" for n in range(101))
