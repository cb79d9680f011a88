"""The shared place of JupyterLab's bundles: `<prefix>/lab-static/<build>/<file>` for each build
the hub names (settings.lab_static_dirs; gpuportal_session.lab_static says why and how sessions
use it).

Only the files found in a build's folder at start are served, by their path in it; each is
immutable (its build is named by its files), gzipped once where the browser takes gzip, and kept
in memory after its first request (a build is about 17 MB, 5 MB gzipped; a lab loads about 5 MB
of it). No sign-in: these are JupyterLab's own public scripts, the same for everyone.
"""

from __future__ import annotations

import gzip
import logging
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock

from fastapi import FastAPI, Request, Response, status

from gpuportal_session.lab_static import build_id, static_files

log = logging.getLogger(__name__)

IMMUTABLE = "public, max-age=31536000, immutable"
COMPRESSIBLE = (".js", ".css", ".json", ".svg", ".html", ".map", ".txt", ".ttf", ".eot")


@dataclass
class LabBuild:
    folder: Path
    files: dict[str, int]
    _cache: dict[tuple[str, bool], bytes] = field(default_factory=dict)
    _lock: Lock = field(default_factory=Lock)

    def body(self, name: str, gzipped: bool) -> bytes:
        key = (name, gzipped)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached
        raw = (self.folder / name).read_bytes()
        body = gzip.compress(raw, compresslevel=6, mtime=0) if gzipped else raw
        with self._lock:
            self._cache[key] = body
        return body


def find_builds(folders: list[str]) -> dict[str, LabBuild]:
    """Each folder's build by its name; a folder that is missing is left out (and logged)."""
    builds: dict[str, LabBuild] = {}
    for folder in map(Path, folders):
        if not folder.is_dir():
            log.warning("No JupyterLab build at %s: not served", folder)
            continue
        files = static_files(folder)
        builds.setdefault(build_id(files), LabBuild(folder, files))
    return builds


def add_lab_static(app: FastAPI, prefix: str, folders: list[str]) -> None:
    builds = find_builds(folders)
    for name, build in builds.items():
        log.info("JupyterLab build %s (%s) at %s/lab-static/%s/", name, build.folder, prefix, name)

    # A plain function: FastAPI runs it in its thread pool (a file read, a gzip once).
    @app.get(f"{prefix}/lab-static/{{build}}/{{name:path}}", include_in_schema=False)
    def _lab_file(build: str, name: str, request: Request) -> Response:
        found = builds.get(build)
        if found is None or name not in found.files:
            return Response(
                "No such JupyterLab file here.", status.HTTP_404_NOT_FOUND, media_type="text/plain"
            )
        gzipped = name.endswith(COMPRESSIBLE) and "gzip" in request.headers.get(
            "accept-encoding", ""
        )
        try:
            body = found.body(name, gzipped)
        except OSError:
            # The build's folder changed under the portal (JupyterLab upgraded in place): the
            # file of the build it found at its start is gone, and that is all it serves.
            log.warning("JupyterLab build %s changed at %s: restart the hub", build, found.folder)
            return Response(
                "This JupyterLab build is no longer installed here; reload the page.",
                status.HTTP_404_NOT_FOUND,
                media_type="text/plain",
            )
        headers = {"Cache-Control": IMMUTABLE, "Vary": "Accept-Encoding"}
        if gzipped:
            headers["Content-Encoding"] = "gzip"
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return Response(body, headers=headers, media_type=media_type)
