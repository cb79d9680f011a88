"""The poll's network probe (gpuportal_spawner.session_job): a refused connection means the node is
there (JupyterLab starting or stopped, which Slurm tells), not that the network is broken."""

from __future__ import annotations

import socket

from gpuportal_spawner.session_job import lab_answers, node_answers


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


async def test_a_refused_connection_is_an_answer_from_the_node_but_not_from_jupyterlab():
    port = _closed_port()
    assert await node_answers("127.0.0.1", port, 2.0) is True
    assert await lab_answers("127.0.0.1", port, 2.0) is False


async def test_an_accepted_connection_is_both():
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        assert await node_answers("127.0.0.1", port, 2.0) is True
        assert await lab_answers("127.0.0.1", port, 2.0) is True


async def test_a_name_that_does_not_resolve_is_no_answer():
    assert await node_answers("no-such-node.invalid", 80, 2.0) is False
