"""The terminal's first lines name its python and how to reach the kernels' other Pythons."""

from __future__ import annotations

import json
import sys
import venv
from pathlib import Path

from gpuportal_session.terminal_banner import banner, kernel_pythons


def kernel(folder: Path, name: str, argv0: str, language: str = "python") -> None:
    (folder / name).mkdir(parents=True)
    spec = {"argv": [argv0, "-m", "ipykernel_launcher"], "display_name": name.title(),
            "language": language}  # fmt: skip
    (folder / name / "kernel.json").write_text(json.dumps(spec))


def test_a_kernel_in_another_environment_is_named_with_how_to_use_it(tmp_path: Path) -> None:
    torch = tmp_path / "torch"
    venv.create(torch, with_pip=False, symlinks=True)
    kernels = tmp_path / "kernels"
    kernel(kernels, "pytorch", str(torch / "bin" / "python"))
    kernel(kernels, "ir", "R", language="R")
    kernel(kernels, "python3", "python")  # the server's own python: not a different one
    (kernels / "broken").mkdir()
    (kernels / "broken" / "kernel.json").write_text("{")
    found = kernel_pythons([str(kernels)])
    assert [k.name for k in found] == ["Pytorch"]

    here = sys.executable
    assert banner(here, found).splitlines() == [
        f"python here: {here}",
        f"The Pytorch kernel runs another Python; to use it here: source {torch}/bin/activate",
    ]
    # In the kernel's own environment (its python is a link to the same interpreter as ours).
    assert banner(str(torch / "bin" / "python"), found) == (
        f"python here: {torch}/bin/python (as the Pytorch kernel)"
    )
