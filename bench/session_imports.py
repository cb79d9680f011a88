"""Where a session's server spends its import time, per package: the imports of its start
(gpuportal_session.singleuser's, jupyterhub-singleuser, Jupyter Server, JupyterLab and every
server extension the session's Jupyter config enables) run under `python -X importtime` as the
user, in a Slurm job on a GPU node, as a session's start runs them.

    /opt/gpuportal/venv/bin/python -m bench.session_imports [--user alice] [--top 12]
"""

from __future__ import annotations

import argparse
import subprocess
from collections import Counter

# What the session's start imports, in its order: the wrapper's skips first (singleuser.py),
# then Jupyter, then each enabled server extension's module as jupyter_server finds them.
START = """
import os, sys
from gpuportal_session import singleuser
singleuser.skip_slow_imports()
singleuser.skip_hub_database()
singleuser.skip_yarn_config()
singleuser.enable_server_guard()
import jupyterhub.singleuser, jupyter_server.serverapp, jupyterlab.labapp
from jupyter_core.paths import jupyter_config_path
from jupyter_server.extension.config import ExtensionConfigManager
enabled = ExtensionConfigManager(read_config_path=jupyter_config_path()).get_jpserver_extensions()
import importlib
for name, on in sorted(enabled.items()):
    if on:
        importlib.import_module(name)
"""


def profile(user: str, partition: str = "gpu") -> Counter[str]:
    """Microseconds of import per top-level package (each module's own time, summed)."""
    result = subprocess.run(
        ["sudo", "-u", user, "srun", "-p", partition, "-N1", "-n1", "--mem=2G", "-t", "5",
         "--quiet", "/opt/gpuportal/venv/bin/python", "-X", "importtime", "-c", START],
        capture_output=True, text=True, timeout=300, cwd="/tmp", check=True,
    )  # fmt: skip
    per_package: Counter[str] = Counter()
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, own, _, name = (part.strip() for part in line.replace(":", "|", 1).split("|"))
        per_package[name.split(".")[0]] += int(own)
    return per_package


def report(per_package: Counter[str], top: int) -> None:
    total = sum(per_package.values())
    print(f"the session start's imports: {total / 1e6:.2f} s in all, by package (own time):")
    for name, micros in per_package.most_common(top):
        print(f"  {micros / 1e6:6.3f} s  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--user", default="alice")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    report(profile(args.user), args.top)


if __name__ == "__main__":
    main()
