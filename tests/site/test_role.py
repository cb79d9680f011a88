"""The Ansible role (deploy/ansible, `gpuportal.site.portal`) as a site runs it, proven from
nothing on a site of roots (tests/site/conftest.py), with nginx in front of the hub
(tests/site/nginx.yml):

1. the role's run, which ends with the preflight, all of it passing;
2. a second run, which changes nothing (`changed=0` on every host);
3. the site's Prometheus given scrape jobs whose targets answer (the hub's and the portal's
   metrics with the token beside them, the nodes' exporters);
4. the user's smoke on the hub the role installed: single sign-on with a password and a TOTP
   code, a 1-GPU session on a site node to JupyterLab's file browser, a 2-node job across the
   two nodes to its end, Stop;
5. a run with a directory CA that does not verify the site's LDAP, refused with words by the
   preflight at its end.

tests/make_test.sh runs tests/site beside the lanes with PORTAL_SITE_TEST=1; never with them.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import requests
import yaml

from tests.site.conftest import (
    CA,
    FRONT,
    HOSTS,
    NGINX,
    NODES,
    SITE_ROOT,
    on_host,
    playbook,
    preflight_summary,
    recap,
    running_nodes,
    sign_in,
    step,
)
from tests.smoke import api_session, start_one_gpu_session, two_nodes_then_stop


def test_the_role_installs_the_portal_and_its_preflight_passes(site: None) -> None:
    with step("the role's first run, the preflight at its end"):
        output = playbook("first-run.log", NGINX)
    print(f"[site] preflight: {preflight_summary(output)}")
    counts = recap(output)
    assert set(counts) == set(HOSTS) and all(c["failed"] == 0 for c in counts.values()), counts


def test_a_second_run_changes_nothing(site: None) -> None:
    with step("the role's second run"):
        output = playbook("second-run.log", NGINX)
    changed = {host: counts["changed"] for host, counts in recap(output).items()}
    assert changed == dict.fromkeys(HOSTS, 0), output[-6000:]


def test_the_sites_prometheus_gets_scrape_jobs_whose_targets_answer(site: None) -> None:
    scrape = "/etc/gpuportal/prometheus/gpuportal.yml"
    jobs = yaml.safe_load(on_host("site-login", "cat", scrape))["scrape_configs"]
    assert [job["job_name"] for job in jobs] == [
        "gpuportal-hub",
        "gpuportal-portal",
        "gpuportal-nodes",
    ]
    token_file = jobs[0]["authorization"]["credentials_file"]
    assert on_host("site-login", "stat", "-c", "%a %U %G", token_file).split() == [
        "640",
        "root",
        "prometheus",
    ]
    token = on_host("site-login", "cat", token_file).strip()
    for job in jobs[:2]:
        metrics = requests.get(
            f"{FRONT}{job['metrics_path']}",
            headers={"Authorization": f"Bearer {token}"},
            verify=str(CA),
            timeout=30,
        )
        assert metrics.status_code == 200 and "# HELP" in metrics.text, job["job_name"]
    assert jobs[2]["static_configs"][0]["targets"] == [f"{node}:9100" for node in NODES]
    for node in NODES:
        address = subprocess.run(
            ["bash", str(SITE_ROOT), node, "addr"], capture_output=True, text=True, check=True
        ).stdout.strip()
        exported = requests.get(f"http://{address}:9100/metrics", timeout=30)
        assert "node_cpu_seconds_total" in exported.text, node


def test_a_user_signs_in_starts_a_session_and_runs_a_two_node_job(
    site: None, user: str, page: Any
) -> None:
    with step("single sign-on through nginx: the hub's button, the password, the TOTP code"):
        sign_in(page, user, FRONT)
    with step("Start with 1 GPU to JupyterLab's file browser, on a site node"):
        start_one_gpu_session(page, FRONT, user)
    nodes = running_nodes(user)
    assert nodes and set(nodes) <= set(NODES), nodes
    api = api_session(page, FRONT, user, verify=str(CA))
    two_nodes_then_stop(api, FRONT, user, NODES, step)


def test_a_directory_it_cannot_verify_is_refused_with_words(site: None, tmp_path: Path) -> None:
    """The role reads the site's LDAP and refuses what it cannot use: here a CA that did not
    sign the directory's certificate (last: it leaves the site's hub refusing sign-ins)."""
    other = tmp_path / "another-ca.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "1", "-subj", "/CN=Another CA", "-keyout", str(tmp_path / "key"),
         "-out", str(other)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    with step("a run with a directory CA that does not verify it"):
        output = playbook("wrong-ca.log", NGINX, f"portal_ldap_ca_src={other}", succeeds=False)
    refused = re.search(r"FAIL +LDAP: (.*)", output)
    assert refused, output[-4000:]
    assert "PORTAL_LDAP_CA_FILE" in output, output[-4000:]
    print(f"[site] refused: LDAP: {refused.group(1)[:160]}")
