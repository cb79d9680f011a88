"""What the benchmarks of issue 11 share: users of their own, a count of the Slurm commands the
hub and the portal run, and slurmctld's own count of RPCs per user (sdiag).

Bench users (bench001, ...) are made in LDAP (group ds, so they may log in) and as Linux users,
and removed afterwards, whatever happens in between.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from tests.cluster import LDAPS_URI
from tests.hubproc import Hub

STATE = Path(os.environ.get("PORTAL_STATE", "/var/lib/portal-local"))
LDAPS = LDAPS_URI
ADMIN_DN = "cn=admin,dc=example,dc=org"
DS_GID = 10100
FIRST_UID = 20001
SLURM_COMMANDS = ("sbatch", "squeue", "sinfo", "scancel", "scontrol")


def password_of(user: str) -> str:
    return f"{user}-bench"


def _ldap(tool: str, ldif: str) -> None:
    env = dict(os.environ, LDAPTLS_CACERT=str(STATE / "ldap-ca.pem"))
    rootpw = (STATE / "ldap" / "rootpw").read_text().strip()
    subprocess.run(
        [tool, "-x", "-H", LDAPS, "-D", ADMIN_DN, "-w", rootpw, "-c"],
        input=ldif,
        text=True,
        env=env,
        check=False,  # -c: an entry left by an interrupted run must not stop the rest
        capture_output=True,
        timeout=60,
    )


def _person(user: str, uid: int) -> str:
    hashed = subprocess.run(
        ["slappasswd", "-s", password_of(user)], capture_output=True, text=True, check=True
    ).stdout.strip()
    return (
        f"dn: uid={user},ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\n"
        f"objectClass: posixAccount\nuid: {user}\ncn: Bench {user}\nsn: {user}\n"
        f"uidNumber: {uid}\ngidNumber: {DS_GID}\nhomeDirectory: /home/{user}\n"
        f"loginShell: /bin/bash\nuserPassword: {hashed}\n\n"
    )


def _members(users: list[str], change: str) -> str:
    lines = "".join(f"{change}: memberUid\nmemberUid: {user}\n-\n" for user in users)
    return f"dn: cn=ds,ou=groups,dc=example,dc=org\nchangetype: modify\n{lines}\n"


def remove_jobs(users: list[str]) -> None:
    """Cancel every job of the users and wait until Slurm lists none (their homes are in use
    until then). A hub stopped by the bench leaves its jobs running, as a real hub does."""
    for user in users:
        subprocess.run(["scancel", f"--user={user}"], capture_output=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        listed = subprocess.run(
            ["squeue", "-h", "-o", "%u"], capture_output=True, text=True
        ).stdout.split()
        if not set(listed) & set(users):
            return
        time.sleep(1)


def _slurm_associations(users: list[str], change: str) -> None:
    """Slurm accounting refuses jobs of users it does not know: the bench users get their own
    account, `bench`, outside group ds's GPU limit (deploy/local/cluster.sh sets it)."""
    if change == "add":
        subprocess.run(["sacctmgr", "-i", "add", "account", "bench"], capture_output=True)
        subprocess.run(
            ["sacctmgr", "-i", "add", "user", ",".join(users), "Account=bench"],
            capture_output=True,
            check=True,
        )
    else:
        subprocess.run(["sacctmgr", "-i", "delete", "user", ",".join(users)], capture_output=True)


