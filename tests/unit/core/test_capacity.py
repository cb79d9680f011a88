"""The cluster snapshot and the start estimate: parsed from real sinfo/squeue lines."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from gpuportal_core.capacity import (
    FAR_FUTURE,
    GpuJob,
    LineEstimate,
    NodeGpus,
    _Hold,
    _Node,
    _place,
    expand_hostlist,
    free_gpus,
    gpus_in,
    parse_jobs,
    parse_nodes,
)

NOW = datetime(2026, 11, 22, 14, 0, 0)
HOUR = 3600


def node(name: str, used: int, total: int = 4, usable: bool = True) -> NodeGpus:
    return NodeGpus(name, ("gpu",), total, used, usable=usable)


def running(job_id: str, on: str, gpus: int, ends_in_min: int) -> GpuJob:
    end = NOW + timedelta(minutes=ends_in_min)
    return GpuJob(job_id, True, "gpu", gpus, 1, None, end, 100, (on,))


def waiting(job_id: str, gpus: int, hours: int, priority: int = 100) -> GpuJob:
    return GpuJob(job_id, False, "gpu", gpus, 1, hours * HOUR, None, priority)


def start(nodes: list[NodeGpus], jobs: list[GpuJob], gpus: int) -> datetime | None:
    return LineEstimate(nodes, jobs, partition="gpu", now=NOW).new_job_start(gpus, 8 * HOUR)


def test_sinfo_and_squeue_lines_as_slurm_22_05_prints_them() -> None:
    nodes = parse_nodes(
        "gpu01|gpu*|gpu:4|gpu:3|mixed\n"
        "gpu02|gpu*|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|idle\n"
        "gpu03|gpu*|gpu:4|gpu:0|down*\n"
        "gpu01|debug|gpu:4|gpu:3|mixed\n"
        "gpu04|gpu*|gpu:4|gpu:1|mixed*\n"
        "gpu05|gpu*|gpu:4|gpu:0|idle*\n"
    )
    # gpu04 and gpu05 do not answer slurmctld (sinfo's "*"; gpu04 may even be DOWN, which sinfo
    # prints as mixed while it holds a job's CPUs): Slurm starts nothing there.
    assert [(n.name, n.free, n.gpu_type) for n in nodes] == [
        ("gpu01", 1, ""), ("gpu02", 4, "a100"), ("gpu03", 0, ""), ("gpu04", 0, ""),
        ("gpu05", 0, ""),
    ]  # fmt: skip
    assert nodes[0].partitions == ("gpu", "debug")
    assert free_gpus(nodes, "gpu") == {"": (1, 4), "a100": (4, 4)}
    jobs = parse_jobs(
        "71|RUNNING|gpu|gres:gpu:2|1|8:00:00|2026-11-22T19:10:00|4294901000|gpu01\n"
        "72|PENDING|gpu|gres:gpu:4|2|1-00:00:00|N/A|4294901200|\n"
        "73|RUNNING|cpu|N/A|1|1:00:00|2026-11-22T15:00:00|1|cpu01\n"
    )
    assert [j.job_id for j in jobs] == ["71", "72"]
    assert jobs[0].end == datetime(2026, 11, 22, 19, 10) and jobs[0].nodes == ("gpu01",)
    assert (jobs[1].node_count, jobs[1].time_limit, jobs[1].running) == (2, 24 * HOUR, False)


def test_a_job_slurm_has_just_placed_holds_its_gpus() -> None:
    """CONFIGURING (prolog, node boot) and SUSPENDED jobs keep their GPUs: a cluster that had
    just filled looked free to the waiting page (issue 20)."""
    jobs = parse_jobs(
        "81|CONFIGURING|gpu|gres:gpu:4|1|0:10:00|2026-11-22T15:10:00|1|gpu01\n"
        "82|SUSPENDED|gpu|gres:gpu:4|1|0:20:00|2026-11-22T15:20:00|1|gpu02\n"
    )
    assert [(j.job_id, j.running) for j in jobs] == [("81", True), ("82", True)]
    nodes = [node("gpu01", 4), node("gpu02", 4)]
    assert start(nodes, jobs, 4) == datetime(2026, 11, 22, 15, 10)


def test_gpu_types_and_hostlists() -> None:
    assert gpus_in("gpu:4") == ("", 4)
    assert gpus_in("gpu:a100:2(S:0-1),gpu:t4:1") == ("mixed", 3)
    assert gpus_in("(null)") == ("", 0)
    assert expand_hostlist("gpu[01-03,07],login1") == ("gpu01", "gpu02", "gpu03", "gpu07", "login1")
    assert expand_hostlist("a[1-2]b[3-4]") == ("a1b3", "a1b4", "a2b3", "a2b4")
    assert expand_hostlist("") == ()
    assert expand_hostlist("gpu[01-") == ("gpu[01-",)  # unreadable: kept, not dropped


def test_free_gpus_start_now() -> None:
    nodes = [node("gpu01", 3), node("gpu02", 0)]
    assert start(nodes, [], 4) == NOW


def test_a_full_cluster_starts_when_enough_gpus_on_one_node_end() -> None:
    nodes = [node("gpu01", 4), node("gpu02", 4)]
    jobs = [
        running("1", "gpu01", 2, 30),
        running("2", "gpu01", 2, 90),
        running("3", "gpu02", 4, 60),
    ]
    assert start(nodes, jobs, 2) == NOW + timedelta(minutes=30)
    # Four on one node: gpu02 frees all four at 60 min, before gpu01 does at 90.
    assert start(nodes, jobs, 4) == NOW + timedelta(minutes=60)


def test_jobs_waiting_ahead_are_served_first_by_priority() -> None:
    nodes = [node("gpu01", 4)]
    jobs = [running("1", "gpu01", 4, 60), waiting("5", 4, hours=2, priority=500)]
    # The waiting 4-GPU job takes the node from 60 to 180 min; a new one starts after it.
    assert start(nodes, jobs, 1) == NOW + timedelta(minutes=180)


def test_a_short_choice_can_fill_a_gap_before_a_waiting_job() -> None:
    nodes = [node("gpu01", 2), node("gpu02", 4)]
    jobs = [running("1", "gpu01", 2, 600), running("2", "gpu02", 4, 60), waiting("5", 4, 1)]
    # Two GPUs are free on gpu01 now and for the whole 8 h: the waiting job wants gpu02.
    assert start(nodes, jobs, 2) == NOW


def test_no_node_big_enough_means_never() -> None:
    assert start([node("gpu01", 0, total=2)], [], 4) is None
    assert start([node("gpu01", 0, usable=False)], [], 1) is None


def _full_search(cluster: dict[str, _Node], gpus: int, limit: int, now: datetime):
    """The one-node placement as it was first written: every node at every end of any hold."""
    ends = sorted({h.end for node in cluster.values() for h in node.holds if h.end > now})
    for begin in [now, *ends]:
        if begin == FAR_FUTURE:
            break
        end = begin + timedelta(seconds=limit)
        fitting = [name for name, node in cluster.items() if node.fits(gpus, begin, end)]
        if fitting:
            return begin, fitting[0]
    return None, None


def test_one_node_placement_node_by_node_finds_what_the_full_search_finds() -> None:
    """The faster search (each node at its own ends) gives the same start and node as trying
    every node at every end, on 400 random clusters and lines."""
    rng = random.Random(22)
    for _ in range(400):
        cluster = {f"n{i}": _Node(rng.choice([2, 4, 8])) for i in range(rng.randint(1, 5))}
        for node in cluster.values():
            for _ in range(rng.randint(0, 6)):
                begin = NOW + timedelta(minutes=rng.randint(0, 300))
                length = rng.choice([None, 30, 60, 240])
                end = begin + timedelta(minutes=length) if length else FAR_FUTURE
                node.holds.append(_Hold(begin, end, rng.randint(1, node.total)))
        gpus, limit = rng.randint(1, 8), rng.choice([600, 3600, 8 * HOUR])
        held = {name: len(node.holds) for name, node in cluster.items()}
        begin, node_name = _full_search(cluster, gpus, limit, NOW)
        start = _place(cluster, gpus, 1, limit, NOW)
        grown = [name for name, node in cluster.items() if len(node.holds) > held[name]]
        assert (start, grown) == (begin, [node_name] if node_name else [])


# A cluster of several kinds, as sinfo -N prints it: an A100 node, an H100 node, and a node of
# A100s cut into MIG slices (two kinds on one node).
KINDS_NODES = (
    "gpu01|gpu*|gpu:a100:4(S:0-1)|gpu:a100:4(IDX:0-3)|allocated\n"
    "gpu02|gpu*|gpu:h100:4(S:0-1)|gpu:h100:1(IDX:0)|mixed\n"
    "mig01|gpu*|gpu:1g.10gb:4(S:0),gpu:3g.40gb:2(S:1)|gpu:1g.10gb:3(IDX:0-2),gpu:3g.40gb:0(IDX:N/A)|mixed\n"
)


def test_free_gpus_are_counted_per_kind_a_mig_node_too() -> None:
    nodes = parse_nodes(KINDS_NODES)
    assert free_gpus(nodes, "gpu") == {
        "a100": (0, 4), "h100": (3, 4), "1g.10gb": (1, 4), "3g.40gb": (2, 2),
    }  # fmt: skip
    mig = nodes[2]
    assert (mig.gpu_type, mig.total, mig.free) == ("mixed", 6, 3)
    assert (mig.total_of("3g.40gb"), mig.free_of("3g.40gb"), mig.free_of("")) == (2, 2, 3)


def test_each_kind_has_its_own_line() -> None:
    """The A100s are taken until 16:00 and an A100 job waits: an H100 starts now, an A100 after
    the waiting one, and a job of any kind now (on the H100s or the slices)."""
    nodes = parse_nodes(KINDS_NODES)
    jobs = parse_jobs(
        "91|RUNNING|gpu|gres:gpu:a100:4|1|8:00:00|2026-11-22T16:00:00|100|gpu01\n"
        "92|RUNNING|gpu|gres:gpu:h100:1|1|8:00:00|2026-11-22T18:00:00|100|gpu02\n"
        "93|RUNNING|gpu|gres:gpu:1g.10gb:3|1|8:00:00|2026-11-22T18:00:00|100|mig01\n"
        "94|PENDING|gpu|gres:gpu:a100:4|1|2:00:00|N/A|200|\n"
    )
    assert jobs[3].gpu_type == "a100"

    def starts(kind: str, gpus: int) -> datetime | None:
        line = LineEstimate(nodes, jobs, partition="gpu", now=NOW, gpu_type=kind)
        return line.new_job_start(gpus, 8 * HOUR)

    assert starts("h100", 3) == NOW
    assert starts("h100", 4) == datetime(2026, 11, 22, 18, 0)
    assert starts("a100", 1) == datetime(2026, 11, 22, 18, 0)  # behind job 94 (16:00 to 18:00)
    assert starts("3g.40gb", 2) == NOW
    assert starts("1g.10gb", 2) == datetime(2026, 11, 22, 18, 0)
    assert starts("l40s", 1) is None  # no node carries it
    assert starts("", 3) == NOW
