"""The preflight's verdicts: what a site set up wrong, one line each, with the fix.

`gpuportal-admin preflight` (gpuportal_spawner.preflight) gathers what it sees on the hub host and
on the compute nodes; the judgements on that are here, pure, so that each is tested against the
exact text a tool prints.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from gpuportal_core.words import count


class Outcome(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "FAIL"


@dataclass(frozen=True)
class Check:
    """One line of the preflight: what was checked, how it went, and what to do about it."""

    name: str
    outcome: Outcome
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.outcome.value:>4}  {self.name}: {self.detail}"
        return (
            f"{text}\n      fix: {self.fix}" if self.fix and self.outcome != Outcome.PASS else text
        )


def passed(name: str, detail: str) -> Check:
    return Check(name, Outcome.PASS, detail)


def failed(name: str, detail: str, fix: str) -> Check:
    return Check(name, Outcome.FAIL, detail, fix)


def warned(name: str, detail: str, fix: str) -> Check:
    return Check(name, Outcome.WARN, detail, fix)


# `sudo -l -U ACCOUNT` prints, per rule, the Runas list and the commands:
#     (GPUPORTAL_USERS) NOPASSWD: /usr/bin/sbatch ^(--parsable|--test-only)...$
_RULE = re.compile(r"^\s*\((?P<runas>[^)]*)\)\s*(?P<tags>(?:[A-Z_]+:\s*)*)(?P<command>/\S.*)$")


def sudo_rules(listing: str) -> set[tuple[str, str]]:
    """(runas, command with its arguments) of each rule `sudo -l -U ACCOUNT` lists."""
    rules = set()
    for line in listing.splitlines():
        match = _RULE.match(line)
        if match:
            for command in match["command"].split(", /"):
                command = command if command.startswith("/") else "/" + command
                rules.add((match["runas"].strip(), command.strip()))
    return rules


def compare_sudo_rules(
    expected: set[tuple[str, str]], listed: set[tuple[str, str]], account: str
) -> Check:
    """All the rule's commands present, nothing beyond them."""
    name = "sudo rule"
    missing = sorted(command for _, command in expected - listed)
    beyond = sorted(f"({runas}) {command}" for runas, command in listed - expected)
    if not missing and not beyond:
        return passed(name, f"{account} may run the {len(expected)} commands of its rule, no more")
    parts = []
    if missing:
        parts.append(f"missing: {'; '.join(missing)}")
    if beyond:
        parts.append(f"beyond the rule: {'; '.join(beyond)}")
    return failed(
        name,
        ". ".join(parts),
        "gpuportal-admin sudoers --install, and remove other sudoers lines for "
        f"{account} (sudo -l -U {account} lists them)",
    )


def probe_verdicts(
    partition: str,
    answers: dict[str, str],
    *,
    hub_address: str,
    hub_addresses: dict[str, list[str]],
    hub_version: str,
) -> list[Check]:
    """What each node of a partition said of itself (gpuportal_spawner.preflight's probe: one
    JSON line per node), against what the hub expects.

    hub_addresses: each node name as the hub resolves it (what it connects JupyterLab by).
    """
    checks: list[Check] = []
    for node in sorted(answers):
        try:
            seen = json.loads(answers[node])
        except ValueError:
            checks.append(
                failed(
                    f"node {node}",
                    f"{node} did not answer the probe: {answers[node][:300]}",
                    f"check that {node} reaches the hub host (srun's output comes back over "
                    "the same network as the hub's API) and its slurmd log",
                )
            )
            continue
        if seen.get("hub_error"):
            checks.append(
                failed(
                    f"hub API from {node}",
                    f"{node} cannot reach the hub's API at {hub_address}: {seen['hub_error']}",
                    "open the hub's API port from the compute nodes, or set "
                    "PORTAL_HUB_CONNECT_IP to an address they reach",
                )
            )
        else:
            checks.append(passed(f"hub API from {node}", f"{node} reaches {hub_address}"))
        own = set(seen.get("addresses", []))
        resolved = set(hub_addresses.get(node, []))
        if not resolved:
            checks.append(
                failed(
                    f"name of {node}",
                    f"the hub cannot resolve {node}",
                    "make Slurm's node names resolve on the hub host (DNS or /etc/hosts)",
                )
            )
        elif not resolved & own:
            checks.append(
                failed(
                    f"name of {node}",
                    f"the hub resolves {node} to {', '.join(sorted(resolved))}, which is not "
                    f"one of the node's own ({', '.join(sorted(own)) or 'none'})",
                    "make node names resolve to the same addresses on the hub and the nodes",
                )
            )
        else:
            checks.append(passed(f"name of {node}", "resolves alike on the hub and the node"))
        if seen.get("srun") is False:
            # Slurm's node packages need not carry the client commands (Debian's slurmd does not).
            checks.append(
                warned(
                    f"srun on {node}",
                    f"{node} has no srun: jobs of more than one node, and srun or sbatch in a "
                    "session's terminal, fail there",
                    "install the Slurm client commands on the nodes (Debian: slurm-client)",
                )
            )
        checks.append(_session_environment(node, seen, hub_version))
    if not answers:
        checks.append(
            warned(
                f"partition {partition}",
                "no node of it could be probed (none idle or mixed within 30 s)",
                "run the preflight again when the partition has a free node",
            )
        )
    return checks


def _session_environment(node: str, seen: dict[str, str], hub_version: str) -> Check:
    name = f"session environment on {node}"
    if seen.get("env_error"):
        return failed(
            name,
            f"JupyterLab cannot start there: {seen['env_error']}",
            "install the session environment (pip install slurm-gpu-portal[session]) where "
            "the nodes see it, at PORTAL_SESSION_VENV",
        )
    singleuser = seen.get("jupyterhub", "")
    if _minor(singleuser) != _minor(hub_version):
        return failed(
            name,
            f"jupyterhub-singleuser {singleuser} there, the hub is {hub_version}",
            f"install jupyterhub=={hub_version} in the session environment",
        )
    return passed(name, f"jupyterhub-singleuser {singleuser}, JupyterLab {seen.get('jupyterlab')}")


def _minor(version: str) -> tuple[str, ...]:
    return tuple(version.split(".")[:2])


def certificate_verdict(name: str, not_after: datetime, now: datetime, subject: str) -> Check:
    days = (not_after - now).total_seconds() / 86400
    if days < 0:
        return failed(name, f"{subject} expired on {not_after:%Y-%m-%d}", "renew it")
    if days < 30:
        return warned(
            name, f"{subject} ends on {not_after:%Y-%m-%d}, in {days:.0f} days", "renew it soon"
        )
    return passed(name, f"{subject}, {days:.0f} days left (until {not_after:%Y-%m-%d})")


def summary(checks: Iterable[Check]) -> tuple[str, bool]:
    """The closing line, and whether the whole preflight passed (warnings pass)."""
    checks = list(checks)
    failures = sum(check.outcome == Outcome.FAIL for check in checks)
    warnings = sum(check.outcome == Outcome.WARN for check in checks)
    line = f"{count(len(checks), 'check')}: {failures} failed, {count(warnings, 'warning')}"
    return line, failures == 0
