"""The session job's environment is built without a passwd lookup on the hub's loop (issue 56):
batchspawner's `user_env` looked the user up twice there, for USER, HOME and SHELL, which sudo
sets for the job itself."""

from __future__ import annotations

import pwd
from types import SimpleNamespace

import pytest
from traitlets import TraitError

from gpuportal_core.sudo_rules import SET_BY_SUDO
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner


def test_the_job_environment_asks_passwd_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(name: str) -> None:
        raise AssertionError(f"passwd asked for {name} on the hub's loop")

    monkeypatch.setattr(pwd, "getpwnam", refused)
    spawner = SimpleNamespace(user=SimpleNamespace(name="erin"))
    assert GpuSlurmSpawner.user_env(spawner, {"A": "1"}) == {"A": "1"}  # type: ignore[arg-type]
    # What batchspawner would have added is what sudo sets for the job anyway.
    assert {"USER", "HOME", "SHELL"} <= SET_BY_SUDO


def test_the_spawn_request_is_a_typed_trait() -> None:
    """Issue 56, item 5: `spawn_request` was an Any trait, checked with isinstance at each use;
    a value that is not a SpawnRequest is refused where it is set."""
    trait = GpuSlurmSpawner.class_traits()["spawn_request"]
    with pytest.raises(TraitError):
        trait.validate(SimpleNamespace(), {"profile": "gpu-1"})
    assert trait.validate(SimpleNamespace(), None) is None
