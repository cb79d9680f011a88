"""The hub routes the port callback and the server stop to the portal's handlers."""

from __future__ import annotations

import re

import batchspawner  # noqa: F401  registers its own port callback, as in the hub
import pytest
from jupyterhub.app import JupyterHub
from jupyterhub.auth import Authenticator

from gpuportal_spawner.hub_app import GpuPortalHub, plain_jupyterhub
from gpuportal_spawner.port_handler import PortCallbackHandler
from gpuportal_spawner.stop_handler import StopAfterSpawnHandler


def first_route(hub: JupyterHub, path: str) -> type:
    """The handler tornado would pick for a path: the first route whose pattern matches."""
    for pattern, handler, *_ in hub.handlers:
        if re.fullmatch(pattern, path):
            return handler  # type: ignore[no-any-return]
    raise AssertionError(f"no route for {path}")


def routed(app: JupyterHub) -> JupyterHub:
    """The hub's routes, composed as at its start (init_handlers), without the rest of it."""
    app.authenticator = Authenticator()
    app.init_handlers()
    return app


@pytest.fixture
def hub() -> JupyterHub:
    return routed(GpuPortalHub(base_url="/"))


@pytest.mark.parametrize(
    ("path", "handler"),
    [
        ("/hub/api/batchspawner", PortCallbackHandler),
        ("/hub/api/users/alice/server", StopAfterSpawnHandler),
        ("/hub/api/users/alice/servers/train", StopAfterSpawnHandler),
    ],
)
def test_the_portals_handlers_answer_at_those_paths(hub: JupyterHub, path: str, handler: type):
    assert first_route(hub, path) is handler


def test_a_plain_jupyterhub_would_route_them_to_batchspawner_and_itself() -> None:
    app = routed(JupyterHub(base_url="/"))
    assert first_route(app, "/hub/api/batchspawner").__module__ == "batchspawner.api"
    assert first_route(app, "/hub/api/users/alice/server").__name__ == "UserServerAPIHandler"


def test_the_rest_is_jupyterhubs(hub: JupyterHub) -> None:
    plain = routed(JupyterHub(base_url="/"))
    assert hub.handlers[3:] == plain.handlers


def test_only_a_running_plain_jupyterhub_counts_as_one() -> None:
    assert not plain_jupyterhub()  # no hub in this process
