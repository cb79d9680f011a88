"""What the portal finds in a podman archive before offering it, on small archives made here
in the OCI layout `podman save --format oci-archive` writes (index.json, a manifest, layers)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuportal_adapters.image_archive import archive_problem

SITE = "opt/gpuportal-session/venv/lib/python3.11/site-packages"


def _tar(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def oci_archive(path: Path, layers: list[dict[str, bytes]]) -> Path:
    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return digest

    layer_digests = [blob(gzip.compress(_tar(files))) for files in layers]
    manifest = {"layers": [{"digest": d} for d in layer_digests], "config": {"digest": blob(b"{}")}}
    index = {"manifests": [{"digest": blob(json.dumps(manifest).encode())}]}
    files = {"index.json": json.dumps(index).encode(), "oci-layout": b"{}"}
    files |= {f"blobs/sha256/{d.split(':')[1]}": data for d, data in blobs.items()}
    path.write_bytes(_tar(files))
    path.chmod(0o644)
    return path


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are root's alone), as a site's images' is."""
    path = Path(tempfile.mkdtemp(prefix="gpuportal-archive-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_a_session_image_passes(open_dir: Path) -> None:
    archive = oci_archive(
        open_dir / "session.tar",
        [
            {"etc/os-release": b"ID=debian\n", f"{SITE}/jupyterlab/__init__.py": b""},
            {f"{SITE}/gpuportal_session/__init__.py": b""},
        ],
    )
    assert archive_problem(str(archive)) is None


def test_an_image_without_the_session_package_says_what_is_missing(open_dir: Path) -> None:
    archive = oci_archive(open_dir / "lab.tar", [{f"{SITE}/jupyterlab/__init__.py": b""}])
    problem = archive_problem(str(archive))
    assert problem is not None
    assert "has no gpuportal_session (the session package)" in problem
    assert "session.Containerfile" in problem


def test_a_file_that_is_no_archive_or_closed_to_users_is_refused(open_dir: Path) -> None:
    junk = open_dir / "junk.tar"
    junk.write_bytes(b"\0" * 2048)
    junk.chmod(0o644)
    assert "is not an OCI archive" in (archive_problem(str(junk)) or "")
    closed = oci_archive(open_dir / "closed.tar", [{f"{SITE}/jupyterlab/__init__.py": b""}])
    closed.chmod(0o600)
    assert "chmod o+r" in (archive_problem(str(closed)) or "")
    assert "does not exist" in (archive_problem(str(open_dir / "none.tar")) or "")
