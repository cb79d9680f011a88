"""A workaround for CPython's ssl module on OpenSSL 3.4 and newer: a TLS read or write on a
healthy connection can fail with BrokenPipeError because an earlier failure of another connection
in the same thread left an entry in OpenSSL's per-thread error queue, which `SSL_get_error()`
then reads as this call's (python/cpython#148594, open as of 2026-11; gh-127257 made such
entries an OSError). Python 3.11 with OpenSSL 3.0 (Debian 12) does not show it.

Seen on Debian 13 (Python 3.13.5, OpenSSL 3.5), where every connection of the product is TLS: a
session's Dask client lost its scheduler in 6 of 10 cluster starts ("CommClosedError ...
identity ... BrokenPipeError" on a comm the scheduler had just answered); with the queue
cleared before each read and write, 7 of 7 started (docs/reference/support.md). The hub's
proxy met "503 socket hang up" in 1 of 13 browser spawns there, likely the same (not proven).

`install()` makes each I/O method of `ssl.SSLSocket` clear the calling thread's queue first, as
OpenSSL's documentation of `SSL_get_error` asks of every caller ("The current thread's error
queue must be empty before the TLS/SSL I/O operation is attempted"). Standard library only: it
runs in the hub, in the session's server, its kernels and Dask's workers alike. It does nothing
where OpenSSL is older than 3.4 or libcrypto cannot be loaded, and nothing a second time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import ssl
from collections.abc import Callable
from typing import Any

# SSLSocket's methods that end in SSL_read, SSL_write, SSL_do_handshake or SSL_shutdown.
IO_METHODS = ("recv", "recv_into", "read", "send", "sendall", "write", "do_handshake", "unwrap")
_MARK = "_gpuportal_clears_ssl_errors"


def needed(version: tuple[int, ...] = ssl.OPENSSL_VERSION_INFO) -> bool:
    return tuple(version[:2]) >= (3, 4)


def _clear_errors() -> Callable[[], object] | None:
    name = ctypes.util.find_library("crypto")
    if name is None:
        return None
    try:
        # The library _ssl is linked against: dlopen hands back the same one, with its queue.
        clear: Callable[[], object] = ctypes.CDLL(name).ERR_clear_error
    except (OSError, AttributeError):
        return None
    return clear


def _clearing(method: Callable[..., Any], clear: Callable[[], object]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: ssl.SSLSocket, *args: Any, **kwargs: Any) -> Any:
        clear()
        return method(self, *args, **kwargs)

    setattr(call, _MARK, True)
    return call


def install(version: tuple[int, ...] = ssl.OPENSSL_VERSION_INFO) -> bool:
    """Clear OpenSSL's error queue before each TLS operation of this process, where needed.
    True when the methods clear it (now or from an earlier call)."""
    if getattr(ssl.SSLSocket.recv_into, _MARK, False):
        return True
    if not needed(version):
        return False
    clear = _clear_errors()
    if clear is None:
        return False
    for name in IO_METHODS:
        setattr(ssl.SSLSocket, name, _clearing(getattr(ssl.SSLSocket, name), clear))
    return True


def dask_setup(server: object) -> None:
    """As a Dask preload of the workers and their nannies (gpuportal_session.dask_setup)."""
    install()
