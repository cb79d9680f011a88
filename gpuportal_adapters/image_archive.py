"""What the portal checks of a podman environment's image archive before offering it: that
every user's podman can read it, that it is an OCI archive (`podman save --format
oci-archive`), and that its files hold JupyterLab and the session package, the two things the
job runs in it (gpuportal_session.container). Read from the file, without running it: the
portal's account has no container engine of its own to trust, and a look at the layers'
file lists is what a run would find.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import tarfile
from pathlib import PurePosixPath
from typing import IO, Any

# A file of each package, as a venv's site-packages holds it.
NEEDED = {
    "JupyterLab": "site-packages/jupyterlab/__init__.py",
    "gpuportal_session (the session package)": "site-packages/gpuportal_session/__init__.py",
}


def archive_problem(path: str) -> str | None:
    """What is wrong with the archive for a session image, or None. Cached per version of the
    file (its size and time): a layer scan takes seconds, and an edit of the environment's
    title should not repeat it."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"{path} does not exist on the login host (publish it where every node sees it)"
    except OSError as error:
        return f"{path} cannot be read by the portal's account ({error.strerror}): open it to all"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a file"
    unreadable = _not_readable_by_all(path)
    if unreadable:
        return unreadable
    return _archive_problem(path, info.st_size, info.st_mtime_ns)


def _not_readable_by_all(path: str) -> str | None:
    """The users' podman loads it as each user: the file and every folder above must be open."""
    if not os.stat(path).st_mode & stat.S_IROTH:
        return f"{path} is not readable by the users: chmod o+r {path}"
    folder = os.path.dirname(path)
    while folder not in ("", "/"):
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return f"the folder {folder} is closed to the users: chmod o+x {folder}"
        folder = os.path.dirname(folder)
    return None


@functools.lru_cache(maxsize=32)
def _archive_problem(path: str, _size: int, _mtime_ns: int) -> str | None:
    try:
        with tarfile.open(path, mode="r:") as archive:
            layers = _layers(archive)
            missing = dict(NEEDED)
            # The newest layers first: the session package is the recipe's last one.
            for digest in reversed(layers):
                blob = archive.extractfile(_blob(digest))
                if blob is None:
                    return f"{path}: layer {digest} is missing"
                _strike_found(blob, missing)
                if not missing:
                    return None
    except (tarfile.TarError, OSError, KeyError, ValueError) as error:
        return (
            f"{path} is not an OCI archive ({error}); make one with "
            "podman save --format oci-archive -o FILE IMAGE"
        )
    return (
        f"{path} has no {' and no '.join(missing)}: build the image from "
        "deploy/docker/session.Containerfile"
    )


def _blob(digest: str) -> str:
    algorithm, _, hexdigest = digest.partition(":")
    return f"blobs/{algorithm}/{hexdigest}"


def _json(archive: tarfile.TarFile, name: str) -> Any:
    member = archive.extractfile(name)
    if member is None:
        raise ValueError(f"{name} is not a file")
    return json.load(member)


def _layers(archive: tarfile.TarFile) -> list[str]:
    index = _json(archive, "index.json")
    manifest = _json(archive, _blob(index["manifests"][0]["digest"]))
    return [str(layer["digest"]) for layer in manifest["layers"]]


def _strike_found(blob: IO[bytes], missing: dict[str, str]) -> None:
    """Takes from `missing` each package whose file the layer holds."""
    with tarfile.open(fileobj=blob, mode="r|*") as layer:
        for member in layer:
            name = str(PurePosixPath(member.name))
            for what, tail in list(missing.items()):
                if name.endswith("/" + tail):
                    del missing[what]
            if not missing:
                return
