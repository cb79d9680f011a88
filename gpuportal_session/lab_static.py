"""JupyterLab's own static files (its bundles: 5 MB of scripts at a lab's first load) served from
one shared place for every session of a JupyterLab build, not from each user's server.

Under `/user/<name>/static/lab/` every user's browser fetched its own copy, a first visit only
after the job had started, and a new server of the same user (a named one) again. The portal
serves each build it knows at `<portal>/lab-static/<build>/` (immutable, gzipped once), the
hub's pages (spawn form, waiting page, home) let the browser prefetch the largest of them while
the user chooses and the job starts, and a session whose own build the portal serves points
JupyterLab there (`LabApp.static_url_prefix`, from its Jupyter config).

A build is named by its files' names and sizes: JupyterLab names its bundles by their content,
so two environments with the same JupyterLab and core extensions share a build, and a session
whose JupyterLab differs from the one the portal found (a user's own in ~/.local, an image's)
simply keeps its own URL.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# The job's environment: "<URL of the shared place>|<build>,<build>..." (the hub's config).
ENV = "GPUPORTAL_LAB_STATIC"
# The bundles every lab loads at its start, the largest ones (main, then jlab_core: 2.8 MB).
PREFETCHED = re.compile(r"^(main|jlab_core)\.([0-9a-f]+)\.js$")


def static_files(static_dir: Path) -> dict[str, int]:
    """Every file of the build, by its path in the folder, with its size."""
    files: dict[str, int] = {}
    for root, _dirs, names in os.walk(static_dir):
        for name in names:
            path = Path(root) / name
            if path.is_file():
                files[path.relative_to(static_dir).as_posix()] = path.stat().st_size
    return files


def build_id(files: Mapping[str, int]) -> str:
    """The build's name: its files' names and sizes, hashed (16 hex digits)."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"{name}\0{files[name]}\n".encode())
    return digest.hexdigest()[:16]


def prefetched(files: Mapping[str, int]) -> list[str]:
    """The files the hub's pages prefetch, main's first, each with the `?v=<its hash>` that
    JupyterLab's page and its script loader put after it (the browser's cache keeps a URL with
    its query: without it a prefetched file would not be found)."""
    found = [(m.group(1), m.string, m.group(2)) for m in map(PREFETCHED.match, files) if m]
    return [
        f"{name}?v={digest}" for _kind, name, digest in sorted(found, key=lambda f: f[0] != "main")
    ]


def environment_static_dir(prefix: Path) -> Path:
    """Where the JupyterLab of a venv or conda prefix keeps its build."""
    return prefix / "share" / "jupyter" / "lab" / "static"


def own_static_dir() -> Path:
    """This process's JupyterLab build, in the application folder JupyterLab itself finds (its
    get_app_dir: JUPYTERLAB_DIR, a user install's, then the prefix's), which LabApp imports
    anyway; the prefix's where JupyterLab is not importable."""
    try:
        from jupyterlab.commands import get_app_dir
    except ImportError:
        return Path(sys.prefix) / "share" / "jupyter" / "lab" / "static"
    return Path(get_app_dir()) / "static"


def shared_prefix(environ: Mapping[str, str], static_dir: Path) -> str | None:
    """The shared place's URL for this build (ending in /), None where the portal does not serve
    it or the hub named no shared place."""
    url, _, builds = environ.get(ENV, "").partition("|")
    if not url or not builds or not static_dir.is_dir():
        return None
    build = build_id(static_files(static_dir))
    if build not in builds.split(","):
        return None
    return f"{url.rstrip('/')}/{build}/"


@dataclass(frozen=True)
class HubLabStatic:
    """What the hub's config hands on: the folders the portal serves, the jobs' variable, and
    the URLs the hub's pages prefetch (the session venv's build)."""

    folders: list[Path]
    job_env: str
    prefetch: list[str]


def for_hub(
    session_venv: str, environments: Iterable[Mapping[str, object]], url: str
) -> HubLabStatic:
    """The builds of the session venv and of the venv and conda environments, by the shared
    place's URL (e.g. /services/portal/lab-static)."""
    folders = [environment_static_dir(Path(session_venv))] + [
        environment_static_dir(Path(str(e["prefix"])))
        for e in environments
        if e.get("kind") in ("venv", "conda")
    ]
    builds = {build_id(files): files for files in map(static_files, filter(Path.is_dir, folders))}
    first = next(iter(builds), "")
    prefetch = [f"{url}/{first}/{name}" for name in prefetched(builds.get(first, {}))]
    return HubLabStatic(folders, f"{url}|{','.join(builds)}", prefetch)
