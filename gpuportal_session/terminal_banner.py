"""The terminal's first lines: which Python it runs, and where the kernels' other Pythons are.

A session's notebooks may run a framework's Python (the "PyTorch" kernel) while the terminal
runs the session's environment, which lacks it: `import torch` worked in a notebook and failed
in the terminal with nothing to say why. The kernels JupyterLab offers are read from their
kernel.json files, as JupyterLab finds them, so the lines hold for any site's kernels.

    python -m gpuportal_session.terminal_banner [TERMINAL_PYTHON]   (terminal_rc.sh runs it)
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class KernelPython:
    name: str  # as the launcher shows it
    python: str


def kernel_pythons(folders: list[str]) -> list[KernelPython]:
    """The Python kernels of these kernel folders that name their interpreter, first one wins."""
    found: dict[str, KernelPython] = {}
    for folder in folders:
        for spec in sorted(Path(folder).glob("*/kernel.json")):
            try:
                kernel = json.loads(spec.read_text())
                argv, language = kernel["argv"], kernel.get("language", "")
                name = str(kernel.get("display_name") or spec.parent.name)
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if language != "python" or not argv or not os.path.isabs(str(argv[0])):
                continue  # {python}-style specs run the server's own Python
            found.setdefault(spec.parent.name, KernelPython(name, str(argv[0])))
    return list(found.values())


def how_to_use(python: str) -> str:
    """The command that puts an interpreter's environment on this terminal's PATH."""
    bin_dir = Path(python).parent
    if (bin_dir / "activate").is_file():
        return f"source {bin_dir / 'activate'}"
    if (bin_dir.parent / "conda-meta").is_dir():
        return f"conda activate {bin_dir.parent}"
    return f"run {python}"


def environment(python: str) -> str:
    """The environment a python belongs to: its bin folder (a venv's python is a link to the
    system's, so the file itself would make every venv the same)."""
    return os.path.realpath(os.path.dirname(python))


def banner(terminal_python: str, kernels: list[KernelPython]) -> str:
    here = environment(terminal_python) if terminal_python else ""
    lines = [f"python here: {terminal_python or 'none on PATH'}"]
    for kernel in kernels:
        if environment(kernel.python) == here:
            lines[0] += f" (as the {kernel.name} kernel)"
        else:
            lines.append(
                f"The {kernel.name} kernel runs another Python; to use it here: "
                f"{how_to_use(kernel.python)}"
            )
    return "\n".join(lines)


def main() -> None:
    from jupyter_core.paths import jupyter_path

    terminal_python = sys.argv[1] if len(sys.argv) > 1 else ""
    print(banner(terminal_python, kernel_pythons(jupyter_path("kernels"))))


if __name__ == "__main__":
    main()
