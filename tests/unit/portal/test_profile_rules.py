from typing import Any

from gpuportal_core.partitions import NodeShape, Partition
from gpuportal_portal.profile_rules import Problem, check_profile

PARTITIONS = {
    "gpu": Partition("gpu", 24 * 3600, (NodeShape(4, 32, 200000),)),
    "big": Partition("big", None, (NodeShape(8, 64, 1000000),)),
}


def values(**changes: Any) -> dict[str, Any]:
    base = {
        "gpus": 4,
        "cores_per_gpu": 8,
        "mem_per_gpu_gb": 48,
        "default_runtime": "08:00:00",
        "max_runtime": "24:00:00",
        "partition": "gpu",
    }
    return {**base, **changes}


def test_a_whole_node_profile_fits() -> None:
    assert check_profile(values(), PARTITIONS) == []


def test_an_unlimited_partition_takes_any_runtime() -> None:
    assert check_profile(values(partition="big", gpus=8, max_runtime="500:00:00"), PARTITIONS) == []


def test_each_broken_rule_is_named_by_its_field() -> None:
    problems = check_profile(
        values(gpus=5, max_runtime="25:00:00", default_runtime="30:00:00"), PARTITIONS
    )
    assert [p.field for p in problems] == ["default_runtime", "gpus", "max_runtime"]


def test_cores_that_no_node_has_are_refused() -> None:
    assert check_profile(values(cores_per_gpu=9), PARTITIONS) == [
        Problem(
            "cores_per_gpu",
            "4 GPUs with 9 cores and 48 GB each do not fit on one node of partition gpu: "
            "its nodes have 4 GPUs, 32 cores, 195 GB",
        )
    ]


def test_memory_that_no_node_has_is_said_at_the_memory() -> None:
    """Issue 54, item 9: "500 GB per GPU" was said under "CPU cores per GPU"."""
    assert check_profile(values(gpus=1, mem_per_gpu_gb=500), PARTITIONS) == [
        Problem(
            "mem_per_gpu_gb",
            "1 GPU with 8 cores and 500 GB each do not fit on one node of partition gpu: "
            "its nodes have 4 GPUs, 32 cores, 195 GB",
        )
    ]
    # Both too large: said at the first of the two.
    [both] = check_profile(values(gpus=1, cores_per_gpu=64, mem_per_gpu_gb=500), PARTITIONS)
    assert both.field == "cores_per_gpu"


def test_an_unknown_partition_lists_the_known_ones() -> None:
    assert check_profile(values(partition="a100"), PARTITIONS) == [
        Problem("partition", "no partition 'a100' on the cluster; known: big, gpu")
    ]


KINDS = {
    "gpu": Partition(
        "gpu",
        24 * 3600,
        (
            NodeShape(4, 32, 200000, 2, (("a100", 4),)),
            NodeShape(2, 16, 120000, 1, (("1g.10gb", 2),)),
        ),
    )
}


def test_a_kind_no_node_carries_names_the_kinds_there_are() -> None:
    assert check_profile(values(gpu_type="h100"), KINDS) == [
        Problem(
            "gpu_type",
            "no node of partition gpu has GPUs of kind 'h100'; its kinds: 1g.10gb, a100 "
            "(empty = any kind)",
        )
    ]


def test_more_gpus_of_a_kind_than_a_node_carries_are_refused() -> None:
    assert check_profile(values(gpus=3, cores_per_gpu=2, gpu_type="1g.10gb"), KINDS) == [
        Problem(
            "gpus", "must be at most 2: the nodes of partition gpu have at most 2 1g.10gb GPUs each"
        )
    ]
    assert (
        check_profile(values(gpus=2, cores_per_gpu=2, mem_per_gpu_gb=12, gpu_type="1g.10gb"), KINDS)
        == []
    )
