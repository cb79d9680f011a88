"""A user's processes on this machine, not in a Debian root beside it.

`make test` runs Debian roots beside this machine (deploy/local/debian_root.sh: the Debian 13
tests, the fresh machines), whose processes belong to users of the same names and uids and
which this machine's process table shows too: a test that looks for, or ends, a user's
processes leaves theirs alone.
"""

from __future__ import annotations

import glob
import os
import subprocess

# For pgrep and pkill: only processes in this process's pid namespace (a root's have their own).
HERE = ("--ns", str(os.getpid()), "--nslist", "pid")
# The roots deploy/local/debian_root.sh holds (its TOP folders are /var/lib/portal-NAME).
ROOTS_BESIDE = "/var/lib/portal-*/root"


def ps_of(user: str) -> list[str]:
    """`ps -u USER -o pid=,args=`'s lines, less the processes of a Debian root beside; those of
    containers stay (a session's container is the user's too)."""
    lines = subprocess.run(
        ["ps", "-ww", "-u", user, "-o", "pid=,args="], capture_output=True, text=True
    ).stdout.splitlines()
    return [line for line in lines if line.split() and not _in_a_root(line.split()[0])]


def _in_a_root(pid: str) -> bool:
    try:
        root = os.readlink(f"/proc/{pid}/root")
    except OSError:
        return True  # it ended meanwhile
    return any(
        root == beside or root.startswith(beside + "/") for beside in glob.glob(ROOTS_BESIDE)
    )
