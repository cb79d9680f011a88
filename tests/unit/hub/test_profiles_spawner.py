"""The wrapper spawner's spawn checks, with the portal (the offer) replaced: one validation and
one fetch of the offer per spawn, whether the options come from the form or the REST API."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any

import pytest
from jupyterhub.app import JupyterHub
from jupyterhub.spawner import SpawnException
from traitlets import TraitError
from traitlets.config import Config

from gpuportal_core.profiles import ResourceProfile
from gpuportal_spawner.capacity import capacity_view
from gpuportal_spawner.profile_source import Offer
from gpuportal_spawner.profiles_spawner import GpuProfilesSpawner
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner
from gpuportal_spawner.spawn_form import render_form

PROFILES = [ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1, queue_limit=600)]


def make_spawner(
    monkeypatch: pytest.MonkeyPatch, user: SimpleNamespace | None = None
) -> tuple[GpuProfilesSpawner, list[int]]:
    """A spawner of alice's (of `user`, for another server of hers): the first one made for a
    user is her default server's."""
    if user is None:
        user = SimpleNamespace(name="alice", groups=[], spawners={}, url="/user/alice/")
    spawner = GpuProfilesSpawner(user=user, orm_spawner=None, config=Config())
    if not hasattr(user, "spawner"):
        user.spawner = spawner
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
        await spawner._run_apply_user_options(options)  # as User.spawn calls the hook
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
        await spawner._run_apply_user_options(spawner.user_options)

    asyncio.run(spawn())
    assert len(fetched) == 2
    assert spawner.user_options == {"profile": "gpu-1", "runtime": "03:00:00"}


def test_a_refused_form_comes_back_to_its_own_request_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 37: alice posts the forms of two named sessions at once, both refused; each page
    shows its own values and message. JupyterHub draws both with her default server's spawner,
    and a refused form kept in one slot per user went to whichever page was drawn next."""
    default, _ = make_spawner(monkeypatch)
    named = {name: make_spawner(monkeypatch, default.user)[0] for name in ("train", "tune")}

    async def capacity(profiles: Any = None) -> dict[str, Any]:
        return capacity_view(profiles, None, None)  # Slurm not asked: "not known now"

    monkeypatch.setattr(default, "capacity", capacity)
    default.hub = SimpleNamespace(base_url="/hub/")

    async def refuse(name: str, runtime: str) -> None:
        # The named server's spawner reads the form (JupyterHub's SpawnHandler.post).
        with pytest.raises(SpawnException):
            await named[name].options_from_form({"profile": ["gpu-1"], "runtime": [runtime]})

    async def both() -> list[str]:
        # Both refused before either page is drawn (two requests on the hub's one event loop);
        # the pages are then drawn by the default server's spawner, in the same order.
        await refuse("train", "99:00:00")
        await refuse("tune", "soon")
        return [await render_form(default), await render_form(default)]

    train, tune = asyncio.run(both())
    assert 'value="99:00:00"' in train and "soon" not in train
    assert 'value="soon"' in tune and "99:00:00" not in tune


def test_bad_options_from_the_api_are_a_400_and_the_last_good_ones_stay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check is JupyterHub's apply_user_options hook (issue 37): what the REST API sends is
    refused there, before the admin's pre_spawn_hook and start(), and the record keeps the last
    good options for the hub to commit (the spawner commits nothing itself)."""
    spawner, _ = make_spawner(monkeypatch)
    good = {"profile": "gpu-1", "runtime": "02:00:00"}
    spawner.orm_spawner = SimpleNamespace(
        name="", server=None, user_options={"profile": ["not", "a", "slug"]}
    )
    spawner._good_options = dict(good)
    with pytest.raises(SpawnException) as refused:
        asyncio.run(spawner._run_apply_user_options({"profile": ["not", "a", "slug"]}))
    assert refused.value.status_code == 400
    assert spawner.orm_spawner.user_options == good and spawner.user_options == good


