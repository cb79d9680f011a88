"""Reference pages generated from the code at build time, so that they cannot fall behind it.

When the build starts, this writes Markdown into docs/reference/generated/ (not kept in git),
which the reference pages include:

    settings.md   every PORTAL_* setting: the fields of the settings models
                  (gpuportal_adapters.settings, gpuportal_portal.settings), which process reads it,
                  its default and its description
    rest-api.md   every operation of the portal's REST API, from the OpenAPI document the
                  portal serves, a section per tag and per operation
    metrics.md    every figure the hub and the portal export to Prometheus: the collectors
                  their modules register (gpuportal_spawner.metrics, gpuportal_portal.metrics)
    audit.md      every action of the audit stream and what its records hold
                  (gpuportal_adapters.audit.ACTIONS)
    lifecycle.dot the session's state machine as a graph (gpuportal_core.lifecycle.step, run
                  on every stage with every kind of event), which the architecture page draws

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
    order (gpuportal_spawner.settings_table, which the Ansible role's defaults come from too)."""
    from gpuportal_spawner.settings_table import settings

    return [(s.variable, s.read_by, _shown(s.default), s.description) for s in settings()]


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


def metric_rows() -> list[tuple[str, str, str, str, str]]:
    """(where, exported name, type, labels, help) of every gpuportal_* figure: the hub's
    (/hub/metrics) and the portal's (/services/portal/metrics), as each process registers them
    in prometheus_client's registry, read from the collectors without running either."""
    from prometheus_client import REGISTRY

    import gpuportal_portal.metrics as portal_metrics
    import gpuportal_spawner.metrics as hub_metrics

    if "gpuportal_slurm_calls" not in REGISTRY._names_to_collectors:
        hub_metrics.install()  # as the hub's config does, once a process
    # The portal's are its module's (its Slurm calls' too); every other one is the hub's.
    portal = {id(value) for value in vars(portal_metrics).values()}
    rows = []
    for collector in list(REGISTRY._collector_to_names):  # listed nowhere public
        where = "portal" if id(collector) in portal else "hub"
        for name, kind, labels, text in _families(collector):
            if name.startswith("gpuportal"):
                rows.append((where, name, kind, labels, text))
    return sorted(rows)


def _families(collector: Any) -> Iterator[tuple[str, str, str, str]]:
    from prometheus_client.metrics import MetricWrapperBase

    if isinstance(collector, MetricWrapperBase):
        # A Counter, Gauge or Histogram: its name, kind and labels, with no sample needed.
        kind = collector._type
        name = collector._name + ("_total" if kind == "counter" else "")
        yield name, kind, ", ".join(collector._labelnames), collector._documentation
        return
    for family in collector.collect():  # a collector of its own (the hub's GPUs, sessions)
        labels = ", ".join(getattr(family, "_labelnames", ()))
        yield family.name, family.type, labels, family.documentation


def metrics_page() -> Iterator[str]:
    rows = [
        (f"`{name}`", where, kind, labels or "(none)", text)
        for where, name, kind, labels, text in metric_rows()
    ]
    yield from _table(("figure", "exported by", "type", "labels", "what it counts"), rows)


def audit_page() -> Iterator[str]:
    from gpuportal_adapters.audit import ACTIONS

    yield from _table(
        ("action", "recorded when, and its fields"), [(f"`{a}`", t) for a, t in ACTIONS.items()]
    )


# What Slurm may say of a session's job, one state of each phase, and how the graph names it.
SLURM_SAYS = {
    "PENDING": "queued",
    "RUNNING": "running",
    "SUSPENDED": "suspended",
    "REQUEUED": "requeued",
    "COMPLETING": "completing",
    "TIMEOUT": "ended",
}


def lifecycle_edges() -> dict[tuple[str, str], list[str]]:
    """(stage, next stage) -> the events that lead there: the state machine run on every
    stage with each kind of event (Slurm's answers with and without the port reported)."""
    from gpuportal_core.jobs import JobInfo
    from gpuportal_core.lifecycle import FINAL, Event, Seen, Stage, step

    def job(state: str) -> JobInfo:
        return JobInfo("7", state, "None", "gpu01", "N/A", "alice", "8:00:00", "gpu01", "")

    events: list[tuple[str, Seen]] = [
        ("spawn", Seen(Event.SPAWN)),
        ("sbatch answered", Seen(Event.SUBMITTED)),
        ("JupyterLab answers", Seen(Event.LAB_ANSWERED, port_known=True)),
        ("JupyterLab unreachable", Seen(Event.LAB_UNREACHABLE, job("RUNNING"))),
        ("stop", Seen(Event.STOP)),
        ("cancels done", Seen(Event.CANCELLED)),
        ("queue limit", Seen(Event.QUEUE_LIMIT, limit=3600)),
        ("no job", Seen(Event.NO_JOB)),
        ("job gone", Seen(Event.SLURM, None)),
    ]
    for state, said in SLURM_SAYS.items():
        events.append((f"job {said}", Seen(Event.SLURM, job(state))))
        events.append((f"job {said}", Seen(Event.SLURM, job(state), port_known=True)))
    # Each event in the stages where it happens (the machine answers any event in any stage:
    # a spawn in READY would begin a new life, which the hub never asks).
    live = set(Stage) - FINAL
    only_from = {
        "spawn": FINAL,
        "sbatch answered": {Stage.SUBMITTING},
        "no job": {Stage.SUBMITTING},
        "queue limit": {Stage.QUEUED},
        "JupyterLab answers": {Stage.STARTING},
        "JupyterLab unreachable": {Stage.READY},
        "stop": live - {Stage.STOPPING},
        "cancels done": {Stage.STOPPING},
    }
    edges: dict[tuple[str, str], list[str]] = {}
    for stage in Stage:
        for label, seen in events:
            slurm = seen.kind is Event.SLURM
            if (label in only_from and stage not in only_from[label]) or (
                slurm and stage not in live - {Stage.STOPPING}
            ):
                continue
            after = step(stage, seen, job_id="7").stage
            if after is not stage and label not in edges.setdefault((stage.name, after.name), []):
                edges[(stage.name, after.name)].append(label)
    return {edge: labels for edge, labels in edges.items() if labels}


def lifecycle_graph() -> Iterator[str]:
    yield "digraph session {"
    yield '  node [shape=box, style=rounded, fontname="sans-serif"];'
    yield '  edge [fontname="sans-serif", fontsize=10];'
    for (before, after), labels in sorted(lifecycle_edges().items()):
        label = "\\n".join(labels)  # one event a line, in dot's own newline
        yield f'  {before} -> {after} [label="{label}"];'
    yield "}"


def write_generated(app: Sphinx | None = None) -> None:
    GENERATED.mkdir(exist_ok=True)
    pages = {
        "settings.md": settings_page(),
        "rest-api.md": rest_api_page(openapi_document()),
        "metrics.md": metrics_page(),
        "audit.md": audit_page(),
        "lifecycle.dot": lifecycle_graph(),
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
