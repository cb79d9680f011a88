"""Where the product changes a library's own code, each change behind a guard, and the one
change of this package: OpenSSL's error queue cleared before each TLS call.

A library's internals change in any release, and a change made on them then breaks silently.
So each package of the product that must change a library (a method replaced, a module kept
from importing) does so in one module of its own, named `compat` (this one, and
gpuportal_spawner.compat, gpuportal_session.compat), as `Patch`es: each names its guards, what
the library must still be for the change to be right (the sha256 of a method's source as it
was written against, or a version range), checked when it is applied. On an unknown upstream a
patch that only makes the product faster is left out, and the process says so at start, at
ERROR level, with what differs; a patch the product's safety rests on stops the start
(`UnknownUpstream`). The unit tests check every guard against the installed libraries, so an
upgrade that moves one fails there first. docs/explanation/upstream.md has each patch, why it
is there and what was asked of its library.

The SSL patch: CPython's ssl module on OpenSSL 3.4 and newer can fail a TLS read or write on a
healthy connection with BrokenPipeError, because an earlier failure of another connection in
the same thread left an entry in OpenSSL's per-thread error queue, which `SSL_get_error()` then
reads as this call's (python/cpython#148594; gh-127257 made such entries an OSError). Seen on
Debian 13 (Python 3.13, OpenSSL 3.5), where every connection of the product is TLS: a
session's Dask client lost its scheduler in 6 of 10 cluster starts; with the queue cleared
before each read and write, 7 of 7 started (docs/reference/support.md). `install()` makes each
I/O method of `ssl.SSLSocket` clear the calling thread's queue first, as OpenSSL's
documentation of `SSL_get_error` asks of every caller. Standard library only: it runs in the
hub, the portal, the session's server, its kernels and Dask's workers alike. It does nothing
where OpenSSL is older than 3.4 or libcrypto cannot be loaded, and nothing a second time.
"""

from __future__ import annotations

import ast
import ctypes
import ctypes.util
import functools
import hashlib
import importlib.metadata
import importlib.util
import inspect
import logging
import re
import ssl
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class UnknownUpstream(RuntimeError):
    """A library differs from what a patch the product's safety rests on was written for."""


@dataclass(frozen=True)
class Guard:
    """What a library must still be for a patch to be right; `problem()` says how it is not."""

    what: str
    problem: Callable[[], str | None]


def source_hash(thing: Any) -> str:
    try:
        return hashlib.sha256(inspect.getsource(thing).encode()).hexdigest()
    except (OSError, TypeError):
        return ""  # installed without its sources: not the known one


def same_source(what: str, find: Callable[[], Any], sha256: str, written_for: str) -> Guard:
    """The object `find` answers has the source it had in `written_for`."""

    def problem() -> str | None:
        try:
            now = source_hash(find())
        except (ImportError, AttributeError) as missing:
            return f"{what} is gone ({missing})"
        if now != sha256:
            return f"{what} is not {written_for}'s (sha256 {now[:12] or 'unknown'})"
        return None

    return Guard(what, problem)


def same_function(what: str, module: str, function: str, sha256: str, written_for: str) -> Guard:
    """A function of a module has the source it had in `written_for`, read from the module's
    file: the module is not imported (a kernel must not pay for TensorBoard's import at start)."""

    def problem() -> str | None:
        path = source_file(module)
        if path is None:
            return f"{module} is not installed"
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name == function:
                found = ast.get_source_segment(text, node) or ""
                now = hashlib.sha256(found.encode()).hexdigest()
                return None if now == sha256 else f"{what} is not {written_for}'s ({now[:12]})"
        return f"{what} is gone"

    return Guard(what, problem)


