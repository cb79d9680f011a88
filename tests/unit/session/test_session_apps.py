"""VS Code's entry and settings, Dask's configuration and the job's allocation, as a session
sets them up (gpuportal_session.vscode, .dask_setup, .slurm_allocation)."""

import json
import os
import socket
import stat
import sys
from pathlib import Path

import pytest
import yaml

from gpuportal_session import dask_setup, vscode
from gpuportal_session.slurm_allocation import Allocation, job_allocation


def test_allocation_from_mem_or_mem_per_cpu():
    assert job_allocation({"SLURM_MEM_PER_NODE": "49152", "SLURM_CPUS_ON_NODE": "8"}) == Allocation(
        49152 * 1024 * 1024, 8
    )
    per_cpu = {"SLURM_MEM_PER_CPU": "2048", "SLURM_CPUS_ON_NODE": "4"}
    assert job_allocation(per_cpu) == Allocation(8192 * 1024 * 1024, 4)
    assert job_allocation({}) == Allocation(0, 0)
    assert job_allocation({"SLURM_MEM_PER_NODE": "lots"}) == Allocation(0, 0)


def test_no_vscode_tile_without_code_server(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="code-server"):
        vscode.server_proxy_config()
    fake = tmp_path / "code-server"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    config = vscode.server_proxy_config()
    assert config["unix_socket"] is True
    assert config["launcher_entry"]["title"] == "VS Code"


def test_code_server_listens_on_a_private_socket_only(tmp_path):
    config = vscode.empty_config(tmp_path)
    argv = vscode.command_line("/run/x/sock", "/home/alice/work", config, tmp_path / "data")
    assert argv[argv.index("--socket") + 1] == "/run/x/sock"
    assert argv[argv.index("--socket-mode") + 1] == "600"
    assert "--bind-addr" not in argv
    assert argv[argv.index("--auth") + 1] == "none"  # the hub's login is in front of it
    assert argv[-1] == "/home/alice/work"
    assert config == tmp_path / "code-server.yaml" and config.read_text() == ""
    assert argv[argv.index("--config") + 1] == str(config)
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def test_machine_settings_are_merged_and_a_commented_file_is_left_alone(tmp_path):
    path = tmp_path / "Machine" / "settings.json"
    wanted = vscode.machine_settings("/opt/env/bin/python")
    assert vscode.write_machine_settings(tmp_path, wanted)
    assert json.loads(path.read_text())["python.defaultInterpreterPath"] == "/opt/env/bin/python"

    path.write_text(json.dumps({"editor.fontSize": 16, "python.defaultInterpreterPath": "old"}))
    assert vscode.write_machine_settings(tmp_path, wanted)
    merged = json.loads(path.read_text())
    assert merged["editor.fontSize"] == 16
    assert merged["python.defaultInterpreterPath"] == "/opt/env/bin/python"
    profile = merged["terminal.integrated.profiles.linux"]["session"]
    assert profile["args"][:2] == ["--rcfile", str(vscode.TERMINAL_RC)]

    commented = '{\n  // mine\n  "editor.fontSize": 12\n}\n'
    path.write_text(commented)
    assert not vscode.write_machine_settings(tmp_path, wanted)
    assert path.read_text() == commented


JOB_ENV = {
    "SLURM_JOB_ID": "41",
    "SLURM_JOB_PARTITION": "gpu",
    "SLURM_JOB_ACCOUNT": "ds",
    "PATH": "/opt/envs/torch/bin:/usr/bin",
    "GPUPORTAL_DASK_TAG": "gpuportal:dask:local:alice:",
    "GPUPORTAL_SESSION_RUNTIME": "08:00:00",
    "JUPYTERHUB_SERVICE_PREFIX": "/user/alice/",
}


def test_dask_workers_are_jobs_of_the_session(tmp_path):
    config = dask_setup.session_config(
        JOB_ENV, python="/opt/envs/torch/bin/python", host="10.42.0.11", home=tmp_path, tls=tmp_path
    )
    slurm = config["jobqueue"]["slurm"]
    assert slurm["queue"] == "gpu"
    assert slurm["account"] == "ds"
    assert slurm["walltime"] == "08:00:00"
    assert slurm["python"] == "/opt/envs/torch/bin/python"
    assert slurm["job-extra-directives"] == ["--comment=gpuportal:dask:local:alice:"]
    assert slurm["job-script-prologue"] == ["export PATH='/opt/envs/torch/bin:/usr/bin'"]
    assert slurm["log-directory"] == str(tmp_path / "dask-logs")
    assert slurm["scheduler-options"]["host"] == "10.42.0.11"
    link = config["distributed"]["dashboard"]["link"]
    assert link.format(port=8787) == "/user/alice/dask-dashboard/8787/status"


