"""JupyterLab's bundles at /services/portal/lab-static/<build>/ (portal/lab_static.py): the
files of the builds the hub names, immutable and gzipped; nothing else."""

from __future__ import annotations

import gzip
from pathlib import Path

from fastapi.testclient import TestClient

from gpuportal_portal.app import create_app
from gpuportal_portal.settings import PortalSettings
from gpuportal_session.lab_static import build_id, static_files

PLACE = "/services/portal/lab-static"
MAIN = "main.0123abcd.js"


def a_build(folder: Path, core: str = "var core = 1;\n" * 500) -> Path:
    (folder / "fonts").mkdir(parents=True)
    (folder / MAIN).write_text("console.log('main');\n" * 200)
    (folder / "jlab_core.4567ef.js").write_text(core)
    (folder / "fonts" / "a.woff2").write_bytes(b"\x00wOF2" * 100)
    return folder


def portal(tmp_path: Path, *folders: Path) -> TestClient:
    settings = PortalSettings(
        database_url=f"sqlite:///{tmp_path / 'portal.db'}",
        slurm_bin_dir=str(tmp_path / "no-slurm"),
        lab_static_dirs=[str(f) for f in folders],
    )
    return TestClient(create_app(settings))


def test_a_builds_files_are_served_immutable_and_gzipped(tmp_path: Path) -> None:
    folder = a_build(tmp_path / "static")
    build = build_id(static_files(folder))
    with portal(tmp_path, folder, tmp_path / "missing") as client:
        answer = client.get(f"{PLACE}/{build}/{MAIN}?v=0123abcd")
        assert answer.status_code == 200
        assert answer.text == (folder / MAIN).read_text()  # the client took the gzip off
        assert answer.headers["content-encoding"] == "gzip"
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert answer.headers["content-type"].startswith("text/javascript")
        raw = client.get(f"{PLACE}/{build}/{MAIN}", headers={"Accept-Encoding": "identity"}).headers
        assert "content-encoding" not in raw
        font = client.get(f"{PLACE}/{build}/fonts/a.woff2")
        assert font.status_code == 200 and "content-encoding" not in font.headers
        # What went over the wire is the gzip of the file.
        with client.stream("GET", f"{PLACE}/{build}/{MAIN}") as streamed:
            wire = b"".join(streamed.iter_raw())
        assert len(wire) < (folder / MAIN).stat().st_size
        assert gzip.decompress(wire) == (folder / MAIN).read_bytes()


def test_nothing_but_a_known_builds_own_files(tmp_path: Path) -> None:
    folder = a_build(tmp_path / "env" / "static")
    (tmp_path / "env" / "secret.txt").write_text("not JupyterLab's")
    build = build_id(static_files(folder))
    with portal(tmp_path, folder) as client:
        for path in (
            f"{PLACE}/0000000000000000/{MAIN}",  # a build the hub did not name
            f"{PLACE}/{build}/absent.js",
            f"{PLACE}/{build}/../secret.txt",
            f"{PLACE}/{build}/%2e%2e/secret.txt",
            f"{PLACE}/{build}/fonts",
        ):
            answer = client.get(path)
            assert answer.status_code == 404, path
            assert "not JupyterLab's" not in answer.text


def test_two_environments_with_one_build_share_it(tmp_path: Path) -> None:
    one, two = a_build(tmp_path / "one"), a_build(tmp_path / "two")
    other = a_build(tmp_path / "other", core="var core = 2;\n" * 501)
    builds = {build_id(static_files(f)) for f in (one, two, other)}
    assert len(builds) == 2
    with portal(tmp_path, one, two, other) as client:
        for build in builds:
            assert client.get(f"{PLACE}/{build}/{MAIN}").status_code == 200


def test_a_build_upgraded_in_place_is_a_clear_404_not_an_error(tmp_path: Path) -> None:
    folder = a_build(tmp_path / "static")
    build = build_id(static_files(folder))
    with portal(tmp_path, folder) as client:
        (folder / MAIN).unlink()  # JupyterLab upgraded under the running portal
        answer = client.get(f"{PLACE}/{build}/{MAIN}")
        assert answer.status_code == 404
        assert "no longer installed" in answer.text
