"""Named servers whose spawn page was opened but never started (issue 54, item 14): the sweep
the spawn-resumer runs removes them through the hub's REST API, only once two looks in a row
found one, and never one that started meanwhile."""

from __future__ import annotations

from typing import Any

from gpuportal_adapters.token_calls import CallFailed
from gpuportal_spawner.never_started import never_started, sweep

# The state a record gets from GpuProfilesSpawner before any start.
FRESH_STATE = {"child_conf": {}, "options": {}, "runtime_chosen": True}
OPENED = {
    "ready": False,
    "pending": None,
    "started": None,
    "user_options": {},
    "state": FRESH_STATE,
}
RAN = {**OPENED, "user_options": {"profile": "gpu-1"}}


def test_what_counts_as_never_started() -> None:
    assert never_started("train", OPENED)
    assert not never_started("", OPENED)  # the default server is always there
    assert not never_started("tb-runs", OPENED)  # a shared board's record
    assert not never_started("train", RAN)  # stopped after a run: the home page's card
    assert not never_started("train", {**OPENED, "pending": "spawn"})
    assert not never_started("train", {**OPENED, "ready": True})
    refused = {**OPENED, "state": {**FRESH_STATE, "last_note": "memory: no node has 130 GB"}}
    assert not never_started("train", refused)  # a refused start keeps its reason
    waiting = {**OPENED, "state": {**FRESH_STATE, "resume_job_id": "42"}}
    assert not never_started("train", waiting)  # the resumer's own to bring back


class FakeHub:
    """The hub's REST API as the sweep calls it: users' servers, and DELETE with remove."""

    def __init__(self, servers: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.servers = servers
        self.calls: list[tuple[str, str]] = []
        self.refuse: set[str] = set()

    async def call(self, method: str, path: str, body: Any) -> Any:
        self.calls.append((method, path))
        if method == "GET" and path.startswith("/users?"):
            items = [{"name": u, "servers": s} for u, s in self.servers.items()]
            return {"items": items, "_pagination": {"next": None}}
        if method == "GET":
            user = path.split("/")[2].split("?")[0]
            return {"name": user, "servers": self.servers[user]}
        assert (method, body) == ("DELETE", {"remove": True})
        _, _, user, _, name = path.split("/")
        if name in self.refuse:
            raise CallFailed(path, "is pending spawn", 400)
        del self.servers[user][name]
        return None


async def test_a_form_left_open_is_removed_at_the_second_look() -> None:
    hub = FakeHub({"alice": {"": RAN, "train": dict(OPENED), "old": RAN}, "bob": {}})
    seen: set[tuple[str, str]] = set()
    assert await sweep(hub.call, seen) == []  # the first look: perhaps a form open right now
    assert "train" in hub.servers["alice"]
    assert await sweep(hub.call, seen) == ["alice/train"]
    assert set(hub.servers["alice"]) == {"", "old"}
    assert await sweep(hub.call, seen) == [] and not seen


async def test_one_started_between_two_looks_is_kept() -> None:
    hub = FakeHub({"alice": {"train": dict(OPENED)}})
    seen: set[tuple[str, str]] = set()
    await sweep(hub.call, seen)
    hub.servers["alice"]["train"] = {**OPENED, "pending": "spawn"}
    assert await sweep(hub.call, seen) == []
    assert not any(method == "DELETE" for method, _ in hub.calls)


async def test_a_refused_delete_waits_for_the_next_look() -> None:
    hub = FakeHub({"alice": {"train": dict(OPENED)}})
    hub.refuse.add("train")
    seen: set[tuple[str, str]] = set()
    await sweep(hub.call, seen)
    assert await sweep(hub.call, seen) == []
    hub.refuse.clear()
    assert await sweep(hub.call, seen) == ["alice/train"]
