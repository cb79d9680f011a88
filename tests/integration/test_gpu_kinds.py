"""Sessions of one GPU kind on the real cluster (A100s on gpu01, H100s on gpu02, an A100 cut
into MIG slices on mig01): profiles of a kind made live by an admin; Slurm places a slice
session on the MIG node; the spawn page, its capacity and the session card say the kind."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.hubproc import wait_for
from tests.integration.conftest import Hub, cancel_user_jobs, user_jobs
from tests.integration.page_checks import low_contrast, scrolls_sideways
from tests.integration.test_live_profiles import PORTAL, carol_token, put_back
from tests.integration.test_one_look import open_as

pytestmark = pytest.mark.integration

SLICE = {
    "title": "1 MIG slice",
    "gpus": 1,
    "gpu_type": "1g.10gb",
    "cores_per_gpu": 2,
    "mem_per_gpu_gb": 12,
    "partition": "mig",
}


H100 = {"title": "1 H100", "gpus": 1, "gpu_type": "h100", "cores_per_gpu": 16}


def offered(hub: Hub, token: str, slug: str, values: dict[str, Any]) -> None:
    made = requests.post(
        f"{hub.url}{PORTAL}/api/profiles",
        headers={"Authorization": f"token {token}"},
        json={"slug": slug, **values},
        timeout=30,
    )
    if made.status_code != 201:  # a rerun on the same hub: it exists, disabled
        put_back(hub, token, slug, {**values, "enabled": True})


@pytest.fixture
def slice_profile(hub: Hub) -> Iterator[str]:
    """A slice profile and an H100 one, offered for this test only (the portal keeps its store
    across tests: they are disabled afterwards, as no profile can be removed)."""
    token = carol_token(hub)
    offered(hub, token, "slice-test", SLICE)
    offered(hub, token, "h100-test", H100)
    cancel_user_jobs("alice")
    yield "slice-test"
    cancel_user_jobs("alice")
    for slug in ("slice-test", "h100-test"):
        put_back(hub, token, slug, {"enabled": False})


def test_a_slice_profile_runs_on_the_mig_node_and_says_its_kind(
    hub: Hub, clean: None, slice_profile: str
) -> None:
    alice = hub.login("alice")

    def capacity() -> dict[str, Any]:
        answer: dict[str, Any] = alice.get(f"{hub.url}/hub/gpuportal/capacity", timeout=30).json()
        return answer

    # The spawn page's capacity (once the hub has the new profile): each kind of the MIG node
    # counted apart, and the slice free.
    shown = wait_for(
        lambda: capacity() if slice_profile in capacity()["profiles"] else None, 30, "the profile"
    )
    assert shown["partitions"]["mig"] == [
        {"type": "1g.10gb", "free": 4, "total": 4},
        {"type": "3g.40gb", "free": 2, "total": 2},
    ]
    assert shown["profiles"][slice_profile]["text"] == "Starts now"

    options = {"profile": slice_profile, "runtime": "00:30:00"}
    started = hub.api(alice, "POST", "/users/alice/server", json=options)
    assert started.status_code in (201, 202), started.text
    hub.wait_ready(alice, "alice")
    placed = user_jobs("alice", "%N|%b")
    assert len(placed) == 1 and placed[0].startswith("mig01|") and "1g.10gb:1" in placed[0]

    cards = alice.get(f"{hub.url}/hub/gpuportal/sessions", timeout=30).json()["sessions"]
    card = next(c for c in cards if c["name"] == "")
    assert (card["gpus"], card["gpu_type"], card["node"]) == (1, "1g.10gb", "mig01")
    # One slice taken: three of its kind left, the other kind untouched.
    wait_for(
        lambda: capacity()["partitions"]["mig"][0]["free"] == 3,
        30,
        "the capacity to count the slice in use",
    )
    hub.stop_server(alice, "alice")


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_spawn_page_with_three_kinds(
    hub: Hub,
    clean: None,
    slice_profile: str,
    browser: Any,
    tmp_path: Path,
    width: int,
    dark: bool,
) -> None:
    """Any kind (gpu-1), an H100 and a MIG slice side by side: each card says its kind and when
    it starts; the free GPUs are counted per kind; it reads at phone width, in both modes."""
    context, page = open_as(browser, hub, "alice", dark=dark, width=width)
    page.goto(f"{hub.url}/hub/spawn")
    page.wait_for_selector(f"[data-profile={slice_profile}]")
    page.wait_for_selector("[data-capacity-for=h100-test]")
    every_kind = (
        "Free GPUs in gpu: 4 of 4 a100, 4 of 4 h100. "
        "Free GPUs in mig: 4 of 4 1g.10gb, 2 of 2 3g.40gb."
    )
    # The look at the cluster is shared for 10 s (an earlier test's session may still be in
    # it); the page asks again by itself.
    wait_for(lambda: every_kind in page.inner_text("#gp-free"), 40, "every GPU free")
    card = page.inner_text(f"[data-profile={slice_profile}]")
    assert "1 GPU (1g.10gb) · 2 CPU cores · 12 GB memory" in card, card
    assert "1 GPU (h100) · 16 CPU cores · 48 GB memory" in page.inner_text(
        "[data-profile=h100-test]"
    )
    for slug in ("gpu-1", "h100-test", slice_profile):
        assert page.inner_text(f"[data-capacity-for={slug}]") == "Starts now"
    out = Path(os.environ.get("GPUPORTAL_KIND_SHOTS", str(tmp_path)))
    out.mkdir(parents=True, exist_ok=True)
    mode = "dark" if dark else "light"
    page.screenshot(path=str(out / f"spawn-kinds-{width}-{mode}.png"), full_page=True)
    assert not scrolls_sideways(page), f"the spawn page scrolls sideways at {width} px"
    assert not low_contrast(page, ["#gp-free", ".gp-profile", "label"])
    context.close()
