"""A cell run in a user's JupyterLab the way the notebook page runs it: a kernel made through
the REST API, the code sent over the kernel's websocket, both through the hub's proxy."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import requests
import websocket


def run_cell(base_url: str, user: str, token: str, code: str, *, ca: Path) -> str:
    """Runs `code` in a new Python kernel of the user's JupyterLab, through the hub's proxy
    (REST for the kernel, its websocket for the cell), and returns what it printed. `ca`: the
    CA that signed the hub's certificate (no proxies or CA bundles from the environment)."""
    headers = {"Authorization": f"token {token}"}
    http = requests.Session()
    http.trust_env = False
    kernel = http.post(
        f"{base_url}/user/{user}/api/kernels",
        headers=headers,
        json={"name": "python3"},
        verify=str(ca),
        timeout=60,
    )
    assert kernel.status_code == 201, kernel.text
    kernel_id = kernel.json()["id"]
    socket = websocket.create_connection(
        f"{base_url.replace('https://', 'wss://', 1)}/user/{user}/api/kernels/{kernel_id}/channels",
        header=[f"Authorization: token {token}"],
        sslopt={"ca_certs": str(ca)},
        timeout=60,
    )
    msg_id = uuid.uuid4().hex
    socket.send(
        json.dumps(
            {
                "header": {
                    "msg_id": msg_id,
                    "msg_type": "execute_request",
                    "username": user,
                    "session": uuid.uuid4().hex,
                    "version": "5.3",
                },
                "parent_header": {},
                "metadata": {},
                "content": {"code": code, "silent": False},
                "channel": "shell",
            }
        )
    )
    printed = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            message = json.loads(socket.recv())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = message["msg_type"]
            if kind == "stream":
                printed.append(message["content"]["text"])
            elif kind == "error":
                traceback = "\n".join(message["content"]["traceback"])
                raise AssertionError(f"the cell failed: {traceback}")
            elif kind == "status" and message["content"]["execution_state"] == "idle":
                return "".join(printed)
    finally:
        socket.close()
        kernel_url = f"{base_url}/user/{user}/api/kernels/{kernel_id}"
        http.delete(kernel_url, headers=headers, verify=str(ca), timeout=60)
    raise AssertionError(f"the cell did not finish in 60 s; printed so far: {printed}")
