"""Run inside the job: pick a free port, tell the hub, then become jupyterhub-singleuser.

A lighter stand-in for batchspawner-singleuser (no requests or HubAuth import) that sends the
same {"port": N} to the same hub URL. jupyterhub-singleuser itself runs in this process, with
slow imports left out (gpuportal_session.compat); any other command is exec'd.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse, urlunparse

from gpuportal_adapters import compat, token_calls
from gpuportal_adapters.hub_tls import client_context
from gpuportal_session import dask_setup
from gpuportal_session.compat import skip_hub_database, skip_slow_imports, skip_yarn_config
from gpuportal_session.session_files import link_shared, sync_templates
from gpuportal_session.session_tmp import fresh_runtime_dir
from gpuportal_session.tensorboard_private import RUNTIME_ENV, runtime_dir

SINGLEUSER = "jupyterhub-singleuser"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def listen_address(configured: str) -> str:
    """Where a server of this session listens: the address the hub configured, or (empty) this
    node's own address on the cluster network, the one its Slurm node name resolves to: the hub
    connects to that name. A name that does not resolve here leaves every address (0.0.0.0)."""
    if configured:
        return configured
    name = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    try:
        return socket.gethostbyname(name)
    except OSError:
        return "0.0.0.0"


def report_port(api_url: str, token: str, port: int, *, attempts: int = 10) -> None:
    """Tell the hub where this server listens; up to about a minute of tries in all (the
    client's waits: 1, 2, 4, 8, then 10 s), long enough to ride out a hub restart."""
    report = token_calls.call(
        api_url.rstrip("/") + "/batchspawner",
        token=token,
        method="POST",
        body={"port": port},
        tls=client_context(),
        attempts=attempts,
    )
    try:
        asyncio.run(report)  # before the server's own loop starts
    except token_calls.CallFailed as error:
        raise SystemExit(f"could not report the port to the hub at {api_url}: {error}") from None


def prepare_home() -> None:
    """~/templates from the shipped notebooks, and ~/shared; never a reason not to start."""
    home = Path(os.environ.get("HOME") or Path.home())
    try:
        templates = os.environ.get("GPUPORTAL_TEMPLATES_DIR", "")
        if templates and Path(templates).is_dir():
            report = sync_templates(Path(templates), home / "templates")
            if report.copied or report.updated:
                print(
                    f"templates: copied {report.copied or '-'}, updated {report.updated or '-'}",
                    file=sys.stderr,
                )
        shared = os.environ.get("GPUPORTAL_SHARED_DIR", "")
        if shared:
            link_shared(home, Path(shared))
    except OSError as error:
        print(f"could not prepare {home}: {error}", file=sys.stderr)


def prepare_tensorboard() -> None:
    """Point `%tensorboard` at the private TensorBoard, shown through this server's page.

    TENSORBOARD_BINARY must be one executable: a two-line script in the user's private
    directory that runs gpuportal_session.tensorboard_private with this Python.
    """
    if not os.environ.get(RUNTIME_ENV):
        # The page and `%tensorboard` find it through the environment they inherit.
        os.environ[RUNTIME_ENV] = fresh_runtime_dir()
    try:
        directory = runtime_dir()
    except (OSError, SystemExit) as error:
        print(f"TensorBoard from notebooks is off: {error}", file=sys.stderr)
        return
    shim = directory / "tensorboard"
    shim.write_text(
        f'#!/bin/sh\nexec {sys.executable} -m gpuportal_session.tensorboard_private "$@"\n'
    )
    shim.chmod(0o700)
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/")
    os.environ["TENSORBOARD_BINARY"] = str(shim)
    os.environ["TENSORBOARD_PROXY_URL"] = f"{prefix.rstrip('/')}/tensorboard/tb/%PORT%/"
    # Kernels run this first: `%tensorboard` then says which folder it shows, not a "port".
    startup = str(Path(__file__).parent / "ipython_startup.py")
    own = os.environ.get("PYTHONSTARTUP", "")
    if own and own != startup:
        os.environ["GPUPORTAL_USER_PYTHONSTARTUP"] = own
    os.environ["PYTHONSTARTUP"] = startup


def prepare_desktop() -> None:
    """The desktop tile's X session (jupyter-remote-desktop-proxy reads the variable): Xfce with
    a D-Bus of its own that ends with it, or the user's ~/.vnc/xstartup."""
    os.environ.setdefault(
        "JUPYTER_REMOTE_DESKTOP_PROXY_XSTARTUP", str(Path(__file__).parent / "desktop_xstartup.sh")
    )


def log_mark(what: str) -> None:
    """A line of the session's log in Jupyter's own format, for where a start's time goes
    (bench/click_to_lab.py reads them; so can an admin in the log)."""
    now = datetime.now()
    stamp = f"{now:%Y-%m-%d %H:%M:%S}.{now.microsecond // 1000:03d}"
    print(f"[I {stamp} gpuportal] {what}", file=sys.stderr, flush=True)


def process_age() -> float | None:
    """Seconds since this process started (Linux: /proc), None where that cannot be read."""
    try:
        started = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, uptime - started / os.sysconf("SC_CLK_TCK"))


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit("usage: gpuportal-singleuser COMMAND [ARGS...]")
    age = process_age()
    if age is not None:
        log_mark(f"start: Python and gpuportal_session up {age:.2f} s after the process began")
    compat.install()  # JupyterLab serves TLS only, and calls the hub over it
    port = free_port()
    report_port(os.environ["JUPYTERHUB_API_URL"], os.environ["JUPYTERHUB_API_TOKEN"], port)
    log_mark(f"start: port {port} told to the hub")
    prepare_home()
    prepare_tensorboard()
    prepare_desktop()
    # The environment as the job activated it: terminals put it back after the login files
    # (terminal_rc.sh), which reset PATH.
    os.environ["GPUPORTAL_SESSION_PATH"] = os.environ.get("PATH", "")
    os.environ["GPUPORTAL_SESSION_PYTHON"] = sys.executable  # the terminal's banner runs it
    service_url = os.environ.get("JUPYTERHUB_SERVICE_URL", "")
    url = urlparse(service_url)
    host = listen_address(url.hostname or "")
    if service_url:
        os.environ["JUPYTERHUB_SERVICE_URL"] = urlunparse(url._replace(netloc=f"{host}:{port}"))
    dask_setup.prepare(host)
    log_mark("start: home, TensorBoard and Dask prepared")
    if os.path.basename(sys.argv[1]) == SINGLEUSER:
        run_singleuser(sys.argv[1:])
    os.execvp(sys.argv[1], sys.argv[1:])


