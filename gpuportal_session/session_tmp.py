"""A session's private folder in the node's /tmp, and the sweep of those killed sessions left.

Each session (JupyterLab, a shared TensorBoard) makes one folder of random name, 0700, for its
sockets and its TensorBoards' records (records_dir). A session that ends normally
removes it (atexit, run on scancel's SIGTERM). One that was killed (SIGKILL after the time
limit's grace, a node that failed) cannot, and Slurm leaves a node's /tmp as the job left it;
so each folder holds a lock for as long as its process lives, and the next session of the same
user on that node removes every folder of theirs whose lock nobody holds.

A lock, not a pid: the kernel releases it when the process dies, however it dies, and a pid may
have been given to another process since.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

LOCK = ".in-use"
# A folder without a lock was made by an older version, or is being set up right now by a
# session that starts beside this one (between mkdtemp and the lock): left alone while young.
SETTING_UP_S = 60.0
_held: list[int] = []  # the open lock files: closing one would release its folder


def prefix(uid: int | None = None) -> str:
    return f"gpuportal-{os.getuid() if uid is None else uid}-"


def fresh_runtime_dir(root: Path = Path("/tmp")) -> str:
    """A new private folder for this process, locked while it lives and removed at its exit."""
    sweep_left_behind(root)
    path = tempfile.mkdtemp(prefix=prefix(), dir=root)
    fd = os.open(os.path.join(path, LOCK), os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _held.append(fd)
    atexit.register(shutil.rmtree, path, True)
    return path


def records_dir(runtime: str) -> str:
    """Where the session's TensorBoards keep their records (TensorBoard's `.tensorboard-info`,
    under the temporary folder it is given): in the session's private folder, not the node's
    /tmp, where TensorBoard makes that folder world-writable and where a later session reused
    an ended one's dead instance. Only TensorBoard is pointed here (records_in): the session's
    own TMPDIR stays the site's, which jobs it submits to other nodes inherit."""
    path = os.path.join(runtime, "tmp")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


@contextlib.contextmanager
def records_in(folder: str | None) -> Iterator[None]:
    """`tempfile` (and so TensorBoard's notebook manager) uses folder within this block."""
    if not folder:
        yield
        return
    before = tempfile.tempdir
    tempfile.tempdir = folder
    try:
        yield
    finally:
        tempfile.tempdir = before


def sweep_left_behind(root: Path, uid: int | None = None) -> list[Path]:
    """Remove this user's folders under root whose session is gone; return what was removed."""
    uid = os.getuid() if uid is None else uid
    removed = []
    for folder in root.glob(f"{prefix(uid)}*"):
        try:
            info = folder.lstat()
        except OSError:
            continue
        # Never follow a link another user put there, nor touch a folder that is not ours.
        if folder.is_symlink() or not folder.is_dir() or info.st_uid != uid:
            continue
        if _in_use(folder, info.st_mtime):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _in_use(folder: Path, made: float) -> bool:
    try:
        fd = os.open(folder / LOCK, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return time.time() - made < SETTING_UP_S
    except OSError:
        return True  # cannot tell: keep it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the lock if we took it
    return False
