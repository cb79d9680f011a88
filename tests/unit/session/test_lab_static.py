"""A session's JupyterLab build, named as the portal names it, and the shared place it uses."""

from __future__ import annotations

from pathlib import Path

from gpuportal_session.lab_static import (
    ENV,
    build_id,
    environment_static_dir,
    for_hub,
    prefetched,
    shared_prefix,
    static_files,
)


def a_build(folder: Path, core: str = "core") -> Path:
    folder.mkdir(parents=True)
    (folder / "main.0123abcd.js").write_text("main")
    (folder / "jlab_core.4567ef.js").write_text(core)
    (folder / "1234.89ab.js").write_text("chunk")
    return folder


def test_a_build_is_named_by_its_files(tmp_path: Path) -> None:
    one = build_id(static_files(a_build(tmp_path / "one")))
    assert one == build_id(static_files(a_build(tmp_path / "same")))
    assert one != build_id(static_files(a_build(tmp_path / "other", core="a longer core")))
    assert len(one) == 16


def test_the_largest_bundles_are_prefetched_as_jupyterlab_asks_for_them(tmp_path: Path) -> None:
    files = static_files(a_build(tmp_path / "static"))
    assert prefetched(files) == ["main.0123abcd.js?v=0123abcd", "jlab_core.4567ef.js?v=4567ef"]


def test_a_session_uses_the_shared_place_only_for_a_build_it_serves(tmp_path: Path) -> None:
    folder = a_build(tmp_path / "static")
    build = build_id(static_files(folder))
    place = "/services/portal/lab-static"
    assert shared_prefix({ENV: f"{place}|other,{build}"}, folder) == f"{place}/{build}/"
    assert shared_prefix({ENV: f"{place}|other"}, folder) is None  # a user's own JupyterLab
    assert shared_prefix({ENV: f"{place}|"}, folder) is None
    assert shared_prefix({}, folder) is None
    assert shared_prefix({ENV: f"{place}|{build}"}, tmp_path / "absent") is None


def test_the_hub_hands_on_each_environments_build_once(tmp_path: Path) -> None:
    a_build(environment_static_dir(tmp_path / "venv"))
    a_build(environment_static_dir(tmp_path / "analysis"))  # the same build as the venv's
    a_build(environment_static_dir(tmp_path / "conda"), core="another core")
    environments = [
        {"kind": "venv", "prefix": str(tmp_path / "analysis")},
        {"kind": "conda", "prefix": str(tmp_path / "conda")},
        {"kind": "modules", "modules": ["x/1"]},
        {"kind": "venv", "prefix": str(tmp_path / "absent")},
    ]
    hub = for_hub(str(tmp_path / "venv"), environments, "/services/portal/lab-static")
    assert len(hub.folders) == 4  # the portal logs and skips the absent one
    url, builds = hub.job_env.split("|")
    assert url == "/services/portal/lab-static" and len(builds.split(",")) == 2
    venv_build = build_id(static_files(environment_static_dir(tmp_path / "venv")))
    assert hub.prefetch == [
        f"{url}/{venv_build}/main.0123abcd.js?v=0123abcd",
        f"{url}/{venv_build}/jlab_core.4567ef.js?v=4567ef",
    ]
