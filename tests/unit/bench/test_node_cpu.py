"""The bench nodes' cgroup (bench.node_cpu), on a stand-in of /sys/fs/cgroup."""

from __future__ import annotations

from pathlib import Path

from bench import node_cpu


def test_under_cgroup_v1_the_slurmds_go_into_a_group_of_the_least_shares(tmp_path: Path) -> None:
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cgroup.procs").write_text("1\n")

    said = node_cpu.place(["4242"], root=tmp_path)

    group = tmp_path / "cpu" / node_cpu.GROUP
    assert said == f"in cgroup {group} (cpu.shares 2)"
    assert (group / "cpu.shares").read_text() == "2"
    assert (group / "cgroup.procs").read_text() == "4242"


def test_under_cgroup_v2_the_cpu_controller_is_enabled_for_the_group(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("memory pids\n")

    said = node_cpu.place(["4242"], root=tmp_path)

    group = tmp_path / node_cpu.GROUP
    assert said == f"in cgroup {group} (cpu.weight 1)"
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+cpu"
    assert (group / "cpu.weight").read_text() == "1"


def test_without_a_cpu_controller_the_nodes_are_only_niced(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("memory pids\n")
    assert node_cpu.place(["4242"], root=tmp_path).startswith("niced only")
    assert not (tmp_path / node_cpu.GROUP).exists()


def test_release_moves_stragglers_back_to_the_top(tmp_path: Path) -> None:
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cgroup.procs").write_text("1\n")
    node_cpu.place(["4242"], root=tmp_path)

    node_cpu.release(root=tmp_path)

    # A real cgroup's files go with it on rmdir; a stand-in folder keeps them, so only the
    # move is seen here.
    assert (tmp_path / "cpu" / "cgroup.procs").read_text() == "4242"
