"""A throwaway local socket server for unit tests that need a real connection."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable


def accept_each(listener: socket.socket, handle: Callable[[socket.socket], None]) -> None:
    """Hands each connection the listener accepts to `handle` (which closes it), in a daemon
    thread, until the listener is closed."""

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            handle(conn)

    threading.Thread(target=serve, daemon=True).start()