def test_the_check_cannot_be_configured_away() -> None:
    config = Config()
    config.GpuProfilesSpawner.apply_user_options = lambda spawner, options: None
    user = SimpleNamespace(name="alice", groups=[], spawners={}, url="/user/alice/")
    with pytest.raises(TraitError, match="pre_spawn_hook"):
        GpuProfilesSpawner(user=user, orm_spawner=None, config=config)


def test_a_child_rebuilt_at_the_hubs_start_gets_the_next_spawns_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hub rebuilds each server's child from its stored state when it starts (wrapspawner's
    load_state); the next spawn's checked request reaches that child at start(), with internal
    TLS off too (then nothing else builds the child before its start)."""
    spawner, _ = make_spawner(monkeypatch)
    spawner.load_state({})
    child = spawner.child_spawner
    assert child is not None and child.spawn_request is None
    seen: list[Any] = []

    async def start() -> tuple[str, int]:  # the Slurm boundary: what the job would be made of
        seen.append(child.spawn_request)
        return "gpu01", 8888

    monkeypatch.setattr(child, "start", start)

    async def spawn() -> tuple[str, int]:
        spawner.user_options = {"profile": "gpu-1", "runtime": "02:00:00"}
        await spawner._run_apply_user_options(spawner.user_options)
        return await spawner.start()

    assert asyncio.run(spawn()) == ("gpu01", 8888)
    assert [request.runtime for request in seen] == [2 * 3600]


def test_a_hub_started_as_plain_jupyterhub_starts_no_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its port callback is batchspawner's, which sets whatever a job posts on the spawner."""
    spawner, _ = make_spawner(monkeypatch)
    JupyterHub.instance()
    try:
        with pytest.raises(SpawnException, match="gpuportal-hub"):
            asyncio.run(spawner.start())
    finally:
        JupyterHub.clear_instance()
    assert spawner.child_spawner is None  # nothing was built, nothing submitted


def test_a_board_servers_child_is_its_board_and_no_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = SimpleNamespace(name="alice", groups=[], spawners={}, url="/user/alice/")
    make_spawner(monkeypatch, user)  # her default server first
    record = SimpleNamespace(name="tb-runs", user_options={}, server=None, state={})
    board = GpuProfilesSpawner(user=user, orm_spawner=record, config=Config())

    async def spawn() -> Any:
        board.user_options = {"tensorboard": "/home/alice/./runs/", "groups": ["ds"]}
        await board._run_apply_user_options(board.user_options)
        return board.construct_child()

    child = asyncio.run(spawn())
    assert (child.logdir, child.groups, child.board_name) == ("/home/alice/runs", ["ds"], "tb-runs")
    assert board.session is None


def test_a_child_is_built_without_the_deprecated_shared_database(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 54, item 17: the hub's log had JupyterHub's `Spawner.db` deprecation warning at
    every spawn (wrapspawner hands the shared session to the child)."""
    spawner, _ = make_spawner(monkeypatch)
    with caplog.at_level(logging.WARNING):
        child = spawner.construct_child()
    assert child.db is None
    assert not [r for r in caplog.records if "Spawner.db is deprecated" in r.getMessage()]


def test_the_slurm_settings_are_the_session_spawners_as_it_gets_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 56, item 5: the wrapper read the child's config section as raw values, with the
    child's defaults copied by hand (and missed a value set on a base class's section)."""
    spawner, _ = make_spawner(monkeypatch)
    assert (
        spawner.session_setting("slurm_timeout")
        == GpuSlurmSpawner.class_traits()["slurm_timeout"].default()
    )
    spawner.config = Config(
        {"SlurmSpawner": {"slurm_timeout": 5}, "GpuSlurmSpawner": {"capacity_ttl": "3"}}
    )
    assert spawner.session_setting("slurm_timeout") == 5.0  # a base class's section applies
    with pytest.raises(TraitError):
        spawner.session_setting("capacity_ttl")  # a string where seconds belong: refused
