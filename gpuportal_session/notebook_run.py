"""A notebook run headless in a Slurm job: `python -m gpuportal_session.notebook_run NOTEBOOK
[name=value ...]`, as the notebook launcher's sbatch script starts it (templates/sbatch/launchers/
notebook.sh.j2).

The parameters go into a cell after the one tagged `parameters` (papermill's and Jupyter
Scheduler's convention); the cells run in order with the kernel the notebook names, in its own
folder; the executed notebook, and its HTML at the end, go into a dated folder beside it:
`NAME-runs/2026-11-29_14-05-12_job1234/`. The executed notebook is written after every cell, so
a run stopped by its time limit or scancel keeps what it did. A cell that raises ends the job as
failed (exit 1), its traceback in the executed notebook.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from jinja2 import DictLoader
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter
from traitlets.config import Config

from gpuportal_core.notebook_params import (
    INJECTED_TAG,
    PARAMETERS_TAG,
    ParameterError,
    parse_parameters,
    python_cell,
)
from gpuportal_session.job_gpu_readings import JobGpuReadings

# What the job's output says (the portal's Jobs page shows its last lines).
PREFIX = "[notebook job]"


# The HTML without what nbconvert's lab template loads from CDNs (require.js, MathJax,
# Mermaid, the widgets' manager): clusters have no internet, and the portal serves this file
# under a policy that loads nothing. Formulas stay as their TeX, outputs as drawn.
OFFLINE_TEMPLATE = "gpuportal_offline.html.j2"
_OFFLINE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
"""


def html_of(nb: nbformat.NotebookNode) -> str:
    """The executed notebook as one HTML file that loads nothing from elsewhere."""
    exporter = HTMLExporter(
        template_file=OFFLINE_TEMPLATE, extra_loaders=[DictLoader({OFFLINE_TEMPLATE: _OFFLINE})]
    )
    html, _ = exporter.from_notebook_node(nb)
    return html


class RunError(Exception):
    """Why the notebook could not be run at all, in words; the job ends with exit 2."""


def say(message: str) -> None:
    print(f"{PREFIX} {message}", flush=True)


def runs_folder(notebook: Path, job_id: str, now: datetime.datetime) -> Path:
    """Where this run's files go: beside the notebook, one dated folder per run."""
    stamp = now.strftime("%Y-%m-%d_%H-%M-%S")
    return notebook.parent / f"{notebook.stem}-runs" / f"{stamp}_job{job_id or 'local'}"


def kernel_of(nb: nbformat.NotebookNode) -> tuple[str, str]:
    """The kernel the notebook names and its language."""
    spec = nb.metadata.get("kernelspec") or {}
    name = spec.get("name", "")
    if not name:
        raise RunError(
            "the notebook names no kernel: open it in JupyterLab, choose a kernel, save it, "
            "and submit it again"
        )
    language = spec.get("language") or (nb.metadata.get("language_info") or {}).get("name", "")
    return name, language


def check_kernel(name: str) -> None:
    """The kernel exists in this job's environment, or the error lists those that do."""
    manager = KernelSpecManager()
    try:
        manager.get_kernel_spec(name)
    except NoSuchKernel:
        there = ", ".join(sorted(manager.find_kernel_specs())) or "none"
        raise RunError(
            f"the notebook's kernel {name!r} is not in this job's environment (it has: {there}); "
            "choose one of those in JupyterLab, or run the job in the environment that has it"
        ) from None


def inject(nb: nbformat.NotebookNode, parameters: dict[str, Any], language: str) -> None:
    """The parameters as a cell after the `parameters` cell (or first), replacing a cell an
    earlier run injected, as papermill does."""
    if not parameters:
        return
    if language and language.lower() != "python":
        raise RunError(
            f"parameters can be given to Python notebooks only; this one's kernel is {language}"
        )
    cell = nbformat.v4.new_code_cell(source=python_cell(parameters))
    cell.metadata["tags"] = [INJECTED_TAG]
    tags = [cell_.metadata.get("tags", []) for cell_ in nb.cells]
    injected = [i for i, t in enumerate(tags) if INJECTED_TAG in t]
    tagged = [i for i, t in enumerate(tags) if PARAMETERS_TAG in t]
    if injected:
        nb.cells[injected[0]] = cell
    else:
        nb.cells.insert(tagged[0] + 1 if tagged else 0, cell)


def write_notebook(nb: nbformat.NotebookNode, path: Path) -> None:
    """Whole or not at all: a reader never sees half a notebook."""
    partial = path.with_name(f".{path.name}.partial")
    nbformat.write(nb, str(partial))
    os.replace(partial, path)


def run(notebook: Path, parameter_texts: list[str], *, job_id: str) -> int:
    """Run it; 0 when every cell ran, 1 when one raised."""
    if notebook.suffix != ".ipynb" or not notebook.is_file():
        raise RunError(f"{notebook} is not a notebook file (.ipynb) that exists")
    try:
        parameters = parse_parameters(parameter_texts)
    except ParameterError as error:
        raise RunError(str(error)) from None
    nb = nbformat.read(str(notebook), as_version=4)
    kernel, language = kernel_of(nb)
    check_kernel(kernel)
    inject(nb, parameters, language)
    started = datetime.datetime.now().astimezone()
    folder = runs_folder(notebook, job_id, started)
    folder.mkdir(parents=True, exist_ok=False)
    executed = folder / notebook.name
    nb.metadata["gpuportal"] = {
        "input": str(notebook),
        "job_id": job_id,
        "parameters": parameters,
        "started": started.isoformat(timespec="seconds"),
    }
    say(f"running {notebook} with kernel {kernel}; outputs in {folder}")
    # The kernel talks over unix sockets in a folder only this user can enter, not over TCP
    # ports of the node that anyone on it can reach (its messages are signed, not encrypted).
    sockets = Path(tempfile.mkdtemp(prefix="gpuportal-notebook-"))
    client = NotebookClient(
        nb,
        kernel_name=kernel,
        # The kernel manager nbclient makes (and shuts down) reads its settings from this.
        config=Config({"KernelManager": {"transport": "ipc", "ip": str(sockets / "kernel")}}),
        timeout=None,  # the job's time limit bounds the run, not a cell's
        resources={"metadata": {"path": str(notebook.parent)}},
        on_cell_executed=lambda **_: write_notebook(nb, executed),
    )
    failed: CellExecutionError | None = None
    # How busy its GPUs were, for the job's efficiency card (as a session's are read).
    readings = JobGpuReadings(os.environ)
    readings.start()
    try:
        client.execute()
    except CellExecutionError as error:
        failed = error
    finally:
        readings.stop()
        shutil.rmtree(sockets, ignore_errors=True)
    nb.metadata["gpuportal"]["ended"] = (
        datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    )
    write_notebook(nb, executed)
    executed.with_suffix(".html").write_text(html_of(nb), encoding="utf-8")
    if failed is not None:
        say(f"a cell raised {failed.ename}: {failed.evalue}; its traceback is in {executed}")
        return 1
    say(f"done: {executed} and {executed.with_suffix('.html').name}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpuportal_session.notebook_run", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("notebook", type=Path)
    parser.add_argument("parameters", nargs="*", help="name=value, each value JSON or YAML")
    args = parser.parse_args(argv)
    try:
        return run(args.notebook, args.parameters, job_id=os.environ.get("SLURM_JOB_ID", ""))
    except RunError as error:
        say(f"cannot run it: {error}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
