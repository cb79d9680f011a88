"""Builds the product's wheel from a checkout, on the controller: `build_wheel.py OUT [SOURCE]`
(SOURCE: the checkout this collection is in when not given).

From a copy without the checkout's build/ (setuptools packs whatever an earlier build left in
build/lib), with fixed file times (SOURCE_DATE_EPOCH), so that the same checkout gives the same
bytes and a second run of the role finds nothing to install. Prints the wheel's path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LAB_EXTENSION = "gpuportal_session/jupyter_data/labextensions/@gpuportal/session/package.json"


def main(source: Path, out: Path) -> int:
    if not (source / "pyproject.toml").is_file():
        print(f"{source} is not a checkout of the portal (no pyproject.toml)", file=sys.stderr)
        return 1
    if not (source / LAB_EXTENSION).is_file():
        print(
            f"{source} has no built JupyterLab extension ({LAB_EXTENSION}): build it first "
            "(bash deploy/local/labextension.sh VENV), or give the role a released wheel "
            "(portal_wheel)",
            file=sys.stderr,
        )
        return 1
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpuportal-wheel-") as work:
        copy = Path(work) / "source"
        shutil.copytree(
            source,
            copy,
            ignore=shutil.ignore_patterns(
                "build", ".git", "*.egg-info", "node_modules", "__pycache__", "_build"
            ),
        )
        built = Path(work) / "dist"
        env = {**os.environ, "SOURCE_DATE_EPOCH": "315532800"}
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(built), str(copy)],
            check=True,
            env=env,
            timeout=600,
        )
        [wheel] = built.glob("*.whl")
        target = out / wheel.name
        if not target.exists() or target.read_bytes() != wheel.read_bytes():
            shutil.copyfile(wheel, target)
    print(target)
    return 0


def checkout_around_this_file() -> Path:
    """deploy/ansible/ansible_collections/gpuportal/site/roles/portal/files/ -> the checkout."""
    return Path(__file__).resolve().parents[8]


if __name__ == "__main__":
    given = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else ""
    source = Path(given).resolve() if given else checkout_around_this_file()
    raise SystemExit(main(source, Path(sys.argv[1]).resolve()))
