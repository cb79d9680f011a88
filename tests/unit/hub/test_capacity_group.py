"""The spawn page's capacity view with a group GPU limit: free GPUs do not mean "starts now"
for a profile that would take the group over its limit."""

from __future__ import annotations

from datetime import datetime

from gpuportal_adapters.cluster_snapshot import Snapshot
from gpuportal_core.accounting import GroupUse
from gpuportal_core.capacity import NodeGpus
from gpuportal_core.profiles import ResourceProfile
from gpuportal_spawner.capacity import capacity_view

PROFILES = [
    ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1),
    ResourceProfile(slug="gpu-2", title="2 GPUs", gpus=2),
]
# gpu02 is empty: without a group limit both profiles would start now.
SNAPSHOT = Snapshot(
    nodes=[NodeGpus("gpu01", ("gpu",), 4, 4),
           NodeGpus("gpu02", ("gpu",), 4, 0)],
    jobs=[],
    as_of=datetime.now().replace(microsecond=0),  # as ClusterSnapshot takes it
)  # fmt: skip


def test_a_profile_over_the_group_limit_waits_and_says_why():
    view = capacity_view(PROFILES, SNAPSHOT, GroupUse("ds", used=5, limit=6, mine=4))
    assert view["profiles"]["gpu-1"]["now"] is True
    assert view["profiles"]["gpu-2"]["now"] is False
    assert view["profiles"]["gpu-2"]["text"].startswith("Waits for your group's GPU limit")
    assert view["group"].startswith("Your group ds uses 5 of its 6 GPUs (you: 4)")


def test_no_limit_no_line():
    view = capacity_view(PROFILES, SNAPSHOT)
    assert view["group"] == ""
    assert view["profiles"]["gpu-2"]["now"] is True


def test_a_profile_held_by_the_group_is_offered_no_shorter_limit():
    from datetime import timedelta

    from gpuportal_core.reservations import Reservation

    now = datetime.now().replace(microsecond=0)
    window = Reservation(
        "maint", now + timedelta(hours=2), now + timedelta(hours=3), ("gpu01", "gpu02"), ("MAINT",)
    )
    snapshot = Snapshot(SNAPSHOT.nodes, [], now, [window])
    view = capacity_view(PROFILES, snapshot, GroupUse("ds", used=5, limit=6, mine=4))
    assert view["profiles"]["gpu-1"]["fits_now"] is not None  # within the group: offered
    gpu2 = view["profiles"]["gpu-2"]
    assert gpu2["fits_now"] is None and gpu2["text"].startswith("Waits for your group's GPU")
