"""The house by where code runs: a built wheel carries its templates and notebooks, and the
session package (what runs in the user's job) imports neither the hub's code nor the portal's."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden_jobs import GOLDEN_CASES, golden_path

# Builds or starts processes: make test runs it, make check leaves it out (issue 53).
pytestmark = pytest.mark.builds

REPO = Path(__file__).resolve().parents[2]
# Modules a software environment must not need to carry.
# aiohttp and the packages it imports (its requirements on Python 3.11 and newer).
AIOHTTP = ("aiohttp", "aiohappyeyeballs", "aiosignal", "attr", "attrs", "frozenlist", "multidict",
           "propcache", "yarl", "idna")  # fmt: skip
FORBIDDEN = {"gpuportal_spawner", "gpuportal_portal", "gpuportal_core", "fastapi",
             "sqlalchemy", "psycopg", "ldap3", "batchspawner", "wrapspawner", "uvicorn",
             "alembic"}  # fmt: skip


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project as a wheel, installed alone into a folder (not the editable checkout)."""
    out = tmp_path_factory.mktemp("wheel")
    # From a copy without the checkout's build/: setuptools packs whatever an earlier build
    # left in build/lib (packages since renamed, files since removed) into the wheel.
    source = out / "source"
    shutil.copytree(
        REPO, source,
        ignore=shutil.ignore_patterns("build", ".git", "*.egg-info", "node_modules", "__pycache__"),
    )  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out / "dist"), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    [wheel] = (out / "dist").glob("*.whl")
    site = out / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
         str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return site


def test_the_wheel_installs_only_gpuportal_names(installed_wheel: Path) -> None:
    """One scheme that collides with nothing else in site-packages: portal/ and spawner/
    install as gpuportal_portal and gpuportal_spawner, templates/ and notebooks/ likewise."""
    installed = {p.name for p in installed_wheel.iterdir() if not p.name.endswith(".dist-info")}
    installed.discard("bin")  # the console scripts
    assert installed == {
        "gpuportal_core",
        "gpuportal_adapters",
        "gpuportal_spawner",
        "gpuportal_portal",
        "gpuportal_session",
        "gpuportal_cli",
        "gpuportal_templates",
        "gpuportal_notebooks",
    }


def _run_isolated(site: Path, code: str, tmp_path: Path, *, also: tuple[str, ...] = ()) -> str:
    """Python without site-packages (so not the editable checkout), the wheel's folder and
    its base dependencies alone on its path (jinja2, python-hostlist, pydantic for the profile
    spec, PyYAML for notebook jobs' parameters, croniter with python-dateutil for their
    schedules), with the packages named in `also` (of the extra under test), run away from the
    checkout."""
    import annotated_types
    import croniter
    import dateutil
    import hostlist  # type: ignore[import-untyped]
    import jinja2
    import markupsafe
    import pydantic
    import pydantic_core
    import six  # type: ignore[import-untyped]
    import typing_extensions
    import typing_inspection
    import yaml

    deps = tmp_path / "deps"
    deps.mkdir()
    for package in (
        jinja2,
        markupsafe,
        pydantic,
        pydantic_core,
        annotated_types,
        typing_inspection,
        yaml,
        croniter,
        dateutil,
    ):
        shutil.copytree(Path(str(package.__file__)).parent, deps / package.__name__)
    for module in (typing_extensions, hostlist, six):
        shutil.copy(str(module.__file__), deps)
    for name in also:
        shutil.copytree(Path(str(importlib.import_module(name).__file__)).parent, deps / name)
    env = {"PYTHONPATH": f"{site}{os.pathsep}{deps}", "PATH": os.environ.get("PATH", "")}
    result = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_wheel_renders_the_golden_scripts_from_its_own_templates(
    installed_wheel: Path, tmp_path: Path
):
    shutil.copy(REPO / "tests" / "golden_jobs.py", tmp_path / "golden_jobs.py")
    code = """
import json
import gpuportal_core.resources
from gpuportal_core.sbatch import render_singleuser_script
from golden_jobs import GOLDEN_CASES, golden_job
print(json.dumps({
    "templates": str(gpuportal_core.resources.TEMPLATES_DIR),
    "notebooks": sorted(p.name for p in gpuportal_core.resources.NOTEBOOKS_DIR.glob("*.ipynb")),
    "scripts": [render_singleuser_script(golden_job(slug, environment=env))
                for slug, env in GOLDEN_CASES],
}))
"""
    answer = json.loads(_run_isolated(installed_wheel, code, tmp_path))
    assert answer["templates"].startswith(str(installed_wheel))
    assert answer["notebooks"] == sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
    expected = [golden_path(slug, env).read_text() for slug, env in GOLDEN_CASES]
    assert answer["scripts"] == expected


