"""A kernel in a user's running JupyterLab, driven as the notebook page drives it: started over
the REST API, then code sent and its result read over the kernel's websocket (Jupyter's
messaging protocol, JSON frames), through the hub's proxy as a browser's would go.

This is what JupyterHub's load testers do (start a kernel, run `5 * 4`, read `20`).
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from typing import Any

import requests
import websocket  # websocket-client: what jupyter_server itself depends on

RECONNECTS = 1


class KernelError(Exception):
    """The kernel could not be started, reached or did not answer `20`."""


class Kernel:
    def __init__(self, hub_url: str, user: str, token: str) -> None:
        self.user = user
        self._base = f"{hub_url}/user/{user}/api/kernels"
        self._headers = {"Authorization": f"token {token}"}
        self._session = uuid.uuid4().hex
        answer = requests.post(self._base, headers=self._headers, json={}, timeout=60)
        if answer.status_code != 201:
            raise KernelError(f"kernel start: HTTP {answer.status_code}")
        self.kernel_id = answer.json()["id"]
        channels = f"{self._base}/{self.kernel_id}/channels".replace("http", "ws", 1)
        # Connected as JupyterLab connects: a socket that does not open is tried again (the
        # lab reconnects by itself), once here; `reconnects` says how often that was needed.
        self.reconnects = 0
        while True:
            try:
                self._socket = websocket.create_connection(
                    channels,
                    header=[f"Authorization: token {token}"],
                    timeout=60,
                    enable_multithread=True,
                )
                break
            except (OSError, websocket.WebSocketException) as error:
                if self.reconnects >= RECONNECTS:
                    raise KernelError(f"websocket: {type(error).__name__}") from None
                self.reconnects += 1
        # Read all the time, as a browser's page does: reading answers the server's pings.
        # Jupyter Server pings every 30 s and closes a socket with no pong for 90 s; read only
        # at each round trip (about once a minute), 30 of 100 sockets were closed in 5 minutes.
        self._messages: queue.Queue[dict[str, Any] | Exception] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                frame = self._socket.recv()
                self._messages.put(json.loads(frame))
            except (OSError, ValueError, websocket.WebSocketException) as error:
                self._messages.put(error)
                return

    def _execute_request(self, code: str) -> dict[str, Any]:
        return {
            "header": {
                "msg_id": uuid.uuid4().hex,
                "username": self.user,
                "session": self._session,
                "msg_type": "execute_request",
                "version": "5.3",
            },
            "parent_header": {},
            "metadata": {},
            "content": {"code": code, "silent": False, "store_history": False},
            "channel": "shell",
        }

    def round_trip(self, code: str = "5 * 4", expect: str = "20") -> float:
        """Seconds from sending the code to reading its result; KernelError if it is not
        `expect`."""
        begun = time.monotonic()
        got = self.result(code)
        if got != expect:
            raise KernelError(f"kernel answered {got!r}")
        return time.monotonic() - begun

    def result(self, code: str, timeout: float = 60) -> str:
        """What the code's last expression shows (text/plain); KernelError for an error, or no
        answer within timeout seconds."""
        request = self._execute_request(code)
        deadline = time.monotonic() + timeout
        try:
            self._socket.send(json.dumps(request))
            while True:
                message = self._messages.get(timeout=max(0.1, deadline - time.monotonic()))
                if isinstance(message, Exception):
                    raise message
                if message.get("parent_header", {}).get("msg_id") != request["header"]["msg_id"]:
                    continue
                kind = message.get("msg_type") or message.get("header", {}).get("msg_type")
                if kind == "execute_result":
                    return str(message["content"]["data"].get("text/plain"))
                if kind == "error":
                    content = message["content"]
                    raise KernelError(
                        f"kernel error {content.get('ename')}: {content.get('evalue')}"
                    )
        except queue.Empty:
            raise KernelError(f"no answer within {timeout:.0f} s") from None
        except (OSError, ValueError, websocket.WebSocketException) as error:
            raise KernelError(f"websocket: {type(error).__name__}") from None

    def close(self) -> None:
        """The socket closed and the kernel shut down (as closing the notebook and its kernel)."""
        self._socket.close()
        requests.delete(f"{self._base}/{self.kernel_id}", headers=self._headers, timeout=60)
