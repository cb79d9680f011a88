"""The tag (sbatch --comment) that names who a job belongs to.

A job is found by its tag, not by a job id handed from one object to the next: a restarted hub,
a retry after sbatch timed out, and "stop" all ask Slurm for the jobs carrying the tag. The tag
holds names only (never a secret): any user may read a job's comment with scontrol.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "gpuportal"
_NAME = re.compile(r"[A-Za-z0-9._@+-]*")


@dataclass(frozen=True)
class SessionTag:
    """A notebook session: hub, user and server name ("" for the default server)."""

    hub: str
    user: str
    server: str

    def __str__(self) -> str:
        return f"{PREFIX}:session:{self.hub}:{self.user}:{self.server}"


@dataclass(frozen=True)
class BatchTag:
    """A portal batch job: hub, user and the portal's record key for it."""

    hub: str
    user: str
    key: str

    def __str__(self) -> str:
        return f"{PREFIX}:job:{self.hub}:{self.user}:{self.key}"


@dataclass(frozen=True)
class DaskTag:
    """A Dask worker job started from a notebook session (hub, user and the session's server
    name): it ends with that session (the hub's stop cancels it) and is listed with the user's
    jobs."""

    hub: str
    user: str
    server: str

    def __str__(self) -> str:
        return f"{PREFIX}:dask:{self.hub}:{self.user}:{self.server}"


def _check(*names: str) -> None:
    for name in names:
        if not _NAME.fullmatch(name):
            raise ValueError(f"{name!r} cannot go into a job tag (letters, digits, ._@+- only)")


def session_tag(*, hub: str, user: str, server: str) -> SessionTag:
    _check(hub, user, server)
    if not hub or not user:
        raise ValueError("a session tag needs a hub and a user")
    return SessionTag(hub, user, server)


def dask_tag(*, hub: str, user: str, server: str) -> DaskTag:
    _check(hub, user, server)
    if not hub or not user:
        raise ValueError("a Dask tag needs a hub and a user")
    return DaskTag(hub, user, server)


def batch_tag(*, hub: str, user: str, key: str) -> BatchTag:
    _check(hub, user, key)
    if not hub or not user or not key:
        raise ValueError("a batch tag needs a hub, a user and a key")
    return BatchTag(hub, user, key)


def parse_tag(comment: str) -> SessionTag | BatchTag | DaskTag | None:
    """The tag in a job's comment, or None for a job the portal did not submit."""
    parts = comment.strip().split(":")
    if len(parts) != 5 or parts[0] != PREFIX:
        return None
    _, kind, hub, user, rest = parts
    try:
        if kind == "session":
            return session_tag(hub=hub, user=user, server=rest)
        if kind == "job":
            return batch_tag(hub=hub, user=user, key=rest)
        if kind == "dask":
            return dask_tag(hub=hub, user=user, server=rest)
    except ValueError:
        return None
    return None
