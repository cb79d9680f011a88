"""jupyter-resource-usage in a session: the status bar's figures are asked for, not refreshed
every second for nobody (each refresh walks every process of the node)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from jupyter_resource_usage import server_extension
from tornado.ioloop import PeriodicCallback
from traitlets.config import Config, Configurable
from traitlets.config.loader import PyFileConfigLoader

CONFIG = Path(__file__).resolve().parents[3] / "gpuportal_session" / "jupyter_config"


class Server(Configurable):
    """What the extension uses of Jupyter Server's app: its config, web app and sessions."""

    def __init__(self, config: Config) -> None:
        super().__init__(config=config)
        self.routes: list[str] = []
        self.session_manager = None
        self.log = logging.getLogger(__name__)
        self.web_app = type(
            "WebApp",
            (),
            {
                "settings": {"base_url": "/user/alice/"},
                "add_handlers": lambda _, host, routes: self.routes.extend(r[0] for r in routes),
            },
        )()


def loaded(config: Config, monkeypatch: pytest.MonkeyPatch) -> tuple[Server, list[Any]]:
    started: list[Any] = []
    monkeypatch.setattr(PeriodicCallback, "start", lambda self: started.append(self.callback))
    # Its gauges would go into the process's one Prometheus registry, once only.
    monkeypatch.setattr(server_extension, "PrometheusHandler", lambda loader: loader)
    server = Server(config)
    server_extension.load_jupyter_server_extension(server)
    return server, started


def test_the_session_refreshes_no_gauges_for_nobody(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_MEM_PER_NODE", "49152")
    monkeypatch.setenv("SLURM_CPUS_ON_NODE", "8")
    config = PyFileConfigLoader("jupyter_server_config.py", path=str(CONFIG)).load_config()
    server, started = loaded(config, monkeypatch)
    assert started == []
    # The status bar's own request is still served, with the job's limits.
    assert "/user/alice/api/metrics/v1" in server.routes
    shown = server.web_app.settings["jupyter_resource_usage_display_config"]
    assert (shown.track_cpu_percent, shown.cpu_limit) == (True, 800.0)


def test_left_as_it_comes_it_would_refresh_them_every_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, started = loaded(Config(), monkeypatch)
    assert len(started) == 1
