"""`gpuportal-admin preflight`: what a site set up wrong, found before a spawn times out.

Run as root on the hub host, with the hub's PORTAL_* settings in the environment. It looks with
the hub's own eyes: the Slurm client and munge, slurmdbd and the service account's operator
level, the profiles' partitions against the cluster, the sudo rule, LDAP over TLS, the internal
TLS files, the portal's database (read as the service account, whose files they are), the public
certificate, and from each idle node of each profile's partition, an srun that calls the hub's
API back, says how the node names itself and whether the session environment starts there.
The verdicts are gpuportal_core.preflight's.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from gpuportal_adapters.directory import DirectorySettings, DirectoryUnavailable, groups_present
from gpuportal_adapters.settings import HubSettings
from gpuportal_core.preflight import (
    Check,
    compare_sudo_rules,
    failed,
    passed,
    probe_verdicts,
    sudo_rules,
)
from gpuportal_core.sudo_rules import listed_rules
from gpuportal_core.words import count
from gpuportal_spawner.admin_command import program_paths
from gpuportal_spawner.preflight_certificates import check_certificates
from gpuportal_spawner.preflight_sso import check_sso

TIMEOUT = 30
# What each probed node runs (its system python3): the hub's API called back, its own
# addresses, whether it has srun, and the session environment's versions, as one JSON line.
PROBE = r"""
import json, os, shutil, socket, subprocess, sys
hub, port, python = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seen = {"node": os.environ.get("SLURMD_NODENAME", socket.gethostname())}
seen["srun"] = shutil.which("srun") is not None
try:
    socket.create_connection((hub, port), timeout=5).close()
except OSError as error:
    seen["hub_error"] = str(error) or type(error).__name__
own = subprocess.run(["hostname", "-I"], capture_output=True, text=True)
seen["addresses"] = own.stdout.split()
versions = "import jupyterhub, jupyterlab; print(jupyterhub.__version__, jupyterlab.__version__)"
try:
    env = subprocess.run([python, "-c", versions], capture_output=True, text=True, timeout=120)
    if env.returncode:
        seen["env_error"] = (env.stderr.strip().splitlines() or ["exit %d" % env.returncode])[-1]
    else:
        seen["jupyterhub"], seen["jupyterlab"] = env.stdout.split()
except (OSError, subprocess.TimeoutExpired) as error:
    seen["env_error"] = str(error)
