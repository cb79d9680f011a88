"""Whether a path only root can change: an environment that other users' sessions and jobs run.

A portal admin sets an environment's prefix (a venv, a conda environment) or image (an archive,
an Apptainer or Pyxis image file) and offers it on profiles that other users spawn; their
sessions then run its Python and its JupyterLab as them. A prefix in the admin's own home, or
any folder another account can write, is code of that account's in everyone's session: the
admin could enter a user's session sideways. So the path, once its links are followed, and
every folder above it must belong to root and be writable by nobody else. A folder others may
write is allowed only with the sticky bit (/tmp), where they can add entries but not replace
root's. Read as the portal's account on the login host, which sees the software areas as the
nodes do (the podman archive's check, gpuportal_adapters.image_archive, asks the same).
"""

from __future__ import annotations

import os
import pwd
import stat


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def not_root_owned(path: str, *, inside: tuple[str, ...] = ("bin",)) -> str | None:
    """What lets an account other than root change what `path` holds, in words; None if
    nothing does. The folders named in `inside` (a prefix's bin, where python and jupyter are)
    are checked too where they exist."""
    try:
        real = os.path.realpath(path, strict=True)
    except FileNotFoundError:
        return (
            f"{path} does not exist on the login host (it must see the software areas as the "
            "nodes do)"
        )
    except OSError as error:
        return f"{path} cannot be looked at by the portal's account ({error.strerror})"
    shown = path if real == path else f"{path} (a link to {real})"
    for below in inside:
        candidate = os.path.join(real, below)
        if os.path.isdir(candidate):
            problem = _entry_problem(candidate, shown, last=True)
            if problem:
                return problem
    current, last = real, True
    while True:
        problem = _entry_problem(current, shown, last=last)
        if problem:
            return problem
        if current == "/":
            return None
        current, last = os.path.dirname(current), False


def _entry_problem(entry: str, shown: str, *, last: bool) -> str | None:
    try:
        info = os.lstat(entry)
    except OSError as error:
        return f"{entry} cannot be looked at by the portal's account ({error.strerror})"
    if info.st_uid != 0:
        return (
            f"{shown}: {entry} belongs to {_owner(info.st_uid)}, not root; an environment "
            "other users run must be root's (install it as root, e.g. under /opt)"
        )
    others_write = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    sticky_folder = stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX
    if others_write and (last or not sticky_folder):
        return (
            f"{shown}: {entry} can be written by others than root "
            f"(mode {stat.filemode(info.st_mode)}): chmod go-w {entry}"
        )
    return None