def test_the_session_package_needs_neither_hub_nor_portal(installed_wheel: Path, tmp_path: Path):
    code = """
import json, sys
import gpuportal_session.singleuser, gpuportal_session.session_files
import gpuportal_session.tensorboard_private, gpuportal_session.tensorboard_page
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""
    # tornado: what jupyter-server serves with; aiohttp (a requirement of the session extra and
    # of JupyterHub) and what it imports: what the session's calls to the hub go over.
    session_deps = ("tornado", *AIOHTTP)
    loaded = set(json.loads(_run_isolated(installed_wheel, code, tmp_path, also=session_deps)))
    assert "gpuportal_session" in loaded
    assert not loaded & FORBIDDEN, loaded & FORBIDDEN
    # The config folder that enables the server extensions (generic /proxy/ closed; Open in
    # TensorBoard) ships too, and so does the built lab extension (deploy/local/labextension.sh).
    config = installed_wheel / "gpuportal_session/jupyter_config/jupyter_server_config.d"
    enabled = json.loads((config / "gpuportal_session.json").read_text())
    assert enabled["ServerApp"]["jpserver_extensions"] == {
        "gpuportal_session.server_guard": True,
        "gpuportal_session.tensorboard_api": True,
        "gpuportal_session.gpu_activity": True,
        "gpuportal_session.dask_dashboard": True,
        # Dask's extension loads after the start (gpuportal_session.deferred_extensions).
        "gpuportal_session.deferred_extensions": True,
        "dask_labextension": False,
    }
    # The terminals' start-up (the session's environment in front of the login files' PATH).
    assert (installed_wheel / "gpuportal_session/jupyter_config/jupyter_server_config.py").exists()
    assert (installed_wheel / "gpuportal_session/terminal_rc.sh").exists()
    # The desktop's X start-up and its Xfce defaults, and VS Code's tile icon.
    assert (installed_wheel / "gpuportal_session/desktop_xstartup.sh").exists()
    xfconf = "desktop_xdg/xfce4/xfconf/xfce-perchannel-xml/xfce4-session.xml"
    assert (installed_wheel / "gpuportal_session" / xfconf).exists()
    assert (installed_wheel / "gpuportal_session/vscode.svg").exists()
    lab = installed_wheel / "gpuportal_session/jupyter_data/labextensions/@gpuportal/session"
    assert json.loads((lab / "package.json").read_text())["name"] == "@gpuportal/session"
    assert list((lab / "static").glob("remoteEntry.*.js"))


def test_the_core_does_no_io(installed_wheel: Path, tmp_path: Path) -> None:
    """Every module of gpuportal_core, imported with its base dependencies alone: none of them
    brings in an adapter, a process, an event loop or a framework (issue 37, item 6)."""
    code = """
import json, pkgutil, importlib, sys
import gpuportal_core
for module in pkgutil.iter_modules(gpuportal_core.__path__):
    importlib.import_module(f"gpuportal_core.{module.name}")
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""
    loaded = set(json.loads(_run_isolated(installed_wheel, code, tmp_path)))
    assert "gpuportal_core" in loaded
    # (socket is not here: the standard library's email, which pydantic reads, imports it.)
    doing_io = {"gpuportal_adapters", "subprocess", "asyncio", "ldap3", "tornado"}
    assert not loaded & (FORBIDDEN - {"gpuportal_core"} | doing_io), loaded & doing_io