def release(version: str) -> tuple[int, ...]:
    """'6.1.1' -> (6, 1, 1); '2.0.0rc1' -> (2, 0, 0)."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


def version_in(distribution: str, low: str, below: str) -> Guard:
    """The installed distribution is at least `low` and below `below`."""

    def problem() -> str | None:
        try:
            found = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return f"{distribution} is not installed"
        if not release(low) <= release(found) < release(below):
            return f"{distribution} {found} is not in [{low}, {below})"
        return None

    return Guard(f"{distribution} >={low},<{below}", problem)


def python_in(low: tuple[int, int], below: tuple[int, int]) -> Guard:
    def problem() -> str | None:
        if not low <= sys.version_info[:2] < below:
            return f"Python {sys.version.split()[0]} is not in [{low}, {below})"
        return None

    return Guard(f"Python >={low},<{below}", problem)


def source_file(dotted: str) -> Path | None:
    """The file of a module of an installed package, found without importing the package (whose
    import may be what a patch keeps from happening)."""
    top, *inner = dotted.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent.joinpath(*inner)
    for found in (path.with_suffix(".py"), path / "__init__.py"):
        if inner and found.is_file():
            return found
    return Path(spec.origin) if not inner else None


def _optional(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether an import statement sits in `try: ... except ImportError` or in
    `with suppress(ImportError)`."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Try) and any(
            "ImportError" in ast.unparse(handler.type or ast.Name("BaseException"))
            for handler in node.handlers
        ):
            return True
        if isinstance(node, ast.With) and any(
            "ImportError" in ast.unparse(item.context_expr) for item in node.items
        ):
            return True
    return False


def imported_optionally(importer: str, module: str) -> Guard:
    """`importer` imports `module` only where an ImportError is caught: keeping `module` from
    importing (sys.modules[module] = None) leaves `importer` working."""
    what = f"{importer}'s import of {module}"

    def problem() -> str | None:
        path = source_file(importer)
        if path is None:
            return f"{importer} is not installed"
        tree = ast.parse(path.read_text())
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        # What a relative import starts from: the package itself, for its __init__.
        package = importer if path.name == "__init__.py" else importer.rsplit(".", 1)[0]
        imports: list[ast.Import | ast.ImportFrom] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                name = f"{package}.{node.module or ''}".rstrip(".") if node.level else node.module
                if name == module:
                    imports.append(node)
            elif isinstance(node, ast.Import) and any(a.name == module for a in node.names):
                imports.append(node)
        if not imports:
            return f"{importer} no longer imports {module}"
        if not all(_optional(node, parents) for node in imports):
            return f"{importer} needs {module} now (an import outside `except ImportError`)"
        return None

    return Guard(what, problem)


@dataclass(frozen=True)
class Patch:
    """One change of a library: `change()` makes it, `done()` tells whether it is made."""

    name: str
    guards: tuple[Guard, ...]
    change: Callable[[], object]
    done: Callable[[], bool]
    # The product's safety rests on it: an unknown upstream stops the start.
    required: bool = False

    def problems(self) -> list[str]:
        return [said for guard in self.guards if (said := guard.problem()) is not None]


def apply(patches: Iterable[Patch], logger: logging.Logger = log) -> list[str]:
    """Make each patch whose guards hold (once); the names of those made or made before."""
    made = []
    for patch in patches:
        if patch.done():
            made.append(patch.name)
            continue
        problems = patch.problems()
        if problems:
            said = f"{patch.name}: {'; '.join(problems)} (docs/explanation/upstream.md)"
            if patch.required:
                raise UnknownUpstream(f"{said}: refusing to start without it")
            logger.error("Left out, the library's own way kept: %s", said)
            continue
        patch.change()
        made.append(patch.name)
    return made


def skipped_import(name: str, importer: str, why: str) -> Patch:
    """`import name` fails at once in this process, as if it were not installed: the module is
    set to None in sys.modules (Python's documented way), for a module `importer` imports only
    optionally and this process never needs."""

    def change() -> None:
        sys.modules[name] = None  # type: ignore[assignment]

    return Patch(
        f"{name} not imported ({why})",
        guards=(imported_optionally(importer, name),),
        change=change,
        done=lambda: name in sys.modules and sys.modules[name] is None,
    )


# jsonschema imports rfc3987_syntax for its "iri" format checks, and that module builds about 35
# Lark parsers at import: 1.2 s of a 2.6 s JupyterLab start on a 2-core node, 2 to 4 s of a hub's
# start. No schema of JupyterHub's or Jupyter's uses the "iri" formats; without the module
# jsonschema simply does not check them (python-jsonschema/jsonschema#1428). Kept out by the hub
# (gpuportal_spawner.hub_command) and the session (gpuportal_session.compat) before either
# imports jsonschema.
IRI_PARSERS = skipped_import(
    "rfc3987_syntax", importer="jsonschema._format", why="jsonschema's iri format checks"
)


# -- OpenSSL's error queue ---------------------------------------------------------------------

# SSLSocket's methods that end in SSL_read, SSL_write, SSL_do_handshake or SSL_shutdown.
IO_METHODS = ("recv", "recv_into", "read", "send", "sendall", "write", "do_handshake", "unwrap")
_MARK = "_gpuportal_clears_ssl_errors"


def needed(version: tuple[int, ...] = ssl.OPENSSL_VERSION_INFO) -> bool:
    return tuple(version[:2]) >= (3, 4)


def _clear_errors() -> Callable[[], object] | None:
    name = ctypes.util.find_library("crypto")
    if name is None:
        return None
    try:
        # The library _ssl is linked against: dlopen hands back the same one, with its queue.
        clear: Callable[[], object] = ctypes.CDLL(name).ERR_clear_error
    except (OSError, AttributeError):
        return None
    return clear


def _clearing(method: Callable[..., Any], clear: Callable[[], object]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: ssl.SSLSocket, *args: Any, **kwargs: Any) -> Any:
        clear()
        return method(self, *args, **kwargs)

    setattr(call, _MARK, True)
    return call


def _methods_are_python() -> str | None:
    """The wrapper calls each method as `method(self, ...)`: each must be one of SSLSocket's
    own Python methods, as in CPython 3.11 to 3.14."""
    odd = [n for n in IO_METHODS if not inspect.isfunction(getattr(ssl.SSLSocket, n, None))]
    return f"ssl.SSLSocket's {', '.join(odd)} are not Python methods" if odd else None


def ssl_error_queue(clear: Callable[[], object]) -> Patch:
    def change() -> None:
        for name in IO_METHODS:
            setattr(ssl.SSLSocket, name, _clearing(getattr(ssl.SSLSocket, name), clear))

    return Patch(
        "OpenSSL's error queue cleared before each TLS call (python/cpython#148594)",
        guards=(python_in((3, 11), (3, 15)), Guard("ssl.SSLSocket", _methods_are_python)),
        change=change,
        done=lambda: bool(getattr(ssl.SSLSocket.recv_into, _MARK, False)),
    )


def install(version: tuple[int, ...] = ssl.OPENSSL_VERSION_INFO) -> bool:
    """Clear OpenSSL's error queue before each TLS operation of this process, where needed.
    True when the methods clear it (now or from an earlier call)."""
    if getattr(ssl.SSLSocket.recv_into, _MARK, False):
        return True
    if not needed(version):
        return False
    clear = _clear_errors()
    if clear is None:
        return False
    return bool(apply([ssl_error_queue(clear)]))


def dask_setup(server: object) -> None:
    """As a Dask preload of the workers and their nannies (gpuportal_session.dask_setup)."""
    install()
