"""Reference pages generated from the code at build time, so that they cannot fall behind it.

When the build starts, this writes Markdown into docs/reference/generated/ (not kept in git),
which the reference pages include:

    settings.md   every PORTAL_* setting: the fields of the settings models
                  (gpuportal_core.settings, gpuportal_portal.settings), which process reads it,
                  its default and its description
    rest-api.md   every operation of the portal's REST API, from the OpenAPI document the
                  portal serves, a section per tag and per operation

The traits (autodoc-traits) and the command lines (sphinx-click, sphinx-argparse) come from
their own extensions. tests/unit/test_docs.py builds the site and checks that every setting,
trait and operation is on its page.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

GENERATED = Path(__file__).resolve().parents[1] / "reference" / "generated"


def settings_rows() -> list[tuple[str, str, str, str]]:
    """(variable, read by, default, description) of every PORTAL_* setting, in the models'
    order: the hub's first, then the portal's own."""
    from gpuportal_core.settings import HubSettings
    from gpuportal_portal.settings import PortalSettings

    readers = {"hub": HubSettings, "portal": PortalSettings}
    rows: dict[str, tuple[str, str, str, str]] = {}
    for model in readers.values():
        for name, field in model.model_fields.items():
            if field.validation_alias is not None or name in rows:
                continue  # JUPYTERHUB_* ones are the hub's to set for its services
            read_by = " and ".join(r for r, m in readers.items() if name in m.model_fields)
            default = _shown(field.default)
            rows[name] = (f"PORTAL_{name.upper()}", read_by, default, field.description or "")
    return list(rows.values())


def _shown(default: Any) -> str:
    if default in ("", None):
        return "(empty)"
    if isinstance(default, list | dict):
        return f"`{json.dumps(default)}`"
    return f"`{default}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> Iterator[str]:
    yield "| " + " | ".join(header) + " |"
    yield "|" + "---|" * len(header)
    for row in rows:
        yield "| " + " | ".join(_cell(cell) for cell in row) + " |"
    yield ""


def settings_page() -> Iterator[str]:
    rows = [(f"`{variable}`", *rest) for variable, *rest in settings_rows()]
    yield from _table(("variable", "read by", "default", "what it sets"), rows)


def openapi_document() -> dict[str, Any]:
    """The portal's OpenAPI document, as /services/portal/openapi.json serves it."""
    from gpuportal_portal.app import create_app
    from gpuportal_portal.settings import PortalSettings

    return create_app(PortalSettings()).openapi()


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield method.upper(), path, operation


def rest_api_page(document: dict[str, Any]) -> Iterator[str]:
    """A section per tag, a section per operation in it."""
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for method, path, operation in operations(document):
        by_tag.setdefault((operation.get("tags") or ["other"])[0], []).append(
            (method, path, operation)
        )
    for tag, entries in by_tag.items():
        yield f"## {tag.capitalize()}"
        yield ""
        for method, path, operation in entries:
            yield f"### `{method} {path}`"
            yield ""
            if operation.get("summary"):
                yield f"**{operation['summary']}**"
                yield ""
            if operation.get("description"):
                yield operation["description"]
                yield ""
            parameters = [
                (
                    f"`{p['name']}`",
                    p["in"],
                    "yes" if p.get("required") else "no",
                    p.get("description", ""),
                )
                for p in operation.get("parameters", [])
            ]
            if parameters:
                yield from _table(("parameter", "in", "required", "what it is"), parameters)
            for media, content in operation.get("requestBody", {}).get("content", {}).items():
                yield f"Body: `{media}`, {_schema_name(content.get('schema', {}))}."
                yield ""
            answers = [
                (f"`{code}`", answer.get("description", ""))
                for code, answer in operation.get("responses", {}).items()
            ]
            yield from _table(("status", "meaning"), answers)


def _schema_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref", "")
    return f"a `{ref.rsplit('/', 1)[-1]}`" if ref else f"`{schema.get('type', 'object')}`"


def write_generated(app: Sphinx | None = None) -> None:
    GENERATED.mkdir(exist_ok=True)
    pages = {
        "settings.md": settings_page(),
        "rest-api.md": rest_api_page(openapi_document()),
    }
    for name, lines in pages.items():
        text = "\n".join(lines) + "\n"
        path = GENERATED / name
        # Unchanged text keeps its time: Sphinx then rebuilds only what changed.
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", write_generated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