print(json.dumps(seen))
"""


def _run(
    argv: list[str], timeout: float = TIMEOUT, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)  # type: ignore[call-overload,no-any-return]
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"no answer within {timeout:g} s")
    except OSError as error:
        return subprocess.CompletedProcess(argv, 127, "", str(error))


def _said(result: subprocess.CompletedProcess[str]) -> str:
    text = (result.stderr.strip() or result.stdout.strip()).splitlines()
    return text[-1] if text else f"exit {result.returncode}"


def _slurm(settings: HubSettings, program: str) -> str:
    return os.path.join(settings.slurm_bin_dir, program) if settings.slurm_bin_dir else program


def check_munge() -> Check:
    encoded = _run(["munge", "-n"])
    decoded = _run(["unmunge"], input=encoded.stdout) if encoded.returncode == 0 else encoded
    if decoded.returncode != 0:
        return failed(
            "munge",
            f"no credential: {_said(decoded)}",
            "start munged with the cluster's key (systemctl start munge); Slurm needs it",
        )
    return passed("munge", "munged makes and checks credentials")


def check_slurm(settings: HubSettings) -> list[Check]:
    version = _run([_slurm(settings, "sinfo"), "--version"])
    if version.returncode != 0:
        return [
            failed(
                "Slurm client",
                f"sinfo does not run: {_said(version)}",
                "install the Slurm client (slurm-client) or set PORTAL_SLURM_BIN_DIR",
            )
        ]
    ping = _run([_slurm(settings, "scontrol"), "ping"])
    if ping.returncode != 0 or "UP" not in ping.stdout:
        return [
            failed(
                "slurmctld",
                f"not reachable: {_said(ping)}",
                "start slurmctld, or point SLURM_CONF at the cluster's slurm.conf",
            )
        ]
    return [passed("Slurm client", f"{version.stdout.strip()}, slurmctld answers")]


def check_accounting(settings: HubSettings) -> list[Check]:
    clusters = _run([_slurm(settings, "sacctmgr"), "-n", "-P", "show", "cluster", "format=cluster"])
    if clusters.returncode != 0:
        return [
            failed(
                "slurmdbd",
                f"sacctmgr gets no answer: {_said(clusters)}",
                "start slurmdbd; without it Extend, group limits and job history do not work",
            )
        ]
    user = settings.service_user
    level = _run(
        [_slurm(settings, "sacctmgr"), "-n", "-P", "show", "user", user, "format=adminlevel"]
    ).stdout.strip()
    operator = (
        passed("Slurm operator", f"{user} is an Operator (Extend raises time limits)")
        if level in ("Operator", "Administrator")
        else failed(
            "Slurm operator",
            f"{user} is {level or 'not a Slurm user'}: Extend will be refused",
            f"sacctmgr add user {user} Account=portal-service AdminLevel=Operator "
            "(in an account with MaxSubmitJobs=0)",
        )
    )
    return [passed("slurmdbd", f"answers ({clusters.stdout.split()[0]})"), operator]


def check_sudo(settings: HubSettings) -> Check:
    listing = _run(
        ["sudo", "-n", "-l", "-U", settings.service_user], env={**os.environ, "COLUMNS": "4000"}
    )
    if listing.returncode != 0 and "not allowed" not in listing.stdout:
        return failed("sudo rule", f"sudo -l says: {_said(listing)}", "run the preflight as root")
    expected = listed_rules(user_groups=settings.user_groups, programs=program_paths(settings))
    return compare_sudo_rules(expected, sudo_rules(listing.stdout), settings.service_user)


def check_ldap(settings: HubSettings) -> Check:
    directory = DirectorySettings(
        uri=settings.ldap_uri,
        user_base=settings.ldap_user_base,
        group_base=settings.ldap_group_base,
        ca_file=settings.ldap_ca_file or f"{settings.state}/ldap-ca.pem",
    )
    try:
        found = groups_present(directory, list(settings.user_groups))
    except DirectoryUnavailable as error:
        return failed(
            "LDAP",
            str(error),
            "check PORTAL_LDAP_URI (ldaps://), PORTAL_LDAP_CA_FILE and the bases",
        )
    missing = sorted(set(settings.user_groups) - found)
    if missing:
        return failed(
            "LDAP",
            f"no group {', '.join(missing)} under {settings.ldap_group_base}",
            "fix PORTAL_USER_GROUPS or PORTAL_LDAP_GROUP_BASE",
        )
    return passed(
        "LDAP", f"{settings.ldap_uri} over verified TLS, groups {', '.join(sorted(found))}"
    )


def _as_service(settings: HubSettings, code: str) -> subprocess.CompletedProcess[str]:
    """Python code as the service account (its files stay its own: nothing made as root)."""
    user = settings.service_user
    return _run(
        ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups",
         sys.executable, "-c", code],
        timeout=60, cwd="/",
    )  # fmt: skip


def check_portal(settings: HubSettings) -> tuple[list[Check], list[dict[str, object]]]:
    """The portal's database and migration level, and its profiles (read as the account)."""
    url = settings.database_url or f"sqlite:///{settings.hub_state}/portal.db"
    code = f"""
import json
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from gpuportal_portal.db import alembic_config, make_engine
from gpuportal_portal import crud
from sqlalchemy.orm import Session
url = {url!r}
engine = make_engine(url)
with engine.connect() as connection:
    current = MigrationContext.configure(connection).get_current_revision()
head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
with Session(engine) as session:
    profiles = [crud.editable_values(p) | {{"slug": p.slug}} for p in crud.list_profiles(session)]
print(json.dumps({{"current": current, "head": head, "profiles": profiles}}, default=str))
"""
    result = _as_service(settings, code)
    if result.returncode != 0:
        return [
            failed(
                "portal database",
                f"{settings.service_user} cannot read it: {_said(result)}",
                "check PORTAL_DATABASE_URL and that the database is up",
            )
        ], []
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    if seen["current"] != seen["head"]:
        check = failed(
            "portal database",
            f"at migration {seen['current']}, this version needs {seen['head']}",
            "start the portal once (it migrates itself) or alembic upgrade head",
        )
    else:
        check = passed("portal database", f"migrated to {seen['head']}")
    return [check], list(seen["profiles"])