@contextlib.contextmanager
def bench_users(
    count: int, prefix: str = "bench", first_uid: int = FIRST_UID
) -> Iterator[list[str]]:
    """bench001 ... benchNNN (PREFIX001 ...), in LDAP, Linux and Slurm for the duration of the
    block (tests/site takes site001 for its smoke, apart from the test lanes' users)."""
    users = [f"{prefix}{i:03d}" for i in range(1, count + 1)]
    try:
        for index, user in enumerate(users):
            if subprocess.run(["id", user], capture_output=True).returncode != 0:
                subprocess.run(
                    ["useradd", "-m", "-u", str(first_uid + index), "-g", "ds", user], check=True
                )
            # 0700 and there, also after an interrupted run that left the user but not the home.
            subprocess.run(
                ["install", "-d", "-o", user, "-g", "ds", "-m", "0700", f"/home/{user}"],
                check=True,
            )
        _ldap("ldapadd", "".join(_person(u, first_uid + i) for i, u in enumerate(users)))
        _ldap("ldapmodify", _members(users, "add"))
        _slurm_associations(users, "add")
        yield users
    finally:
        remove_jobs(users)
        _slurm_associations(users, "delete")
        _ldap("ldapmodify", _members(users, "delete"))
        _ldap("ldapdelete", "".join(f"uid={u},ou=people,dc=example,dc=org\n" for u in users))
        for user in users:
            subprocess.run(["userdel", "-r", user], capture_output=True)


class CommandLog:
    """A folder of wrappers for the Slurm commands that log each call, then run the real one.

    A hub started with PORTAL_SLURM_BIN_DIR=<folder> (and its portal) runs its Slurm commands
    through them, also those run as users through sudo.
    """

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="slurm-count-"))
        self.folder.chmod(0o755)
        self.log = self.folder / "calls.log"
        self.log.touch()
        self.log.chmod(0o666)  # users' sbatch and scancel append too
        for name in SLURM_COMMANDS:
            real = subprocess.run(["which", name], capture_output=True, text=True).stdout.strip()
            wrapper = self.folder / name
            wrapper.write_text(
                f'#!/bin/sh\necho "$(date +%s.%N) {name} $*" >> {self.log}\nexec {real} "$@"\n'
            )
            wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def calls(self, since: float, until: float) -> list[tuple[float, str, str]]:
        """(time, command, arguments) of each call in [since, until] (time.time() clock)."""
        found = []
        for line in self.log.read_text().splitlines():
            when, name, *args = [*line.split(" ", 2), ""]
            if since <= float(when) <= until:
                found.append((float(when), name, args[0]))
        return found


def is_capacity_query(name: str, args: str) -> bool:
    """One look at the cluster for the spawn page (gpuportal_core.capacity: sinfo --Node, then
    squeue)."""
    return (name == "sinfo" and "--Node" in args) or (
        name == "squeue" and "--states=RUNNING,PENDING" in args
    )


_USER_RPC = re.compile(r"^\s+(\S+)\s+\(\s*(\d+)\)\s+count:(\d+)")


def rpcs_by_user() -> Counter[str]:
    """slurmctld's count of RPCs per user since its start (sdiag)."""
    return _sdiag_counts("Remote Procedure Call statistics by user")


def rpcs_by_type() -> Counter[str]:
    """slurmctld's count of RPCs per message type (REQUEST_JOB_INFO, ...) since its start."""
    return _sdiag_counts("Remote Procedure Call statistics by message type")


def _sdiag_counts(title: str) -> Counter[str]:
    out = subprocess.run(["sdiag"], capture_output=True, text=True, check=True).stdout
    section = out.split(title, 1)[-1].split("Remote Procedure Call statistics by", 1)[0]
    counts: Counter[str] = Counter()
    for line in section.splitlines():
        match = _USER_RPC.match(line)
        if match:
            counts[match.group(1)] = int(match.group(3))
    return counts


def rpcs_per_minute(seconds: float) -> Counter[str]:
    """RPCs per user and minute over the next `seconds` (whatever runs meanwhile)."""
    before = rpcs_by_user()
    time.sleep(seconds)
    after = rpcs_by_user()
    return Counter({u: round((after[u] - before[u]) * 60 / seconds) for u in after})


def ready_count(hub: Hub, users: list[str]) -> int:
    """How many of the users' default servers the hub reports ready."""
    admin = hub.login("carol")
    found = 0
    for user in users:
        server = hub.api(admin, "GET", f"/users/{user}").json().get("servers", {}).get("")
        found += bool(server and server.get("ready"))
    return found


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]