def test_dask_workers_of_a_container_session_run_in_its_image():
    """A worker's job runs on a node outside the session's image: its Python is run in the
    image again, by the prefix the image's runner put in the environment."""
    assert dask_setup.worker_python({}) == sys.executable
    prefix = "/opt/gpuportal/venv/bin/python -m gpuportal_session.container --image /i.tar --"
    assert dask_setup.worker_python({"GPUPORTAL_IN_IMAGE": prefix}) == f"{prefix} {sys.executable}"


def test_dask_reads_the_written_config(tmp_path, monkeypatch):
    import dask.config
    from dask_jobqueue import SLURMCluster

    monkeypatch.setattr(dask_setup, "ADMIN_CONFIG", tmp_path / "etc-dask")
    (tmp_path / "etc-dask").mkdir()
    (tmp_path / "etc-dask" / "site.yaml").write_text("jobqueue:\n  slurm:\n    cores: 2\n")
    directory = tmp_path / "dask"
    directory.mkdir(mode=0o700)
    config = dask_setup.session_config(
        JOB_ENV, python="/usr/bin/python3", host="127.0.0.1", home=tmp_path, tls=directory
    )
    dask_setup.write_config(directory, config)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    loaded = dask.config.collect(paths=[str(directory)], env={})
    assert loaded["jobqueue"]["slurm"]["queue"] == "gpu"
    assert loaded["jobqueue"]["slurm"]["cores"] == 2  # the admins' file wins over the session's
    slurm = {f"jobqueue.slurm.{key}": value for key, value in loaded["jobqueue"]["slurm"].items()}
    with dask.config.set(slurm):
        script = SLURMCluster(cores=1, memory="1GiB").job_script()
    assert "#SBATCH --comment=gpuportal:dask:local:alice:" in script
    assert "#SBATCH -p gpu" in script
    assert "export PATH='/opt/envs/torch/bin:/usr/bin'" in script
    assert "--death-timeout 30" in script
    json.loads((directory / dask_setup.CONFIG_FILE).read_text())  # JSON, which YAML reads too
    assert yaml.safe_load((directory / dask_setup.CONFIG_FILE).read_text()) == config


