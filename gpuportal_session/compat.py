"""What the session changes of its libraries' own code (JupyterHub's single-user server,
JupyterLab, jupyter-server-proxy's process supervisor, tornado's routes), each change behind its
guards (gpuportal_adapters.compat says how; docs/explanation/upstream.md has each one and what
was asked of its library).

Before jupyterhub-singleuser is imported (gpuportal_session.singleuser), each only for a faster
start, left out on an unknown upstream with an ERROR line in the session's log:
- rfc3987_syntax and httpx's command-line client not imported (`skip_slow_imports`);
- the hub's handlers and database layer not imported (`skip_hub_database`);
- JupyterLab not asking yarn for its registry (`skip_yarn_config`).

When the server loads gpuportal_session.server_guard (`guard_server`):
- simpervisor's signal handler stops the server after the tools (`TOOLS_THEN_SERVER`);
- a 404 for /proxy/<port>/ ahead of every route (`proxy_closed`): required, since without it
  any port of the node is reachable through the session; an unknown tornado stops the start.

In each kernel (gpuportal_session.notebook_tensorboard): `%tensorboard` in the portal's words
(`tensorboard_magic`).
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import types
from typing import Any

from gpuportal_adapters.compat import (
    IRI_PARSERS,
    Guard,
    Patch,
    apply,
    same_function,
    same_source,
    skipped_import,
    version_in,
)

log = logging.getLogger(__name__)

# httpx (JupyterLab's extension manager imports it) imports its command-line client when it can:
# rich, pygments and click, 0.1 s, for a `httpx` command nobody runs inside a Jupyter server;
# without the module httpx itself goes on as when its CLI extras are not installed.
SLOW_IMPORTS = (
    IRI_PARSERS,
    skipped_import("httpx._main", importer="httpx", why="httpx's command-line client"),
)


def skip_slow_imports() -> list[str]:
    """Make `import` of each module of SLOW_IMPORTS fail fast, as if it were not installed."""
    return apply(SLOW_IMPORTS, log)


# jupyterhub.log and jupyterhub.metrics, which the single-user server imports for its request log,
# import the hub's request handlers and the hub's database layer (SQLAlchemy, Alembic, the ORM):
# 0.5 s of a 2-core node's start, for one isinstance() against the hub's health-check handler (a
# handler a single-user server never has) and a metrics collector only the hub runs.
HUB_HANDLERS = "jupyterhub.handlers"
HUB_ORM = "jupyterhub.orm"


def _stand_in_hub_handlers() -> None:
    spec = importlib.util.find_spec(HUB_HANDLERS)
    orm = importlib.util.find_spec(HUB_ORM)
    if spec is None or spec.submodule_search_locations is None or orm is None or not orm.loader:
        return
    orm.loader = importlib.util.LazyLoader(orm.loader)
    lazy_orm = importlib.util.module_from_spec(orm)
    sys.modules[HUB_ORM] = lazy_orm
    orm.loader.exec_module(lazy_orm)
    # Also the package's attribute: `from . import orm` then takes it as it is (an import of a
    # module already in sys.modules reads its __spec__, which would load it).
    sys.modules["jupyterhub"].orm = lazy_orm  # type: ignore[attr-defined]
    package = types.ModuleType(HUB_HANDLERS)
    package.__path__ = list(spec.submodule_search_locations)
    pages = types.ModuleType(f"{HUB_HANDLERS}.pages")

    class HealthCheckHandler:
        """The hub's health check, which no single-user server has."""

    pages.HealthCheckHandler = HealthCheckHandler  # type: ignore[attr-defined]
    package.pages = pages  # type: ignore[attr-defined]
    sys.modules[HUB_HANDLERS] = package
    sys.modules[pages.__name__] = pages


HUB_DATABASE = Patch(
    "the hub's handlers and database not imported by the single-user server",
    # What the single-user server imports of jupyterhub, and what jupyterhub.log takes from the
    # handlers (one class), are 6.1's: a later one may need more of the real package.
    guards=(version_in("jupyterhub", "6.1", "6.2"),),
    change=_stand_in_hub_handlers,
    done=lambda: HUB_HANDLERS in sys.modules or HUB_ORM in sys.modules,
)


def skip_hub_database() -> list[str]:
    """Give jupyterhub.log the hub's HealthCheckHandler without importing the hub's handlers,
    and jupyterhub.metrics an ORM module that loads when first used (importlib's LazyLoader).

    `jupyterhub.handlers` becomes a package whose `pages` module holds only a stand-in class
    (nothing in this process is ever one, as nothing was ever the hub's own); its path stays the
    real one, so an import of another of its modules still loads it as usual.
    """
    return apply([HUB_DATABASE], log)


def _no_yarn_config(logger: object) -> dict[str, dict[str, str]]:
    return {"yarn config": {}, "npm config": {}}


