"""VS Code, the desktop and Dask on Slurm in a session, as a user reaches them; nothing left after.

alice opens VS Code and the desktop from the launcher tiles (Chromium, through the hub): VS
Code's workbench renders and its terminal runs the session's Python; the desktop's noVNC canvas
shows an X session in which a window's title is read back with xdotool. bob gets 403 on both.
The shipped Dask notebook's cells start 2 workers as Slurm jobs on 2 nodes and reduce a 4 GB
array; the jobs page lists them; stopping the session cancels them, and no process of alice's is
left on the nodes.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
import requests

from bench.kernel_trip import Kernel
from gpuportal_session import dask_setup
from tests.hubproc import REPO
from tests.integration.conftest import Hub, server_python, wait_for
from tests.integration.test_environment_spawn import spawn
from tests.integration.test_live_profiles import log_in, open_lab
from tests.own_processes import ps_of

pytestmark = pytest.mark.integration

ALICE_SETTINGS = Path("/home/alice/.local/share/code-server/User/settings.json")
SHOTS = REPO / "build" / "screenshots"


def alice_processes() -> list[str]:
    return ps_of("alice")


def alice_jobs() -> list[str]:
    return subprocess.run(
        ["squeue", "-h", "-u", "alice", "-o", "%i %k"], capture_output=True, text=True
    ).stdout.splitlines()


def stop_alice(hub: Hub, session: requests.Session) -> float:
    """Stop alice's server on the hub; seconds until Slurm lists no job of hers."""
    began = time.monotonic()
    assert hub.api(session, "DELETE", "/users/alice/server").status_code in (202, 204)
    wait_for(lambda: not alice_jobs(), 30, "alice's jobs (session and Dask workers) to end")
    return time.monotonic() - began


@pytest.fixture
def dom_terminal() -> Any:
    """alice's VS Code draws its terminal as text (a user setting), so that it can be read."""
    ALICE_SETTINGS.parent.mkdir(parents=True, exist_ok=True)
    ALICE_SETTINGS.write_text(json.dumps({"terminal.integrated.gpuAcceleration": "off"}))
    subprocess.run(["chown", "-R", "alice:", "/home/alice/.local"], check=True)
    yield
    ALICE_SETTINGS.unlink(missing_ok=True)