def check_profiles(
    settings: HubSettings, profiles: list[dict[str, object]]
) -> tuple[list[Check], set[str]]:
    """Each enabled profile against the cluster's partitions (the admin page's own rules)."""
    from gpuportal_core.partitions import SINFO_FORMAT, parse_sinfo
    from gpuportal_core.slurm_time import format_runtime
    from gpuportal_portal.profile_rules import check_profile

    sinfo = _run([_slurm(settings, "sinfo"), "--noheader", f"--format={SINFO_FORMAT}"])
    if sinfo.returncode != 0:
        return [failed("profiles", f"sinfo: {_said(sinfo)}", "see the Slurm checks above")], set()
    partitions = parse_sinfo(sinfo.stdout)
    checks, used = [], set()
    for profile in profiles:
        if not profile.get("enabled", True):
            continue
        values = dict(profile)
        for key in ("default_runtime", "max_runtime"):
            seconds = values.get(key)
            if isinstance(seconds, int):
                values[key] = format_runtime(seconds)
        problems = check_profile(values, partitions)
        name = f"profile {profile['slug']}"
        if problems:
            checks.append(
                failed(
                    name,
                    "; ".join(f"{p.field}: {p.message}" for p in problems),
                    "change it on the admin page (/services/portal/admin) or in Slurm",
                )
            )
        else:
            used.add(str(values["partition"]))
            checks.append(
                passed(
                    name,
                    f"{count(int(values['gpus']), 'GPU')} on one node of partition "  # type: ignore[call-overload]
                    f"{values['partition']}",
                )
            )
    return checks, used


def probe_nodes(settings: HubSettings, partition: str) -> dict[str, str]:
    """One JSON line from each idle or mixed node of the partition: node -> its answer."""
    listing = _run(
        [_slurm(settings, "sinfo"), "-h", "-p", partition, "-t", "idle,mixed", "-o", "%n"]
    )
    nodes = sorted(set(listing.stdout.split()))
    if not nodes:
        return {}
    probe = _run(
        [
            _slurm(settings, "srun"), "-p", partition, f"--nodelist={','.join(nodes)}",
            f"--nodes={len(nodes)}", "--ntasks-per-node=1", "--cpus-per-task=1", "--mem=200M",
            "--time=2", "--immediate=30", "--job-name=gpuportal-preflight", "--quiet",
            "python3", "-c", PROBE, settings.hub_connect_ip, str(settings.hub_port + 81),
            f"{settings.session_venv}/bin/python",
        ],
        timeout=180,
    )  # fmt: skip
    answers: dict[str, str] = {}
    for line in probe.stdout.splitlines():
        try:
            answers[str(json.loads(line)["node"])] = line
        except (ValueError, KeyError, TypeError):
            continue
    for node in nodes:
        answers.setdefault(node, _said(probe) if probe.returncode else "no answer")
    return answers


def check_nodes(settings: HubSettings, partitions: set[str]) -> list[Check]:
    import jupyterhub

    hub = f"{settings.hub_connect_ip}:{settings.hub_port + 81}"
    checks: list[Check] = []
    for partition in sorted(partitions):
        answers = probe_nodes(settings, partition)
        resolved = {node: _addresses(node) for node in answers}
        checks += probe_verdicts(
            partition,
            answers,
            hub_address=hub,
            hub_addresses=resolved,
            hub_version=jupyterhub.__version__,
        )
    return checks


def _addresses(name: str) -> list[str]:
    try:
        return sorted({str(info[4][0]) for info in socket.getaddrinfo(name, None, socket.AF_INET)})
    except OSError:
        return []


def preflight(settings: HubSettings) -> list[Check]:
    checks = [check_munge(), *check_slurm(settings), *check_accounting(settings)]
    checks.append(check_sudo(settings))
    checks.append(check_ldap(settings))
    if settings.login == "sso":
        checks += check_sso(settings)
    portal, profiles = check_portal(settings)
    checks += portal
    profile_checks, partitions = check_profiles(settings, profiles)
    checks += profile_checks
    checks += check_nodes(settings, partitions)
    checks += check_certificates(settings)
    return checks
