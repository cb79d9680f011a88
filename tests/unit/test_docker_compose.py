"""docker-compose.yml, checked without a container engine: the file is what `docker-compose
config` accepts, each service runs a part the local scripts start in `make demo` and `make test`,
and the Slurm configs the containers write are the golden ones. tests/compose brings the stack
up for real with podman, in a part of make test of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

# Builds or starts processes: make test runs it, make check leaves it out (issue 53).
pytestmark = pytest.mark.builds

REPO = Path(__file__).resolve().parents[2]
SERVICES = {"ldap", "slurmctld", "gpu01", "gpu02", "mig01", "postgres", "hub"}
CLUSTER_SH = (REPO / "deploy/local/cluster.sh").read_text()
RUN_SH = (REPO / "deploy/docker/run.sh").read_text()


def _compose_config() -> dict:
    if shutil.which("docker-compose") is None:
        pytest.skip("docker-compose is not installed (deploy/local/install.sh --test installs it)")
    result = subprocess.run(
        ["docker-compose", "-f", str(REPO / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def _port(port: str | dict[str, object]) -> str:
    """A published port as docker-compose 1 prints it ("127.0.0.1:8000:8000/tcp"), from 2's
    mapping too."""
    if isinstance(port, dict):
        return f"{port['host_ip']}:{port['published']}:{port['target']}"
    return str(port).removesuffix("/tcp")


def _function(name: str) -> str:
    """The body of a shell function in cluster.sh."""
    match = re.search(rf"^{name}\(\) \{{.*?^\}}", CLUSTER_SH, re.S | re.M)
    assert match, name
    return match.group(0)


def _calls(body: str) -> set[str]:
    """The cluster.sh functions a function's body calls (comments and its own line left out)."""
    functions = set(re.findall(r"^([a-z_]+)\(\) \{", CLUSTER_SH, re.M))
    code = "\n".join(line.split("#", 1)[0] for line in body.splitlines()[1:])
    return {word for word in re.findall(r"\b[a-z_]+\b", code) if word in functions}


def test_compose_accepts_the_file_and_every_part_is_there():
    config = _compose_config()
    services = config["services"]
    assert set(services) == SERVICES
    for name, service in services.items():
        assert service["build"]["dockerfile"] == "deploy/docker/Dockerfile", name
        assert service["healthcheck"]["test"], name
        for volume in service.get("volumes", []):
            # docker-compose 1 (Debian 12) prints "name:/path", 2 (Debian 13) a mapping.
            source = volume["source"] if isinstance(volume, dict) else volume.split(":")[0]
            assert source in config["volumes"], (name, volume)
    assert [_port(port) for port in services["hub"]["ports"]] == ["127.0.0.1:8000:8000"]
    # The hub starts last, once everything it needs answers.
    assert set(services["hub"]["depends_on"]) == {"ldap", "postgres", "gpu01", "gpu02", "mig01"}
    assert all(
        dep["condition"] == "service_healthy" for dep in services["hub"]["depends_on"].values()
    )
    # Its own network, in the project's range beside the local cluster's 10.213.0.0/24.
    subnets = [c["subnet"] for c in config["networks"]["default"]["ipam"]["config"]]
    assert subnets == ["10.214.0.0/24"]


def test_each_part_waits_for_the_parts_it_needs():
    """podman-compose on podman 4.3 starts a service without waiting for the health of those
    it depends on: the nodes wait for slurmctld, the hub for LDAP, PostgreSQL and slurmctld."""
    waits = dict(re.findall(r"^    (\w+)\)[^\n]*\n((?:        .*\n)+)", RUN_SH, re.M))
    assert "wait_for slurmctld 6817" in waits["slurmd"]
    for needed in ("wait_for ldap 6360", "wait_for postgres 5432", "wait_for slurmctld 6817"):
        assert needed in waits["hub"], needed


def test_the_image_is_debian_12_built_by_the_projects_install_script():
    dockerfile = (REPO / "deploy/docker/Dockerfile").read_text()
    # Docker's Debian 12 by default; podman.sh passes the one debootstrap made.
    assert re.search(r"^ARG BASE_IMAGE=debian:12$", dockerfile, re.M)
    assert re.search(r"^FROM \$\{BASE_IMAGE\}$", dockerfile, re.M)
    assert "bash deploy/local/install.sh --image" in dockerfile
    assert 'ENTRYPOINT ["bash", "deploy/docker/run.sh"]' in dockerfile


def test_each_service_runs_a_part_that_the_local_start_runs_too():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    roles = set(re.findall(r"^    ([a-z]+)\)", RUN_SH, re.M))
    for name, service in compose["services"].items():
        assert service["command"][0] in roles, name
    # run.sh hands each role to cluster.sh's parts, postgres.sh start or hub.sh start: the
    # commands of `make demo` / `make test`.
    parts = set(re.findall(r'cluster\.sh" (ldap|controller|node|client)\b', RUN_SH))
    assert parts == {"ldap", "controller", "node", "client"}
    assert 'postgres.sh" start' in RUN_SH and 'hub.sh" start' in RUN_SH
    # `make demo` and `make test` run the same parts, each on the namespace host named as the
    # part's container (cluster.sh start: on_host HOST PART).
    start = _function("start")
    assert re.search(r"^\s+on_host ldap ldap$", start, re.M)
    assert re.search(r"^\s+on_host slurmctld controller$", start, re.M)
    assert 'on_host "$node" node "$node"' in start
    assert re.search(r"^\s+part client$", start, re.M)


def test_the_containers_are_the_local_clusters_hosts():
    """Same names, so the same configs: hosts.sh's namespaces are the compose services."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    hosts = (REPO / "deploy/local/hosts.sh").read_text()
    declared = re.search(r"^declare -A BYTE=\((.*)\)$", hosts, re.M)
    assert declared
    names = set(re.findall(r"\[([a-z0-9]+)\]=", declared.group(1)))
    # Not the identity provider (deploy/local/sso.sh): the compose stack's hub has the LDAP form.
    names -= {"sso"}
    assert names == SERVICES - {"postgres"}
    for name in names:
        assert compose["services"][name]["hostname"] == name


@pytest.mark.skipif(os.geteuid() != 0, reason="cluster.sh runs as root")
def test_the_containers_slurm_configs_are_the_golden_ones(tmp_path):
    env = {**os.environ, "PORTAL_STATE": "/var/lib/portal-local", "PORTAL_CLUSTER_HOSTS": "compose"}
    subprocess.run(
        ["bash", str(REPO / "deploy/local/cluster.sh"), "render", str(tmp_path / "etc")],
        env=env,
        check=True,
        capture_output=True,
    )
    golden = REPO / "deploy/docker/golden"
    for name in ("slurm.conf", "gres.conf", "slurmdbd.conf"):
        assert (tmp_path / "etc" / name).read_text() == (golden / name).read_text(), name
    slurm_conf = (golden / "slurm.conf").read_text()
    assert "SlurmctldHost=slurmctld" in slurm_conf
    assert "NodeName=gpu01 NodeHostname=gpu01 NodeAddr=gpu01" in slurm_conf
