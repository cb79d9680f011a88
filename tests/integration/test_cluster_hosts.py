"""The local cluster is deployed as a cluster is: each part on a host of its own, and sessions
cross the network between the login host and the nodes (deploy/local/hosts.sh)."""

from __future__ import annotations

import re
import socket
import subprocess

import pytest

from tests.cluster import MIG_NODES, NODES, STATE, host_of_process, on_host
from tests.integration.conftest import Hub, server_environment
from tests.own_processes import HERE

pytestmark = pytest.mark.integration

# Each daemon, by its pid file, and the host it must run on.
DAEMONS = {
    "slapd.pid": "ldap",
    "slurmctld.pid": "slurmctld",
    "slurmdbd.pid": "slurmctld",
    "slurmd-gpu01.pid": "gpu01",
    "slurmd-gpu02.pid": "gpu02",
    "slurmd-mig01.pid": "mig01",
}


def address_of(host: str) -> str:
    return socket.gethostbyname(host)


def test_each_part_runs_on_a_host_of_its_own_with_its_name_and_address(cluster: None):
    for pidfile, host in DAEMONS.items():
        pid = (STATE / "run" / pidfile).read_text().split()[0]
        assert host_of_process(pid) == host, pidfile
    addresses = {
        host: address_of(host) for host in ("hub", "slurmctld", "ldap", *NODES, *MIG_NODES)
    }
    assert len(set(addresses.values())) == len(addresses), addresses
    assert not any(address.startswith("127.") for address in addresses.values()), addresses
    for host in ("slurmctld", "ldap", *NODES, *MIG_NODES):
        said = on_host(host, "sh", "-c", "hostname; hostname -I")
        assert said.returncode == 0, said.stderr
        name, own = said.stdout.split("\n", 1)
        assert name == host
        assert own.split() == [addresses[host]], own


def test_a_two_node_step_runs_on_both_hosts(cluster: None):
    said = subprocess.run(
        ["runuser", "-u", "alice", "--", "srun", "-N2", "--ntasks-per-node=1", "hostname"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/tmp",
    )
    assert said.returncode == 0, said.stderr
    assert sorted(said.stdout.split()) == sorted(NODES)


def _listening(host: str, port: int) -> list[str]:
    """The local addresses that listen on PORT on HOST (ss, in the host's namespace)."""
    said = on_host(host, "ss", "-Hltn", f"sport = :{port}")
    assert said.returncode == 0, said.stderr
    return [line.split()[3].rsplit(":", 1)[0] for line in said.stdout.splitlines() if line]


def test_a_session_runs_on_its_node_and_is_reached_over_the_network(hub: Hub, clean: None):
    alice = hub.login("alice")
    response = hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert response.status_code in (201, 202), response.text
    hub.wait_ready(alice, "alice")
    pids = subprocess.run(
        ["pgrep", *HERE, "-u", "alice", "-f", "gpuportal_session.singleuser"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert pids, "no JupyterLab process of alice"
    node = host_of_process(pids[0])
    assert node in NODES, f"JupyterLab runs on {node}, not on a compute node"
    env = server_environment("alice")
    assert env["SLURMD_NODENAME"] == node
    # It calls the hub on the login host's cluster address, never on a loopback.
    assert env["JUPYTERHUB_API_URL"] == hub.api_url  # https://hub:8281/hub/api
    # Where the hub connects: the node's name, and the port the job reported.
    # The last such line: the hub's log holds the earlier sessions of the test run too.
    found = re.findall(rf"JupyterLab at {node}:(\d+)", hub.log_path.read_text(errors="replace"))
    assert found, f"the hub did not connect to {node}"
    port = int(found[-1])
    # It listens on its node's own address only, where the proxy reaches it over the bridge.
    assert _listening(node, port) == [address_of(node)]
    with socket.socket() as probe:
        probe.settimeout(5)
        assert probe.connect_ex((address_of(node), port)) == 0
    # The login host's loopback is not the node's: nothing of alice's listens there.
    with socket.socket() as probe:
        probe.settimeout(5)
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    # Through the proxy, over the bridge, to the node.
    token = hub.api(alice, "POST", "/users/alice/tokens", json={}).json()["token"]
    lab = alice.get(
        f"{hub.url}/user/alice/api/status", headers={"Authorization": f"token {token}"}, timeout=30
    )
    assert lab.status_code == 200, lab.text