def test_vscode_and_the_desktop_open_from_the_tiles_for_alice_only(
    hub: Hub, clean: None, browser: Any, dom_terminal: None
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo", viewport={"width": 1400, "height": 900})
    page.set_default_timeout(120_000)
    open_lab(page, hub, "alice")
    # A fresh layout, with the launcher (an earlier test's saved one may have none).
    page.goto(f"{hub.url}/user/alice/lab?reset")
    page.wait_for_selector(".jp-LauncherCard:has-text('VS Code')")
    # The status bar's memory is the job's 48 GB (one GPU's share), not the node's 200 GB.
    page.wait_for_selector("#jp-main-statusbar :text('/ 49152.00 MB')")

    # VS Code: its tile opens a tab with the workbench, on the session's folder.
    with page.context.expect_page() as opened:
        page.click(".jp-LauncherCard:has-text('VS Code')")
    code = opened.value
    code.set_default_timeout(120_000)
    code.wait_for_selector(".monaco-workbench")
    assert code.url.startswith(f"{hub.url}/user/alice/vscode/")
    code.wait_for_selector(".explorer-folders-view :text('templates')")
    # Its terminal starts as the lab's does: `which python` is the session's Python.
    code.keyboard.press("Control+Backquote")
    terminal = code.wait_for_selector(".terminal-wrapper.active .xterm")
    assert terminal is not None
    terminal.click()
    code.keyboard.type("echo CHECK=$(which python)\n")
    rows = ".terminal-wrapper.active .xterm-rows"
    code.wait_for_function(
        f"document.querySelector({rows!r}).textContent.includes('CHECK=/')", timeout=60_000
    )
    shown = code.inner_text(rows)
    assert f"CHECK={server_python('alice')}" in shown.replace("\n", ""), shown
    SHOTS.mkdir(parents=True, exist_ok=True)
    code.screenshot(path=str(SHOTS / "vscode.png"))

    # The desktop: its tile opens noVNC; the canvas shows an X session of alice's.
    with page.context.expect_page() as opened:
        page.click(".jp-LauncherCard:has-text('Desktop')")
    desktop = opened.value
    desktop.set_default_timeout(120_000)
    desktop.wait_for_function(DESKTOP_DRAWN)
    display = wait_for(alice_display, 30, "alice's Xtigervnc")
    title = "gpuportal-desktop-check"
    xterm = subprocess.Popen(
        [*as_alice_on(display), "xfce4-terminal", f"--title={title}", "--disable-server"]
    )
    found = wait_for(lambda: window_titles(display, title), 30, "the window")
    assert found == [title]
    desktop.screenshot(path=str(SHOTS / "desktop.png"))
    # Its VNC server has no TCP port: alice's unix socket, in her private folder, only.
    vnc = [line for line in alice_processes() if "Xtigervnc" in line]
    assert vnc and "-rfbport -1" in vnc[0] and "-rfbunixpath /tmp/jupyter-server-proxy-" in vnc[0]

    # bob, logged in to the hub, gets 403 on both.
    bob = log_in(browser, hub, "bob", "bob-demo")
    for path in ("vscode/", "desktop/", "desktop-websockify/"):
        response = bob.goto(f"{hub.url}/user/alice/{path}")
        assert response is not None and response.status == 403, path

    # Stopping the session ends code-server, the X server and the Xfce session with it.
    assert stop_alice(hub, hub.login("alice")) < 30
    wait_for(lambda: not alice_processes(), 30, "no process of alice's on the nodes")
    xterm.wait(timeout=30)  # its X server is gone


# noVNC's canvas shows the desktop: a share of its pixels is no longer black (the same test as
# bench/session_apps.py's first paint).
DESKTOP_DRAWN = """() => {
  const canvas = document.querySelector('canvas');
  if (!canvas || !canvas.width || !document.body.innerText.includes('Connected')) return false;
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let lit = 0, seen = 0;
  for (let i = 0; i < pixels.length; i += 4 * 499) {
    seen += 1;
    if (pixels[i] + pixels[i + 1] + pixels[i + 2] > 60) lit += 1;
  }
  return lit > seen / 4;
}"""


def alice_display() -> str:
    for line in alice_processes():
        if "Xtigervnc" in line:
            return line.split("Xtigervnc", 1)[1].split()[0]
    return ""


def as_alice_on(display: str) -> list[str]:
    """A command's prefix: as alice, in her session's job (on its node, whose host name her X
    cookie names), on her desktop's X display."""
    job = next(line.split()[0] for line in alice_jobs() if "gpuportal:session:" in line)
    in_job = ["srun", f"--jobid={job}", "--overlap", "-n1"]
    return ["runuser", "-u", "alice", "--", *in_job, "env", f"DISPLAY={display}"]


def window_titles(display: str, title: str) -> list[str]:
    search = subprocess.run(
        [*as_alice_on(display), "xdotool", "search", "--name", title],
        capture_output=True,
        text=True,
    ).stdout.split()
    names = []
    for window in search:
        names.append(
            subprocess.run(
                [*as_alice_on(display), "xdotool", "getwindowname", window],
                capture_output=True,
                text=True,
            ).stdout.strip()
        )
    return [name for name in names if name == title]


NOTEBOOK = REPO / "notebooks" / "06-dask-on-slurm.ipynb"
ALICE_UID = 10001
# Run by bob on a node: each TCP port the uid listens on (its own table of the node's network),
# asked a plain HTTP GET; which of them answered it.
PORT_PROBE = r"""
import json, socket, sys
uid, found = int(sys.argv[1]), []
for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
    for line in open(table).read().splitlines()[1:]:
        f = line.split()
        if f[3] == "0A" and int(f[7]) == uid:
            found.append((family, int(f[1].split(":")[1], 16)))
answered = []
for family, port in found:
    host = "127.0.0.1" if family == socket.AF_INET else "::1"
    addresses = [host, socket.gethostbyname(socket.gethostname())]
    for address in addresses if family == socket.AF_INET else [host]:
        try:
            with socket.create_connection((address, port), timeout=3) as s:
                s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
                s.settimeout(3)
                head = s.recv(64)
        except OSError:
            continue
        if head.startswith(b"HTTP/"):
            answered.append([address, port, head.decode(errors="replace")])
print(json.dumps({"listeners": [p for _, p in found], "answered": answered}))
"""


def from_bobs_job_on(node: str, uid: int) -> dict[str, Any]:
    probe = subprocess.run(
        ["sudo", "-u", "bob", "srun", "-p", "gpu", f"--nodelist={node}", "-N1", "-n1",
         "--mem=200M", "-t", "2", "--quiet", "python3", "-c", PORT_PROBE, str(uid)],
        capture_output=True, text=True, timeout=120, cwd="/tmp",
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    return dict(json.loads(probe.stdout.strip().splitlines()[-1]))


# The notebook's workers ask for 16 GiB each, and Slurm fills a node before the next: the test
# asks for most of a node per worker so that the two land on the two nodes.
ON_TWO_NODES = ('memory="16GiB"', 'memory="120GB"')


def test_a_dask_cluster_from_the_notebook_ends_with_the_session(hub: Hub, clean: None) -> None:
    alice = hub.login("alice")
    spawn(hub, alice, "session")
    token = hub.api(alice, "POST", "/users/alice/tokens", json={"note": "dask test"}).json()

    # A kernel shut down with its workers running takes their jobs with it.
    kernel = Kernel(hub.url, "alice", token["token"])
    kernel.result(
        "from dask_jobqueue import SLURMCluster; cluster = SLURMCluster(); cluster.scale(jobs=1)"
        "\nfrom dask.distributed import Client; Client(cluster).wait_for_workers(1); 'up'",
        timeout=300,
    )
    assert any("gpuportal:dask:" in line for line in alice_jobs())
    kernel.close()
    wait_for(lambda: len(alice_jobs()) == 1, 30, "the closed kernel's worker job to end")

    kernel = Kernel(hub.url, "alice", token["token"])
    cells = [c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    start, compute, _close = cells
    assert ON_TWO_NODES[0] in start
    kernel.result(start.replace(*ON_TWO_NODES) + "\n'started'", timeout=300)
    hosts = json.loads(kernel.result("import json; json.dumps(hosts)").strip("'"))
    assert len(hosts) == 2, hosts
    kernel.result(compute + "\n'computed'", timeout=300)
    assert 0.49 < float(kernel.result("mean")) < 0.51
    assert kernel.result("x.nbytes") == "4000000000"
    # The scheduler, on the node's cluster address, speaks TLS with the session's own key only.
    assert kernel.result("cluster.scheduler_address").startswith("'tls://10.")
    link = kernel.result("cluster.dashboard_link").strip("'")
    assert link.startswith("/user/alice/dask-dashboard/") and link.endswith("/status")

    # Two Slurm jobs of alice's with the session's Dask tag; the jobs page lists them.
    workers = [line.split()[0] for line in alice_jobs() if "gpuportal:dask:" in line]
    assert len(workers) == 2, alice_jobs()
    portal = f"{hub.url}/services/portal/api/jobs?mine=true"

    def listed() -> set[str]:
        mine = {"Authorization": f"token {token['token']}"}
        records = requests.get(portal, headers=mine, timeout=30).json()
        return {r["slurm_job_id"] for r in records if r["launcher"] == "dask"}

    wait_for(lambda: set(workers) <= listed(), 60, "the jobs page to list the Dask workers")
    # The dashboard, through the hub, is alice's: bob gets 403.
    assert alice.get(hub.url + link, timeout=30).status_code == 200
    assert hub.login("bob").get(hub.url + link, timeout=30).status_code == 403
    # And not around the hub either: from a job of his on her session's node, bob tries every
    # TCP port a process of alice's listens on there, and none answers him in HTTP.
    nodes = subprocess.run(
        ["squeue", "-h", "-u", "alice", "-o", "%k %N"], capture_output=True, text=True
    ).stdout.splitlines()
    node = next(line.split()[1] for line in nodes if line.startswith("gpuportal:session:"))
    tried = from_bobs_job_on(node, ALICE_UID)
    assert tried["listeners"], tried  # her JupyterLab and scheduler at least: the probe sees
    assert tried["answered"] == [], tried

    # The session stops with the workers running: none of their jobs is left within 30 s, and
    # its key is gone from her home.
    job = next(line.split()[0] for line in alice_jobs() if "gpuportal:session:" in line)
    key = Path("/home/alice/.cache/gpuportal-dask") / job
    assert (key / dask_setup.KEY_FILE).exists()
    assert stop_alice(hub, alice) < 30
    wait_for(lambda: not alice_processes(), 30, "no process of alice's on the nodes")
    assert not key.exists()
