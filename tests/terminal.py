"""A terminal of a user's running JupyterLab, driven as JupyterLab's terminal page drives it:
created over the REST API, then keystrokes sent and the screen read over its websocket
(terminado's JSON frames: ["stdin", text] out, ["stdout", text] back), through the hub's proxy.

What a user types in the session's terminal is what runs here: the same shell, its environment
and its working folder, on the session's node.
"""

from __future__ import annotations

import json
import re
import time
import uuid

import requests
import websocket  # websocket-client: what jupyter_server itself depends on

# ANSI colour and cursor sequences, so that the output reads as the user's screen does.
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


class Terminal:
    def __init__(self, hub_url: str, user: str, token: str, timeout: float = 60) -> None:
        base = f"{hub_url}/user/{user}"
        self._headers = {"Authorization": f"token {token}"}
        created = requests.post(f"{base}/api/terminals", headers=self._headers, timeout=timeout)
        created.raise_for_status()
        self.name = created.json()["name"]
        self._delete = f"{base}/api/terminals/{self.name}"
        socket_url = f"{base}/terminals/websocket/{self.name}".replace("http", "ws", 1)
        self._socket = websocket.create_connection(
            socket_url, header=[f"Authorization: token {token}"], timeout=timeout
        )
        self.run("stty -echo; PS1= PS2= PROMPT_COMMAND=")  # the answers only: no echo, no prompt

    def run(self, command: str, timeout: float = 120) -> tuple[int, str]:
        """Type one command line, as a user would, and wait for it to end: (exit code, output).

        The command's end is a line only its own end can print: the typed line holds
        `"$?"` where the printed one holds the code. On the command's own line, since a
        command may read what is typed after it (srun passes its stdin to the task).
        """
        mark = uuid.uuid4().hex[:12]
        line = f"{command}; printf '\\n%s %s\\n' {mark} \"$?\"\n"
        self._socket.send(json.dumps(["stdin", line]))
        pattern = re.compile(rf"{mark} (\d+)\n")
        screen = ""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._socket.settimeout(max(1.0, deadline - time.monotonic()))
            kind, *payload = json.loads(self._socket.recv())
            if kind != "stdout":
                continue
            screen += _ESCAPES.sub("", payload[0])
            found = pattern.search(screen)
            if found:
                return int(found.group(1)), screen[: found.start()].strip()
        raise AssertionError(f"`{command}` did not end in {timeout} s; the screen:\n{screen}")

    def close(self) -> None:
        self._socket.close()
        requests.delete(self._delete, headers=self._headers, timeout=30)
