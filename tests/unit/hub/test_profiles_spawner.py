"""The wrapper spawner's spawn checks, with the portal (the offer) replaced: one validation and
one fetch of the offer per spawn, whether the options come from the form or the REST API."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from traitlets.config import Config

from gpuportal_core.profiles import ResourceProfile
from gpuportal_spawner.profile_source import Offer
from gpuportal_spawner.profiles_spawner import GpuProfilesSpawner

PROFILES = [ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1, queue_limit=600)]


def make_spawner(monkeypatch: pytest.MonkeyPatch) -> tuple[GpuProfilesSpawner, list[int]]:
    user = SimpleNamespace(name="alice", groups=[], spawners={}, url="/user/alice/")
    spawner = GpuProfilesSpawner(user=user, orm_spawner=None, config=Config())
    fetched: list[int] = []

    async def offer() -> Offer:
        fetched.append(1)
        return Offer(PROFILES, [])

    monkeypatch.setattr(spawner, "offer", offer)
    return spawner, fetched


def test_a_form_spawn_is_checked_once_with_one_look_at_the_offer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spawner, fetched = make_spawner(monkeypatch)

    async def spawn() -> Any:
        options = await spawner.options_from_form(
            {"profile": ["gpu-1"], "runtime": ["02:00:00"], "_xsrf": ["x"]}
        )
        spawner.user_options = options  # as the hub does between the two
        await spawner.run_pre_spawn_hook()
        return spawner.construct_child()

    child = asyncio.run(spawn())
    assert len(fetched) == 1
    assert child.spawn_request.runtime == 2 * 3600
    assert child.cull_limits.queued == 600  # the limits worked out once, handed to the job
    assert spawner.user_options == {"profile": "gpu-1", "runtime": "02:00:00"}


def test_an_api_spawn_or_changed_options_are_checked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spawner, fetched = make_spawner(monkeypatch)

    async def spawn() -> None:
        await spawner.options_from_form({"profile": ["gpu-1"], "runtime": ["02:00:00"]})
        spawner.user_options = {"profile": "gpu-1", "runtime": "03:00:00"}  # not the form's
        await spawner.run_pre_spawn_hook()

    asyncio.run(spawn())
    assert len(fetched) == 2
    assert spawner.user_options == {"profile": "gpu-1", "runtime": "03:00:00"}
