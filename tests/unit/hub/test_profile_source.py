"""ProfileSource against a real local HTTP server standing in for the portal, then without it."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import pytest

from gpuportal_core.profiles import ResourceProfile
from gpuportal_spawner.profile_source import ProfileSource

RECORD = {
    "slug": "gpu-2",
    "title": "2 GPUs",
    "description": "",
    "gpus": 2,
    "cores_per_gpu": 8,
    "mem_per_gpu_gb": 48,
    "default_runtime": "08:00:00",
    "max_runtime": "12:00:00",
    "partition": "gpu",
    "sbatch_options": {"qos": "short"},
    "groups": ["ds"],
}
ENVIRONMENT = {
    "slug": "tools",
    "title": "Tools",
    "kind": "modules",
    "prefix": "",
    "modules": ["demo-tools/1.0"],
    "image": "",
    "profiles": ["gpu-2"],
    "description": "",
}
CONFIGURED = [ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1)]


class _Portal(BaseHTTPRequestHandler):
    answers: ClassVar[dict[str, bytes]] = {}
    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.answers[self.path.rsplit("/", 1)[-1]])

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def portal() -> Iterator[HTTPServer]:
    _Portal.answers = {
        "profiles": json.dumps([RECORD]).encode(),
        "environments": json.dumps([ENVIRONMENT]).encode(),
    }
    _Portal.seen = []
    server = HTTPServer(("127.0.0.1", 0), _Portal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def source_for(server: HTTPServer) -> ProfileSource:
    return ProfileSource(
        url=f"http://127.0.0.1:{server.server_port}/services/portal/",
        token="hub-secret",
        fallback=lambda: CONFIGURED,
        timeout=1.0,
    )


async def test_profiles_come_from_the_portal_with_the_hub_token(portal: HTTPServer) -> None:
    offer = await source_for(portal).offer()
    [profile] = offer.profiles
    assert (profile.slug, profile.max_runtime, profile.groups) == ("gpu-2", 12 * 3600, ("ds",))
    assert profile.sbatch_options == {"qos": "short"}
    [environment] = offer.environments
    assert (environment.kind, environment.modules) == ("modules", ("demo-tools/1.0",))
    assert environment.offered_with("gpu-2") and not environment.offered_with("gpu-1")
    assert sorted(_Portal.seen) == [
        ("/services/portal/api/environments", "token hub-secret"),
        ("/services/portal/api/profiles", "token hub-secret"),
    ]


async def test_when_the_portal_goes_away_the_last_answer_is_used_and_logged(
    portal: HTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    source = source_for(portal)
    first = await source.offer()
    portal.shutdown()
    portal.server_close()
    with caplog.at_level(logging.WARNING):
        again = await source.offer()
    assert again == first
    assert "Portal not answering" in caplog.text
    assert "using the profiles it gave at" in caplog.text


async def test_without_any_answer_the_configured_profiles_are_used(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = ProfileSource(
        url="http://127.0.0.1:9/services/portal", token="t", fallback=lambda: CONFIGURED
    )
    with caplog.at_level(logging.WARNING):
        offer = await source.offer()
    assert (offer.profiles, offer.environments) == (CONFIGURED, [])
    assert "using the configured profiles" in caplog.text


async def test_a_profile_the_spawner_would_refuse_is_not_taken(portal: HTTPServer) -> None:
    _Portal.answers["profiles"] = json.dumps(
        [{**RECORD, "sbatch_options": {"wrap": "id"}}]
    ).encode()
    assert (await source_for(portal).offer()).profiles == CONFIGURED


async def test_an_environment_that_would_reach_bash_unchecked_is_not_taken(
    portal: HTTPServer,
) -> None:
    bad = {**ENVIRONMENT, "modules": ["tools; rm -rf ~"]}
    _Portal.answers["environments"] = json.dumps([bad]).encode()
    assert (await source_for(portal).offer()).environments == []


async def test_the_kept_answer_is_written_when_it_changes_and_read_after_a_restart(
    portal: HTTPServer, tmp_path
) -> None:
    kept = tmp_path / "profiles.json"
    source = ProfileSource(
        url=f"http://127.0.0.1:{portal.server_port}/services/portal/",
        token="hub-secret",
        fallback=lambda: CONFIGURED,
        cache_file=str(kept),
    )
    await source.offer()
    written = kept.stat().st_ino
    # The same answer at every page of a burst: the file is not written again (a new file
    # renamed over it would have another inode).
    for _ in range(3):
        await source.offer()
    assert kept.stat().st_ino == written
    _Portal.answers["profiles"] = json.dumps([{**RECORD, "title": "Two GPUs"}]).encode()
    await source.offer()
    assert kept.stat().st_ino != written
    assert json.loads(kept.read_text())["profiles"][0]["title"] == "Two GPUs"
    # A hub started while the portal is down offers what the last one kept.
    portal.shutdown()
    portal.server_close()
    restarted = ProfileSource(
        url=f"http://127.0.0.1:{portal.server_port}/services/portal/",
        token="hub-secret",
        fallback=lambda: CONFIGURED,
        cache_file=str(kept),
        timeout=1.0,
    )
    assert [p.title for p in (await restarted.offer()).profiles] == ["Two GPUs"]
