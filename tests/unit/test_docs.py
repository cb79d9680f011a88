"""The docs site builds with warnings as errors, its internal links land, and its reference is
whole: every configurable trait, every PORTAL_* setting, every REST operation, every command,
every metric and every audit action is on its page (docs/, `make docs`)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from traitlets.config import Configurable

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

from check_links import broken_links, read_page  # noqa: E402 (docs/_ext: not a package)
from gpuportal_reference import (  # noqa: E402
    lifecycle_edges,
    metric_rows,
    openapi_document,
    operations,
    settings_rows,
)

# Builds or starts processes: make test runs it, make check leaves it out (issue 53).
pytestmark = pytest.mark.builds

# As `make docs` builds: warnings are errors, every reference must resolve.
SPHINX_CHECKS = ("-W", "--keep-going", "-n", "-q", "-b", "html")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", *SPHINX_CHECKS, str(ROOT / "docs"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    return out


def ids_of(page: Path) -> set[str]:
    return read_page(page).ids


def test_every_internal_link_lands(site: Path) -> None:
    assert broken_links(site) == []


def test_the_link_check_finds_a_missing_page_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(
        '<p id="here"><a href="b.html">b</a> <a href="a.html#here">ok</a> '
        '<a href="a.html#gone">x</a> <a href="https://example.org/">out</a></p>'
    )
    assert broken_links(tmp_path) == [
        "a.html: b.html (no such page)",
        "a.html: a.html#gone (no such anchor)",
    ]


def configurables() -> Iterator[type[Configurable]]:
    """Every class of the hub's package with config traits of its own."""
    import gpuportal_spawner

    for module_info in pkgutil.walk_packages(gpuportal_spawner.__path__, "gpuportal_spawner."):
        module = importlib.import_module(module_info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, Configurable):
                own = set(cls.class_own_traits(config=True))
                if own:
                    yield cls


def test_every_configurable_trait_is_in_the_reference(site: Path) -> None:
    documented = []  # (class, trait) of each entry: ids "gpuportal_spawner.module.Class.trait"
    for ident in ids_of(site / "reference" / "configuration.html"):
        if ident.startswith("gpuportal_spawner.") and ident.count(".") == 3:
            module_name, class_name, trait = ident.rsplit(".", 2)
            documented.append((getattr(importlib.import_module(module_name), class_name), trait))
    # Each trait on its own class's entry or on a documented subclass's (traits are inherited).
    missing = [
        f"{cls.__name__}.{trait}"
        for cls in configurables()
        for trait in cls.class_own_traits(config=True)
        if not any(issubclass(entry, cls) and name == trait for entry, name in documented)
    ]
    assert documented and missing == []


def test_every_setting_is_in_the_reference(site: Path) -> None:
    page = (site / "reference" / "settings.html").read_text()
    variables = [variable for variable, *_ in settings_rows()]
    assert len(variables) > 40
    code = '<code class="docutils literal notranslate"><span class="pre">{}</span>'
    assert [variable for variable in variables if code.format(variable) not in page] == []


def test_every_rest_operation_is_in_the_reference(site: Path) -> None:
    page = (site / "reference" / "rest-api.html").read_text()
    missing = [
        f"{method} {path}"
        for method, path, _ in operations(openapi_document())
        if f'{method}</span> <span class="pre">{path}</span>' not in page
    ]
    assert missing == []


def test_every_command_is_in_the_reference(site: Path) -> None:
    from gpuportal_cli.main import cli

    documented = ids_of(site / "reference" / "cli.html")

    def commands(group: click.Command, prefix: str) -> Iterator[str]:
        yield prefix
        for name, command in getattr(group, "commands", {}).items():
            yield from commands(command, f"{prefix}-{name}")

    expected = [*commands(cli, "gpuportal"), "gpuportal-admin-sudoers", "gpuportal-admin-preflight"]
    assert [name for name in expected if name not in documented] == []


def test_every_metric_and_audit_action_is_in_the_reference(site: Path) -> None:
    from gpuportal_adapters.audit import ACTIONS

    metrics = (site / "reference" / "metrics.html").read_text()
    names = [name for _, name, *_ in metric_rows()]
    assert len(names) >= 12
    assert [name for name in names if f'<span class="pre">{name}</span>' not in metrics] == []
    audit = (site / "reference" / "audit.html").read_text()
    assert [a for a in ACTIONS if f'<span class="pre">{a}</span>' not in audit] == []


def test_the_session_diagram_is_drawn_from_the_state_machine(site: Path) -> None:
    from gpuportal_core.lifecycle import Stage

    edges = lifecycle_edges()
    assert {stage.name for stage in Stage} <= {name for edge in edges for name in edge}
    assert edges[("STARTING", "READY")] == ["JupyterLab answers"]
    assert "job suspended" in edges[("READY", "SUSPENDED")]
    # Drawn into the architecture page (an SVG of Graphviz's, no image from elsewhere).
    page = (site / "explanation" / "architecture.html").read_text()
    assert '<div class="graphviz"><object data="../_images/graphviz-' in page


def test_nothing_is_loaded_from_elsewhere(site: Path) -> None:
    # Served by the hub to clusters without internet: no script, style or font from a CDN.
    outside = re.compile(r"<(?:script|link|img)[^>]+(?:src|href)=\"https?://|url\(['\"]?https?://")
    loaded = [
        str(path.relative_to(site))
        for path in site.rglob("*")
        if path.suffix in (".html", ".css", ".js")
        and outside.search(path.read_text(errors="replace"))
    ]
    assert loaded == []


def test_every_page_starts_in_a_mode_the_theme_knows(site: Path) -> None:
    """Issue 54, item 16: the theme's script logged "Got invalid theme mode" on every page (no
    default mode: an empty one)."""
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.parts:
            continue
        assert '<body data-default-mode="auto">' in page.read_text(), page
