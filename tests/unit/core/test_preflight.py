"""The preflight's verdicts on what the tools printed (issue 33, 3)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from gpuportal_core.preflight import (
    Outcome,
    certificate_verdict,
    compare_sudo_rules,
    probe_verdicts,
    sudo_rules,
    summary,
)

# `COLUMNS=4000 sudo -l -U gpuportal`, as Debian 12's sudo 1.9.13 prints it (shortened).
LISTING = """Matching Defaults entries for gpuportal on vm:
    env_reset, mail_badpass, env_keep="LANG LC_ALL"

User gpuportal may run the following commands on vm:
    (%ds, %vision) NOPASSWD: /usr/bin/scancel ^[0-9]+(_[0-9]+)?$
    (%ds, %vision) NOPASSWD: /usr/bin/tee ^/[^ ]+$
"""
RUNAS = "%ds, %vision"
RULE = {(RUNAS, "/usr/bin/scancel ^[0-9]+(_[0-9]+)?$"), (RUNAS, "/usr/bin/tee ^/[^ ]+$")}


def test_the_listed_rules_are_read_whole() -> None:
    assert sudo_rules(LISTING) == RULE


def test_a_rule_missing_or_one_beyond_is_named() -> None:
    assert compare_sudo_rules(RULE, RULE, "gpuportal").outcome == Outcome.PASS
    extra = LISTING + "    (root) NOPASSWD: /usr/bin/id\n"
    beyond = compare_sudo_rules(RULE, sudo_rules(extra), "gpuportal")
    assert beyond.outcome == Outcome.FAIL and "beyond the rule: (root) /usr/bin/id" in beyond.detail
    fewer = LISTING.replace("    (%ds, %vision) NOPASSWD: /usr/bin/tee ^/[^ ]+$\n", "")
    missing = compare_sudo_rules(RULE, sudo_rules(fewer), "gpuportal")
    assert missing.outcome == Outcome.FAIL and "missing: /usr/bin/tee" in missing.detail
    assert "gpuportal-admin sudoers --install" in missing.fix


def answer(**fields: object) -> str:
    return json.dumps(
        {"node": "gpu01", "addresses": ["10.0.0.11"], "jupyterhub": "6.1.1", "jupyterlab": "4.6.6"}
        | fields
    )


def verdicts(text: str, resolved: list[str] | None = None, hub_version: str = "6.1.2") -> dict:
    checks = probe_verdicts(
        "gpu",
        {"gpu01": text},
        hub_address="hub:8081",
        hub_addresses={"gpu01": ["10.0.0.11"] if resolved is None else resolved},
        hub_version=hub_version,
    )
    return {check.name: check for check in checks}


def test_a_healthy_node_passes_every_line() -> None:
    assert {c.outcome for c in verdicts(answer()).values()} == {Outcome.PASS}


def test_a_node_that_cannot_call_the_hub_back_is_named() -> None:
    checks = verdicts(answer(hub_error="timed out"))
    cut = checks["hub API from gpu01"]
    assert cut.outcome == Outcome.FAIL and "gpu01 cannot reach the hub's API" in cut.detail
    silent = verdicts("srun: error: Task launch for StepId=7.0 failed on node gpu01")
    assert silent["node gpu01"].outcome == Outcome.FAIL
    assert "reaches the hub host" in silent["node gpu01"].fix


def test_a_name_resolving_elsewhere_on_the_hub_is_named() -> None:
    checks = verdicts(answer(), resolved=["10.9.9.9"])
    assert checks["name of gpu01"].outcome == Outcome.FAIL
    assert (
        "10.9.9.9, which is not one of the node's own (10.0.0.11)" in checks["name of gpu01"].detail
    )
    assert verdicts(answer(), resolved=[])["name of gpu01"].outcome == Outcome.FAIL


def test_another_jupyterhub_or_no_jupyterlab_on_the_node_is_named() -> None:
    other = verdicts(answer(jupyterhub="5.2.1"))["session environment on gpu01"]
    assert other.outcome == Outcome.FAIL and "jupyterhub==6.1.2" in other.fix
    broken = verdicts(answer(env_error="ModuleNotFoundError: No module named 'jupyterlab'"))
    assert broken["session environment on gpu01"].outcome == Outcome.FAIL


def test_a_node_without_srun_is_a_warning() -> None:
    missing = verdicts(answer(srun=False))["srun on gpu01"]
    assert missing.outcome == Outcome.WARN and "jobs of more than one node" in missing.detail
    assert "slurm-client" in missing.fix
    assert "srun on gpu01" not in verdicts(answer(srun=True))


def test_no_node_to_probe_is_a_warning_not_a_pass() -> None:
    checks = probe_verdicts("gpu", {}, hub_address="h:1", hub_addresses={}, hub_version="6.1")
    assert [c.outcome for c in checks] == [Outcome.WARN]


def test_certificates_warn_a_month_ahead_and_fail_once_expired() -> None:
    now = datetime(2026, 11, 25, tzinfo=UTC)
    assert certificate_verdict("c", now + timedelta(days=90), now, "s").outcome == Outcome.PASS
    assert certificate_verdict("c", now + timedelta(days=10), now, "s").outcome == Outcome.WARN
    assert certificate_verdict("c", now - timedelta(days=1), now, "s").outcome == Outcome.FAIL


def test_the_summary_fails_on_a_failure_only() -> None:
    now = datetime(2026, 11, 25, tzinfo=UTC)
    warn = certificate_verdict("c", now + timedelta(days=10), now, "s")
    assert summary([warn]) == ("1 check: 0 failed, 1 warning", True)
    fail = certificate_verdict("c", now - timedelta(days=1), now, "s")
    assert summary([warn, fail])[1] is False
