"""Every change the product makes of a library's own code is in a package's `compat` module,
behind guards that hold on the libraries installed here (issue 56, item 1).

`test_every_guard_holds_on_the_installed_libraries` fails the day an upgrade moves what a patch
was written against: the patch is then left out at start (or stops it, where required), and
this says which to look at again. docs/explanation/upstream.md lists them.
"""

from __future__ import annotations

import ast
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from tornado import web

from gpuportal_adapters import compat as adapters_compat
from gpuportal_adapters.compat import Patch
from gpuportal_session import compat as session_compat
from gpuportal_session.server_guard import generic_proxy_closed
from gpuportal_spawner import compat as hub_compat

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("portal", "spawner", "gpuportal_adapters", "gpuportal_core", "gpuportal_session")
PATCHERS = {f"{package}/compat.py" for package in PRODUCT}
# Variables the standard library documents as the program's to set.
DOCUMENTED = {
    "sys.argv",  # runpy's and every console script's way to pass arguments on
    "tempfile.tempdir",  # "defines the default value for the dir argument" (tempfile's docs)
}


def every_patch() -> list[Patch]:
    app = web.Application([], base_url="/user/alice/")
    server = SimpleNamespace(web_app=app, log=logging.getLogger("test"))
    shell = SimpleNamespace(extension_manager=SimpleNamespace(load_extension=print))
    return [
        *hub_compat.AT_START,
        *session_compat.SLOW_IMPORTS,
        session_compat.HUB_DATABASE,
        session_compat.NO_YARN_CONFIG,
        session_compat.tools_then_server(server),
        session_compat.proxy_closed(app, generic_proxy_closed(app)),
        adapters_compat.ssl_error_queue(lambda: None),
        session_compat.tensorboard_magic(shell, print),
    ]


@pytest.mark.parametrize("patch", every_patch(), ids=lambda patch: patch.name)
def test_every_guard_holds_on_the_installed_libraries(patch: Patch) -> None:
    assert patch.problems() == []


def test_jupyterhub_still_serves_a_servers_stop_where_the_portals_handler_goes() -> None:
    from gpuportal_spawner.hub_app import own_routes

    assert len(own_routes()) == 3  # the port callback, a default and a named server's stop
    with pytest.raises(adapters_compat.UnknownUpstream, match="serves 1 paths, not 2"):
        hub_compat.routes_taken_over(["/users/([^/]+)/server"])


def test_an_unknown_tornado_keeps_the_session_from_starting_with_its_proxy_open() -> None:
    app = web.Application([], base_url="/user/alice/")
    app.default_router.rules = tuple(app.default_router.rules)  # type: ignore[assignment]
    patch = session_compat.proxy_closed(app, generic_proxy_closed(app))
    with pytest.raises(adapters_compat.UnknownUpstream, match="keeps no list of rules"):
        adapters_compat.apply([patch])


def _imported_names(tree: ast.Module) -> set[str]:
    """Names a module binds by importing another package than the product's own."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {
                (a.asname or a.name).split(".")[0]
                for a in node.names
                if not a.name.startswith("gpuportal")
            }
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {a.asname or a.name for a in node.names if "gpuportal" not in node.module}
    return names


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def changes_of_libraries(path: Path) -> list[str]:
    """Where a module sets an attribute of a library's module or class, or an entry of
    sys.modules: `x.attr = ...`, `setattr(x, ...)`, `sys.modules[...] = ...`."""
    tree = ast.parse(path.read_text())
    libraries = _imported_names(tree)
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
        ):
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        for target in targets:
            modules = isinstance(target, ast.Subscript) and "sys.modules" in ast.unparse(target)
            if ast.unparse(target) in DOCUMENTED:
                continue
            if modules or (isinstance(target, ast.Attribute) and _root(target) in libraries):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(target)}")
    return found


def test_only_the_compat_modules_change_a_librarys_own_code() -> None:
    found = [
        change
        for package in PRODUCT
        for path in sorted((REPO / package).rglob("*.py"))
        if str(path.relative_to(REPO)) not in PATCHERS
        for change in changes_of_libraries(path)
    ]
    assert found == []


def test_the_finder_sees_a_change_of_a_library() -> None:
    # It must be able to fail: the old server_guard set simpervisor's handler itself.
    source = "from simpervisor import atexitasync\natexitasync._handle_signal = print\n"
    probe = REPO / "build" / "compat_probe.py"
    probe.parent.mkdir(exist_ok=True)
    probe.write_text(source)
    try:
        assert changes_of_libraries(probe) == [
            "build/compat_probe.py:2: atexitasync._handle_signal"
        ]
    finally:
        probe.unlink()