def _jupyterlab_commands() -> Any:
    from jupyterlab import commands

    return commands


def _no_yarn() -> None:
    _jupyterlab_commands()._yarn_config = _no_yarn_config


NO_YARN_CONFIG = Patch(
    "JupyterLab's yarn registry not asked at import",
    guards=(
        same_source(
            "jupyterlab.commands._yarn_config",
            lambda: _jupyterlab_commands()._yarn_config,
            "747943d759e726871cd1d8f8b8cddc83aa95a147e85417c72bbced3250e01cd3",
            "jupyterlab 4.6.6",
        ),
    ),
    change=_no_yarn,
    done=lambda: _jupyterlab_commands()._yarn_config is _no_yarn_config,
)


def skip_yarn_config() -> list[str]:
    """Keep JupyterLab from asking yarn for its npm registry while it is imported.

    jupyterlab.labapp calls get_app_version() at import; its options default their registry from
    `node yarn.js config`: a node process, 0.45 s of a 2-core node's JupyterLab start. In the
    session nothing is ever installed from a registry (the extension manager is read-only), so
    the answer is never used: JupyterLab itself skips the question when node is not on PATH,
    and this gives the same empty answer.
    """
    if importlib.util.find_spec("jupyterlab") is None:
        return []
    return apply([NO_YARN_CONFIG], log)


# -- the server's guard (gpuportal_session.server_guard) ------------------------------------------

SIMPERVISOR_SIGNAL = "fe33f81611cff10a6b97788bfdc47cb1a01b4e099cc173b7f6f1ad08241043f7"


def tools_then_server(serverapp: Any) -> Patch:
    """simpervisor's handler of SIGTERM and SIGINT, replaced by server_guard's: the tools told,
    then the server stopped its own way."""
    from gpuportal_session.server_guard import tools_then_server_handler

    def atexitasync() -> Any:
        from simpervisor import atexitasync

        return atexitasync

    def change() -> None:
        atexitasync()._handle_signal = tools_then_server_handler(atexitasync(), serverapp)

    return Patch(
        "the session's server stopped after jupyter-server-proxy's tools",
        guards=(
            same_source(
                "simpervisor.atexitasync._handle_signal",
                lambda: atexitasync()._handle_signal,
                SIMPERVISOR_SIGNAL,
                "simpervisor 1.0.0",
            ),
        ),
        change=change,
        done=lambda: getattr(atexitasync()._handle_signal, "gpuportal", False),
    )


def _rules_are_a_list(web_app: Any) -> Guard:
    def problem() -> str | None:
        rules = getattr(web_app.default_router, "rules", None)
        return None if isinstance(rules, list) else "tornado's router keeps no list of rules"

    return Guard("tornado's RuleRouter.rules", problem)


def proxy_closed(web_app: Any, rule: Any) -> Patch:
    """`rule` (server_guard's 404 for /proxy/...) first among the server's routes: tornado takes
    the first that matches, and jupyter-server-proxy has no setting to close its generic routes."""
    return Patch(
        "/proxy/<port>/ closed ahead of jupyter-server-proxy's routes",
        guards=(version_in("tornado", "6.0", "7"), _rules_are_a_list(web_app)),
        change=lambda: web_app.default_router.rules.insert(0, rule),
        done=lambda: rule in web_app.default_router.rules,
        required=True,
    )


def guard_server(serverapp: Any, rule: Any) -> list[str]:
    return apply(
        [tools_then_server(serverapp), proxy_closed(serverapp.web_app, rule)], serverapp.log
    )


# -- `%tensorboard` in a kernel (gpuportal_session.notebook_tensorboard) ---------------------------


def tensorboard_magic(shell: Any, start: Any) -> Patch:
    """Once `%load_ext tensorboard` has loaded it, tensorboard.notebook.start is the portal's:
    TensorBoard's `%tensorboard` magic (`_start_magic`) calls `start` by name. IPython's
    extension manager of this kernel is wrapped to do it right after the load; nothing of
    TensorBoard is imported before (the guard reads its file)."""
    extensions = shell.extension_manager
    original = extensions.load_extension

    def load_extension(module_str: str) -> Any:
        outcome = original(module_str)
        if module_str == "tensorboard":
            import tensorboard.notebook

            tensorboard.notebook.start = start
        return outcome

    load_extension.gpuportal = True  # type: ignore[attr-defined]
    return Patch(
        "%tensorboard in the portal's words",
        guards=(
            version_in("ipython", "8.0", "10"),
            same_function(
                "tensorboard.notebook._start_magic",
                "tensorboard.notebook",
                "_start_magic",
                "e831fbe4b36e6bd783211dbe3bc531acbbc558dc7194dbefa18278ddb405983d",
                "tensorboard 2.21.0",
            ),
        ),
        change=lambda: setattr(extensions, "load_extension", load_extension),
        done=lambda: getattr(extensions.load_extension, "gpuportal", False),
    )
