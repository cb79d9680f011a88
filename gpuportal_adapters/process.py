"""Process plumbing shared by the hub-managed services."""

from __future__ import annotations

import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have the kernel send `sig` to this process when its parent (the hub) dies.

    The hub stops its managed services itself when it stops cleanly; after a `kill -9` it
    cannot, and the services would run on with parent 1 beside the next hub's own (holding its
    port, answering for it). Linux only; elsewhere this does nothing.
    """
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), sig)