def run_singleuser(argv: list[str]) -> None:
    """Run jupyterhub-singleuser here, as its console script would, minus SKIPPED_MODULES.

    The shell exec'd this process, so scancel's SIGTERM still reaches the server directly.
    """
    skip_slow_imports()
    skip_hub_database()
    skip_yarn_config()
    enable_server_guard()
    add_lab_extension()
    from jupyterhub.singleuser import main as singleuser_main

    log_mark("start: jupyterhub-singleuser imported")
    sys.argv = argv
    sys.exit(singleuser_main())


def enable_server_guard() -> None:
    """Add this package's Jupyter config folder, which enables gpuportal_session.server_guard.

    A config folder, not a command-line option: jupyter_server merges the extension lists of
    config folders, while a list given on the command line would replace them.
    """
    _put_first("JUPYTER_CONFIG_PATH", Path(__file__).parent / "jupyter_config")


def add_lab_extension() -> None:
    """Add this package's Jupyter data folder, where the built @gpuportal/session lab extension
    lies (time left in the status bar; deploy/local/labextension.sh builds it)."""
    _put_first("JUPYTER_PATH", Path(__file__).parent / "jupyter_data")


def _put_first(variable: str, folder: Path) -> None:
    """Put folder first on a search path in the environment, keeping what is there."""
    others = os.environ.get(variable, "")
    os.environ[variable] = os.pathsep.join(p for p in (str(folder), others) if p)


if __name__ == "__main__":
    main()
