"""Where the shipped templates and notebooks are: in the installed package data
(gpuportal_templates, gpuportal_notebooks, mapped from the top-level templates/ and notebooks/
folders by pyproject.toml), or in the source checkout."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[1]


def data_dir(name: str) -> Path:
    """The folder of the shipped data `name` ("templates" or "notebooks")."""
    spec = importlib.util.find_spec(f"gpuportal_{name}")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if Path(location).is_dir():
                return Path(location)
    return _CHECKOUT / name


TEMPLATES_DIR = data_dir("templates")
NOTEBOOKS_DIR = data_dir("notebooks")
