"""gpuportal_spawner.named_sessions: the running limit counts named sessions that run or start,
never the stopped ones, the default one or shared TensorBoards, and says which ones run."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from jupyterhub.spawner import SpawnException

from gpuportal_spawner.named_sessions import KEPT_STOPPED, check_running_limit, kept_limit


def user(**servers: bool) -> SimpleNamespace:
    return SimpleNamespace(
        spawners={name: SimpleNamespace(active=active) for name, active in servers.items()}
    )


def test_stopped_sessions_the_default_one_and_boards_do_not_count() -> None:
    alice = user(**{"": True, "one": True, "two": False, "tb-runs": True})
    check_running_limit(alice, "three", 2)  # one of two runs: allowed


def test_at_the_limit_the_refusal_names_the_sessions_that_run() -> None:
    alice = user(one=True, two=True, three=False)
    with pytest.raises(SpawnException) as refused:
        check_running_limit(alice, "three", 2)
    assert refused.value.status_code == 409
    assert refused.value.jupyterhub_message == (  # type: ignore[attr-defined]
        "You already run 2 named sessions (one, two), the most at a time. "
        "Stop one on your home page, then start 'three'."
    )
    # Starting one that already runs (a re-spawn) is not a new one.
    check_running_limit(alice, "two", 2)


def test_jupyterhub_keeps_the_running_limit_boards_and_some_stopped_ones() -> None:
    orm_spawners = {"one": None, "tb-runs": None, "tb-logs": None}
    handler = SimpleNamespace(
        current_user=SimpleNamespace(orm_user=SimpleNamespace(orm_spawners=orm_spawners))
    )
    assert kept_limit(2)(handler) == 2 + 2 + KEPT_STOPPED
