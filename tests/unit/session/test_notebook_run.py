"""The notebook job's runner (gpuportal_session.notebook_run), run here with a real Python
kernel: parameters into the cell after the `parameters` one, the executed notebook and its HTML
in a dated folder beside it, a raising cell failing the run with its traceback kept."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gpuportal_session import notebook_run


def _notebook(path: Path, *cells: tuple[str, list[str]], kernel: str = "python3") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": kernel, "language": "python", "display_name": kernel}
    for source, tags in cells:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["tags"] = tags
        nb.cells.append(cell)
    nbformat.write(nb, str(path))
    return path


def _run(notebook: Path, *parameters: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuportal_session.notebook_run", str(notebook), *parameters],
        capture_output=True,
        text=True,
        env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "SLURM_JOB_ID": "4242"},
        timeout=120,
        check=False,
    )


def _one_run(notebook: Path) -> Path:
    (folder,) = (notebook.parent / f"{notebook.stem}-runs").iterdir()
    return folder


def test_parameters_go_after_the_parameters_cell_and_the_outputs_beside_the_notebook(
    tmp_path: Path,
) -> None:
    notebook = _notebook(
        tmp_path / "train.ipynb",
        ("lr = 1.0\nepochs = 1", ["parameters"]),
        ("print(f'lr={lr!r} epochs={epochs!r} model={model!r}')", []),
        (
            "from ipykernel.connect import get_connection_info\n"
            "print(get_connection_info(unpack=True)['transport'])",
            [],
        ),
    )
    done = _run(notebook, "lr=0.01", "epochs=3", "model=resnet")
    assert done.returncode == 0, done.stdout + done.stderr
    folder = _one_run(notebook)
    assert folder.name.endswith("_job4242")
    executed = nbformat.read(str(folder / "train.ipynb"), as_version=4)
    assert [c.metadata.get("tags") for c in executed.cells] == [
        ["parameters"],
        ["injected-parameters"],
        [],
        [],
    ]
    assert executed.cells[2].outputs[0]["text"] == "lr=0.01 epochs=3 model='resnet'\n"
    # Its kernel on unix sockets in a private folder, not on TCP ports of the node.
    assert executed.cells[3].outputs[0]["text"] == "ipc\n"
    assert executed.metadata["gpuportal"]["parameters"] == {
        "lr": 0.01,
        "epochs": 3,
        "model": "resnet",
    }
    assert "lr=0.01 epochs=3" in (folder / "train.html").read_text()
    assert f"outputs in {folder}" in done.stdout
    # The input is left as it was.
    assert len(nbformat.read(str(notebook), as_version=4).cells) == 3


def test_a_cell_that_raises_fails_the_run_and_its_traceback_is_kept(tmp_path: Path) -> None:
    notebook = _notebook(
        tmp_path / "broken.ipynb",
        ("x = 1", []),
        ("raise ValueError('loss is nan')", []),
        ("print('never')", []),
    )
    done = _run(notebook)
    assert done.returncode == 1
    assert "a cell raised ValueError: loss is nan" in done.stdout
    executed = nbformat.read(str(_one_run(notebook) / "broken.ipynb"), as_version=4)
    (error,) = executed.cells[1].outputs
    assert error["output_type"] == "error" and error["ename"] == "ValueError"
    assert not executed.cells[2].outputs  # nothing after the failure ran
    assert (_one_run(notebook) / "broken.html").is_file()


@pytest.mark.parametrize(
    ("kernel", "parameters", "words"),
    [
        ("", (), "the notebook names no kernel: open it in JupyterLab, choose a kernel"),
        ("julia-1.10", (), "kernel 'julia-1.10' is not in this job's environment (it has: "),
        ("python3", ("lr",), "write it as name=value"),
    ],
)
def test_what_cannot_run_ends_the_job_with_words_and_no_folder(
    tmp_path: Path, kernel: str, parameters: tuple[str, ...], words: str
) -> None:
    notebook = _notebook(tmp_path / "n.ipynb", ("1", []), kernel=kernel)
    if not kernel:
        data = json.loads(notebook.read_text())
        del data["metadata"]["kernelspec"]
        notebook.write_text(json.dumps(data))
    done = _run(notebook, *parameters)
    assert done.returncode == 2
    assert words in done.stdout
    assert not (tmp_path / "n-runs").exists()


def test_a_second_run_replaces_the_cell_an_earlier_run_injected(tmp_path: Path) -> None:
    nb = nbformat.read(
        str(_notebook(tmp_path / "a.ipynb", ("lr = 1", ["parameters"]), ("lr", []))), 4
    )
    notebook_run.inject(nb, {"lr": 0.5}, "python")
    notebook_run.inject(nb, {"lr": 0.25}, "python")
    assert [c.source.splitlines()[-1] for c in nb.cells] == ["lr = 1", "lr = 0.25", "lr"]


def test_parameters_are_refused_for_a_kernel_that_is_not_python(tmp_path: Path) -> None:
    nb = nbformat.read(str(_notebook(tmp_path / "r.ipynb", ("1", []))), 4)
    with pytest.raises(
        notebook_run.RunError, match=r"Python notebooks only; this one's kernel is R"
    ):
        notebook_run.inject(nb, {"n": 1}, "R")


def test_the_html_loads_nothing_from_elsewhere(tmp_path: Path) -> None:
    """Clusters have no internet: nbconvert's lab template loads require.js and MathJax from
    cdnjs; the run's HTML must not (its cells' outputs and the lab's styles stay)."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("Loss $L = x^2$"))
    nb.cells.append(nbformat.v4.new_code_cell("1 + 1", outputs=[]))
    html = notebook_run.html_of(nb)
    assert "Loss $L = x^2$" in html
    assert "jp-Notebook" in html
    # Nothing fetched: no script, stylesheet or module from a URL (comments may name some).
    assert not re.search(r"(src|href)=[\"']?https?:|import\([\"']https?:|@import", html)
    assert "cdnjs" not in html
