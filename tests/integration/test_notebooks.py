"""Every shipped notebook, executed with nbclient on the PyTorch kernel (on the CPU here), with
checks on what it computed. Cells tagged `tensorboard-ui` open TensorBoard in the browser and are
covered by the TensorBoard tests instead."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from nbclient import NotebookClient

from tests.hubproc import REPO
from tests.integration.conftest import _need

pytestmark = pytest.mark.integration

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
KERNEL = "gpuportal-torch"


def run(name: str, tmp_path: Path, variables: list[str]) -> dict[str, Any]:
    """Execute the notebook in tmp_path; return the named variables from its kernel, as JSON."""
    try:
        KernelSpecManager().get_kernel_spec(KERNEL)
    except NoSuchKernel:
        _need("The PyTorch kernel", "deploy/local/environments.sh installs it")
    notebook = nbformat.read(REPO / "notebooks" / name, as_version=4)
    for shipped in (REPO / "notebooks").glob("*.py"):  # beside it, as in ~/templates
        shutil.copy(shipped, tmp_path)
    notebook.cells = [
        c for c in notebook.cells if "tensorboard-ui" not in c.metadata.get("tags", [])
    ]
    probe = f"import json\nprint(json.dumps({{v: globals()[v] for v in {variables!r}}}))"
    notebook.cells.append(nbformat.v4.new_code_cell(probe))
    client = NotebookClient(
        notebook, timeout=600, kernel_name=KERNEL, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    output = notebook.cells[-1].outputs[0]["text"]
    values: dict[str, Any] = json.loads(output)
    return values


def test_notebooks_are_committed_without_outputs() -> None:
    assert len(NOTEBOOKS) >= 5
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name
        assert notebook.metadata["kernelspec"]["name"] == KERNEL, path.name


def test_pytorch_quickstart_learns_the_digits(tmp_path: Path) -> None:
    got = run("01-pytorch-quickstart.ipynb", tmp_path, ["accuracy", "losses"])
    assert got["accuracy"] > 0.9
    assert got["losses"][-1] < got["losses"][0] / 4


def test_keras_on_the_torch_backend_learns_the_digits(tmp_path: Path) -> None:
    got = run("02-keras3-torch-backend.ipynb", tmp_path, ["accuracy", "losses"])
    assert got["accuracy"] > 0.85
    assert got["losses"][-1] < got["losses"][0]


def test_ddp_runs_one_process_per_device_and_learns(tmp_path: Path) -> None:
    got = run("03-ddp-multi-gpu.ipynb", tmp_path, ["world_size", "losses", "processes"])
    assert got["world_size"] == got["processes"] >= 2
    assert len(got["losses"]) == 10
    assert got["losses"][-1] < got["losses"][0] / 2


def test_mixed_precision_trains_as_well(tmp_path: Path) -> None:
    got = run(
        "04-mixed-precision-compile.ipynb", tmp_path, ["full_losses", "amp_losses", "amp_rate"]
    )
    assert got["full_losses"][-1] < got["full_losses"][0] / 2
    assert got["amp_losses"][-1] < got["amp_losses"][0] / 2
    assert got["amp_rate"] > 0


def test_tensorboard_notebook_writes_scalars_histograms_and_an_image(tmp_path: Path) -> None:
    got = run("05-tensorboard-logging.ipynb", tmp_path, ["losses", "accuracy", "LOGDIR"])
    assert got["losses"][-1] < got["losses"][0]
    assert got["accuracy"] > 0.8
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / got["LOGDIR"]), size_guidance={"images": 0}).Reload()
    tags = events.Tags()
    assert {"train/loss", "train/accuracy"} <= set(tags["scalars"])
    assert [e.value for e in events.Scalars("train/loss")] == pytest.approx(got["losses"])
    assert any(tag.startswith("weights/") for tag in tags["histograms"])
    assert tags["images"] == ["digits/first-16"]
    assert os.listdir(tmp_path / got["LOGDIR"])


def test_the_r_kernel_runs(tmp_path: Path) -> None:
    try:
        KernelSpecManager().get_kernel_spec("ir")
    except NoSuchKernel:
        _need("The R kernel", "deploy/local/environments.sh installs it")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("cat(sum(1:10))")])
    NotebookClient(notebook, timeout=120, kernel_name="ir").execute()
    assert notebook.cells[0].outputs[0]["text"] == "55"
