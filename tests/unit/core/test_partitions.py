import re

import pytest

from gpuportal_core.partitions import (
    NodeShape,
    SinfoFormatError,
    gpus_in_gres,
    parse_sinfo,
)


@pytest.mark.parametrize(
    ("gres", "gpus"),
    [
        ("gpu:4", 4),
        ("gpu:a100:2(S:0-1)", 2),
        ("gpu:a100:2,gpu:t4:1", 3),
        ("gpu:tesla:4,mps:400", 4),
        ("(null)", 0),
    ],
)
def test_gpus_in_gres_counts_every_gpu_type(gres: str, gpus: int) -> None:
    assert gpus_in_gres(gres) == gpus


def test_parse_sinfo_keeps_each_node_shape_of_a_partition() -> None:
    text = (
        "gpu|1-00:00:00|gpu:4|32|200000|6\n"
        "gpu|1-00:00:00|gpu:8|64+|500000|2\n"
        "cpu|infinite|(null)|128|256000|10\n"
    )
    partitions = parse_sinfo(text)
    gpu = partitions["gpu"]
    assert gpu.max_time == 86400
    assert gpu.shapes == (
        NodeShape(4, 32, 200000, 6, (("", 4),)),
        NodeShape(8, 64, 500000, 2, (("", 8),)),
    )
    assert gpu.node_count == 8
    assert gpu.nodes_with(gpus=4, cores=32, mem_mb=1) == 8
    assert gpu.nodes_with(gpus=5, cores=1, mem_mb=1) == 2
    assert gpu.max_gpus_per_node == 8
    assert gpu.fits_one_node(gpus=8, cores=64, mem_mb=400000)
    # 8 GPUs and 100 cores exist in the partition, but not on one node.
    assert not gpu.fits_one_node(gpus=8, cores=100, mem_mb=1000)
    assert partitions["cpu"].max_time is None
    assert partitions["cpu"].max_gpus_per_node == 0


def test_parse_sinfo_names_the_line_it_cannot_read() -> None:
    with pytest.raises(SinfoFormatError, match="expected 6 fields"):
        parse_sinfo("gpu|1-00:00:00\n")
    with pytest.raises(SinfoFormatError, match=re.escape("sinfo line 'gpu|soon|gpu:4|32|1|1'")):
        parse_sinfo("gpu|soon|gpu:4|32|1|1")


def test_one_fit_rule_for_profiles_and_jobs() -> None:
    from gpuportal_core.partitions import Partition

    gpu = Partition("gpu", 86400, (NodeShape(gpus=4, cores=32, mem_mb=196608, count=2),))
    fits = gpu.fit(gpus=4, cores_per_gpu=8, mem_per_gpu_gb=48, runtime=3600)
    assert (fits.too_many_gpus, fits.nodes_that_fit, fits.over_max_time) == (False, 2, False)
    assert gpu.fit(gpus=8, cores_per_gpu=8, mem_per_gpu_gb=48, runtime=3600).too_many_gpus
    assert gpu.fit(gpus=4, cores_per_gpu=9, mem_per_gpu_gb=48, runtime=3600).nodes_that_fit == 0
    assert gpu.fit(gpus=1, cores_per_gpu=8, mem_per_gpu_gb=48, runtime=90000).over_max_time


# A cluster of several kinds: A100 and H100 nodes, and a node of A100s cut into MIG slices.
KINDS_SINFO = (
    "gpu|1-00:00:00|gpu:a100:4(S:0-1)|32|200000|2\n"
    "gpu|1-00:00:00|gpu:h100:4(S:0-1)|112|1000000|1\n"
    "gpu|1-00:00:00|gpu:1g.10gb:4(S:0),gpu:3g.40gb:2(S:1)|16|120000|1\n"
)


def test_each_kind_fits_only_the_nodes_that_carry_it() -> None:
    gpu = parse_sinfo(KINDS_SINFO)["gpu"]
    assert gpu.gpu_kinds == ["1g.10gb", "3g.40gb", "a100", "h100"]
    assert gpu.max_gpus_of("a100") == 4 and gpu.max_gpus_of("3g.40gb") == 2
    assert gpu.max_gpus_of("") == 6  # any kind: the MIG node's six slices
    h100 = gpu.fit(gpus=2, cores_per_gpu=28, mem_per_gpu_gb=200, runtime=60, gpu_type="h100")
    assert h100.nodes_that_fit == 1 and not h100.too_many_gpus
    # 28 cores per GPU is what an H100 node gives, not an A100 one.
    a100 = gpu.fit(gpus=2, cores_per_gpu=28, mem_per_gpu_gb=48, runtime=60, gpu_type="a100")
    assert a100.nodes_that_fit == 0
    assert gpu.fit(
        gpus=3, cores_per_gpu=1, mem_per_gpu_gb=1, runtime=60, gpu_type="3g.40gb"
    ).too_many_gpus
    assert gpu.fit(
        gpus=1, cores_per_gpu=1, mem_per_gpu_gb=1, runtime=60, gpu_type="l40s"
    ).no_such_kind


def test_what_the_nodes_of_a_kind_give_per_gpu() -> None:
    gpu = parse_sinfo(KINDS_SINFO)["gpu"]
    assert gpu.per_gpu("h100") == (28, 244)
    assert gpu.per_gpu("a100") == (8, 48)
    assert gpu.per_gpu("1g.10gb") == (2, 19)  # the MIG node's 16 cores over its six slices
    assert gpu.per_gpu("l40s") is None
