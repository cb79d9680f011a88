"""The GPU paths on a real GPU: the notebook templates, a torchrun job, and the sessions' GPU
readings, as figures (run on a lent GPU machine; the local cluster's GPUs are fake).

    python bench/device_check.py

Each notebook runs in a fresh IPython kernel through nbclient, as JupyterLab would run it
(its `%tensorboard` and `!nvidia-smi` lines too), with the time each took; where nbclient is
not installed, its code cells run as one plain script instead (the `%` lines left out and
counted). To carry nbclient, ipykernel and Keras to a machine without them, see the docs'
support page. The torchrun job is the 03 notebook's own (DDP over NCCL, one
process per GPU) and the tests' all-reduce job (gloo) under `torch.distributed.run`. The GPU
readings are gpuportal_session.gpu_activity's own, idle and during a matrix-product load, as
the session's reader posts them to the hub. Prints what it ran and saw; exits 1 if any part
failed.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = (
    "01-pytorch-quickstart",
    "02-keras3-torch-backend",
    "03-ddp-multi-gpu",
    "04-mixed-precision-compile",
    "05-tensorboard-logging",
)  # 06 needs Slurm
failures: list[str] = []


def notebook_script(name: str) -> tuple[str, int]:
    """The notebook's code cells as one script, and how many `%`/`!` lines were left out."""
    cells = json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text())["cells"]
    lines, skipped = [], 0
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        for line in "".join(cell["source"]).splitlines():
            if line.lstrip().startswith(("%", "!")):
                skipped += 1
                continue
            lines.append(line)
        lines.append("")
    return "\n".join(lines), skipped


def run_notebooks(work: Path) -> None:
    try:
        import nbclient  # noqa: F401  (carried as wheels where the machine has none)
    except ImportError:
        print("notebooks: nbclient is not installed; each runs as a plain script")
        run_notebooks_as_scripts(work)
    else:
        run_notebooks_in_kernels(work)


def run_notebooks_in_kernels(work: Path) -> None:
    """Each notebook in a fresh IPython kernel, as JupyterLab runs it: its `%` and `!` lines too."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    # %tensorboard starts the `tensorboard` program: the kernel's own environment's.
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    os.environ.update({"KERAS_BACKEND": "torch", "MPLBACKEND": "Agg", "PATH": path})
    for name in NOTEBOOKS:
        nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
        client = NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(work)}}
        )
        started = time.monotonic()
        try:
            client.execute()
        except CellExecutionError as error:
            failures.append(f"notebook {name}")
            took = time.monotonic() - started
            print(f"notebook {name}: FAILED in a kernel after {took:.1f} s")
            for line in str(error).strip().splitlines()[-15:]:
                print(f"    {line}")
            continue
        took = time.monotonic() - started
        cells = [cell for cell in nb.cells if cell.cell_type == "code"]
        print(f"notebook {name}: {len(cells)} cells ran in a kernel in {took:.1f} s")
        for line in notebook_said(cells)[-8:]:
            print(f"    {line}")


def notebook_said(cells: list) -> list[str]:
    """The text the cells printed or returned, and a note of each rich output (HTML, image)."""
    said: list[str] = []
    for cell in cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                said.extend(output.get("text", "").strip().splitlines())
            elif "data" in output:
                data = output["data"]
                if "text/plain" in data and len(data) == 1:
                    said.extend(data["text/plain"].strip().splitlines())
                else:
                    said.append(f"[{', '.join(sorted(data))}]")
    return said


def run_notebooks_as_scripts(work: Path) -> None:
    for name in NOTEBOOKS:
        script, skipped = notebook_script(name)
        path = work / f"{name}.py"
        path.write_text(script)
        env = {**os.environ, "KERAS_BACKEND": "torch", "MPLBACKEND": "Agg"}
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, str(path)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        took = time.monotonic() - started
        said = (proc.stdout + proc.stderr).strip().splitlines()
        if proc.returncode == 0:
            print(f"notebook {name}: ran in {took:.1f} s ({skipped} % lines left out)")
            for line in said[-6:]:
                print(f"    {line}")
        elif "No module named" in (proc.stderr or ""):
            missing = next(line for line in said if "No module named" in line)
            print(f"notebook {name}: not run here ({missing.strip()})")
        else:
            failures.append(f"notebook {name}")
            print(f"notebook {name}: FAILED (exit {proc.returncode}) after {took:.1f} s")
            for line in said[-15:]:
                print(f"    {line}")


def run_torchrun(work: Path) -> None:
    job = REPO / "tests" / "integration" / "jobs_data" / "allreduce.py"
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node=2",
            str(job),
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=180,
    )
    took = time.monotonic() - started
    if proc.returncode != 0:
        failures.append("torchrun all-reduce")
    print(f"torchrun all-reduce (2 processes, gloo): exit {proc.returncode} in {took:.1f} s")
    for line in sorted(proc.stdout.strip().splitlines()):
        print(f"    {line}")


async def readings() -> None:
    sys.path.insert(0, str(REPO))
    from gpuportal_session.gpu_activity import NotMeasured, read_gpus

    env = {**os.environ, "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "0")}
    try:
        idle = await read_gpus(env)
    except NotMeasured as why:
        failures.append("GPU readings")
        print(f"GPU readings: not measured: {why}")
        return
    print(f"GPU readings, idle: {idle}")
    import torch

    stop = threading.Event()

    def load() -> None:
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        while not stop.is_set():
            for _ in range(20):
                a @ a
            torch.cuda.synchronize()

    worker = threading.Thread(target=load)
    worker.start()
    await asyncio.sleep(3)
    busy = [await read_gpus(env) for _ in range(3)]
    stop.set()
    worker.join()
    print(f"GPU readings under a bf16 matrix-product load (3 reads): {busy}")
    if not any(reading.utilisation > 50 for sample in busy for reading in sample):
        failures.append("GPU readings under load")


def main() -> int:
    subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
        check=False,
    )
    import torch

    print(
        f"python {sys.version.split()[0]}, torch {torch.__version__}, "
        f"cuda available: {torch.cuda.is_available()}"
    )
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        asyncio.run(readings())
        run_torchrun(work)
        run_notebooks(work)
    print("FAILED: " + ", ".join(failures) if failures else "all parts ran")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
