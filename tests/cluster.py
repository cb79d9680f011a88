"""The local cluster's hosts as tests and benchmarks reach them (deploy/local/hosts.sh).

Each part runs on a host of its own: `ldap`, `slurmctld`, `gpu01`, `gpu02`, each a network
namespace with its own address and host name; the tests run on the login host `hub` (this
machine's own namespace), where the hub, its proxy and the portal run too.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOSTS_SH = REPO / "deploy" / "local" / "hosts.sh"
STATE = Path(os.environ.get("PORTAL_STATE", "/var/lib/portal-local"))
LDAP_URI = "ldap://ldap:3890/"
LDAPS_URI = "ldaps://ldap:6360/"
LDAP_CA = STATE / "ldap-ca.pem"
NODES = ("gpu01", "gpu02")  # partition gpu: an A100 node and an H100 node
MIG_NODES = ("mig01",)  # partition mig: an A100 cut into MIG slices


def host_of_process(pid: int | str) -> str:
    """The host a process runs on: the one whose network namespace it is in ('hub' for ours),
    of every host hosts.sh made (nodes `cluster.sh grow` added too)."""
    inode = os.stat(f"/proc/{pid}/ns/net").st_ino
    for netns in Path("/run/netns").glob("gpp-*"):
        if netns.stat().st_ino == inode:
            return netns.name.removeprefix("gpp-")
    return "hub" if inode == os.stat("/proc/self/ns/net").st_ino else "?"


def on_host(
    host: str, *argv: str, timeout: float = 30, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """Run a command on a host of the cluster (its network and host name), as root."""
    return subprocess.run(
        ["bash", str(HOSTS_SH), "on", host, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,  # type: ignore[arg-type]
    )