def test_no_dask_setup_outside_a_job(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.delenv("DASK_ROOT_CONFIG", raising=False)
    monkeypatch.setattr(dask_setup, "PRIVATE_ROOT", tmp_path / "dask")
    dask_setup.prepare("127.0.0.1")
    assert not (tmp_path / "dask").exists()
    assert "DASK_ROOT_CONFIG" not in os.environ


def dotted(tree: dict, prefix: str) -> dict:
    """{"a": {"b": 1}} as {"prefix.a.b": 1}: dask.config.set replaces a whole subtree it is
    given, and only these keys must change."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(dotted(value, f"{prefix}.{key}"))
        else:
            flat[f"{prefix}.{key}"] = value
    return flat


def test_the_sessions_scheduler_speaks_tls_to_its_own_certificate_only(tmp_path, monkeypatch):
    """A scheduler set up as a session sets it up: a client with the session's certificate
    computes; one without it (another user of the cluster) is refused."""
    import asyncio

    import dask.config
    from distributed import Client, Scheduler

    monkeypatch.setenv("SLURM_JOB_ID", "41")
    monkeypatch.setattr(dask_setup, "PRIVATE_ROOT", tmp_path / "dask")
    monkeypatch.setattr(dask_setup, "ADMIN_CONFIG", tmp_path / "none")
    dask_setup.prepare("127.0.0.1")
    folder = tmp_path / "dask" / "41"
    assert os.environ.pop("DASK_ROOT_CONFIG") == str(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / dask_setup.KEY_FILE).stat().st_mode) == 0o600
    session = dask.config.collect(paths=[str(folder)], env={})

    async def scenario() -> tuple[int, str]:
        with dask.config.set(dotted(session["distributed"]["comm"], "distributed.comm")):
            async with Scheduler(host="127.0.0.1", port=0, dashboard_address=":0") as scheduler:
                assert scheduler.address.startswith("tls://")
                async with Client(scheduler.address, asynchronous=True) as client:
                    answer = await client.run_on_scheduler(lambda: 6 * 7)
                    # Another user's client, with a certificate of their own: refused.
                    with dask.config.set(dotted(others["distributed"]["comm"], "distributed.comm")):
                        try:
                            async with Client(scheduler.address, asynchronous=True, timeout="3s"):
                                refused = "connected"
                        except (OSError, TimeoutError) as error:
                            refused = type(error).__name__
        return answer, refused

    (tmp_path / "bob").mkdir(mode=0o700)
    dask_setup.make_key_pair(tmp_path / "bob", "bob")
    others = dask_setup.session_config(
        JOB_ENV, python="python3", host="127.0.0.1", home=tmp_path, tls=tmp_path / "bob"
    )
    answer, refused = asyncio.run(scenario())
    assert answer == 42
    assert refused != "connected"


def test_the_sessions_dask_serves_http_on_no_tcp_port(tmp_path, monkeypatch):
    """A scheduler and a worker started as a session starts them (its preload): the dashboard
    answers on a 0600 socket in the session's folder and on no TCP port; the worker's pages on
    none at all."""
    import asyncio

    import dask.config
    from distributed import Scheduler, Worker

    from gpuportal_session.dask_private import SOCKETS_ENV, socket_path

    folder = tmp_path / "sockets"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(SOCKETS_ENV, str(folder))
    config = dask_setup.session_config(
        JOB_ENV, python="python3", host="127.0.0.1", home=tmp_path, tls=tmp_path
    )
    preloads = dotted({k: config["distributed"][k] for k in ("scheduler", "worker")}, "distributed")

    def tcp_answers(port: int) -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        except OSError:
            return False
        return True

    def over_socket(path: Path, request: bytes) -> str:
        with socket.socket(socket.AF_UNIX) as unix:
            unix.connect(str(path))
            unix.sendall(request)
            return unix.makefile("rb").read().decode()

    async def scenario() -> tuple[str, int, int, bool, bool, int]:
        with dask.config.set(preloads):
            async with Scheduler(host="127.0.0.1", port=0, dashboard_address="127.0.0.1:0") as s:
                port = s.http_server.port
                path = socket_path(folder, port)
                request = b"GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n"
                answer = await asyncio.to_thread(over_socket, path, request)
                async with Worker(s.address, dashboard_address="127.0.0.1:0") as worker:
                    worker_port = worker.http_server.port
                    return (
                        answer,
                        path.stat().st_mode,
                        port,
                        tcp_answers(port),
                        tcp_answers(worker_port),
                        len(list(folder.iterdir())),
                    )

    body, mode, port, scheduler_tcp, worker_tcp, sockets = asyncio.run(scenario())
    assert body.startswith("HTTP/1.1 200") and body.endswith("ok")
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    assert not scheduler_tcp and not worker_tcp
    assert sockets == 1
    assert not socket_path(folder, port).exists()  # gone with the scheduler


def test_the_dashboard_route_reaches_only_the_users_own_sockets(tmp_path):
    from gpuportal_session.dask_dashboard import own_socket
    from gpuportal_session.dask_private import socket_path

    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(socket_path(tmp_path, 8787)))
    socket_path(tmp_path, 8788).write_text("not a socket")
    assert own_socket(8787, tmp_path) == str(tmp_path / "dashboard-8787.sock")
    assert own_socket(8788, tmp_path) is None
    assert own_socket(8789, tmp_path) is None
    assert own_socket(8787, None) is None
    listening.close()


def test_an_environment_without_the_tools_offers_no_tiles_and_still_starts(monkeypatch, tmp_path):
    """jupyter-server-proxy reads every entry point as the session's server starts: one whose
    tool is missing is left out with a warning, and the others (TensorBoard) stay."""
    from jupyter_server_proxy.config import get_entrypoint_server_processes

    monkeypatch.setenv("PATH", str(tmp_path))  # neither code-server nor vncserver here
    with pytest.warns(UserWarning):
        names = {process.name for process in get_entrypoint_server_processes()}
    assert "tensorboard" in names
    assert not names & {"vscode", "desktop-websockify"}


def test_a_term_ends_the_tools_then_the_server_its_own_way(monkeypatch):
    """simpervisor's handler ended in a lost sys.exit: the server ran on after scancel."""
    import logging
    import signal

    from simpervisor import atexitasync

    from gpuportal_session.compat import apply, tools_then_server

    monkeypatch.setattr(atexitasync, "_handle_signal", atexitasync._handle_signal)  # put back
    said = []

    class Server:
        def _signal_stop(self, signum, frame):
            said.append(("server", signum))

    before = signal.getsignal(signal.SIGTERM)
    patch = tools_then_server(Server())
    assert apply([patch], logging.getLogger("test")) == [patch.name]
    tool = lambda signum: said.append(("tool", signum))  # noqa: E731 (what starting a tool adds)
    atexitasync.signal_handler_set = False
    try:
        atexitasync.add_handler(tool)
        signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
        assert said == [("tool", signal.SIGTERM), ("server", signal.SIGTERM)]
    finally:
        atexitasync.remove_handler(tool)
        signal.signal(signal.SIGTERM, before)
