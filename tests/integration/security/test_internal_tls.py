"""Internal TLS between the login host and the nodes (gpuportal_spawner.session_tls): a session's
JupyterLab serves only TLS, to clients with a certificate of the hub's CAs, with a certificate
that names its node; the key reaches the job as the token does, and the hub keeps no copy."""

from __future__ import annotations

import os
import pwd
import socket
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest
import requests
from cryptography import x509

from tests.cluster import NODES, host_of_process
from tests.hubproc import Hub
from tests.integration.conftest import user_jobs
from tests.integration.faults.helpers import spawn
from tests.own_processes import HERE

pytestmark = pytest.mark.integration

# Tries a lab's address three ways, as whoever runs it; prints one line per try.
PROBE = textwrap.dedent(
    """
    import socket, ssl, sys, urllib.request
    host, port, ca, own = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    def attempt(what, url, context):
        try:
            with urllib.request.urlopen(url, timeout=10, context=context) as answer:
                print(what, "GOT", answer.status, answer.read(200))
        except Exception as error:
            print(what, "refused", type(error).__name__, error)
    attempt("plain", f"http://{host}:{port}/", None)
    bare = ssl.create_default_context(cafile=ca)
    attempt("no-certificate", f"https://{host}:{port}/", bare)
    mine = ssl.create_default_context(cafile=ca)
    mine.load_cert_chain(own)
    attempt("own-session-certificate", f"https://{host}:{port}/", mine)
    """
)


def lab_of(hub: Hub, user: str) -> tuple[str, int, int]:
    """(node, port, pid) of the user's running JupyterLab, as the hub connected to it."""
    pids = subprocess.run(
        ["pgrep", *HERE, "-u", user, "-f", "gpuportal_session.singleuser"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert pids, f"no JupyterLab process of {user}"
    node = host_of_process(pids[0])
    assert node in NODES
    log = hub.log_path.read_text(errors="replace")
    port = int(log.rsplit(f"JupyterLab at {node}:", 1)[1].split()[0])
    return node, port, int(pids[0])


def handover_pem(user: str) -> Path:
    home = Path(os.path.expanduser(f"~{user}"))
    return home / ".jupyterhub-logs" / "tls-test-default.pem"


def test_a_session_serves_tls_only_with_a_certificate_of_its_node(hub: Hub, clean: None):
    alice = hub.login("alice")
    assert spawn(hub, alice, "alice").status_code in (201, 202)
    hub.wait_ready(alice, "alice")
    node, port, pid = lab_of(hub, "alice")

    # The certificate names the node (name and address), in a file of alice's alone.
    pem = handover_pem("alice")
    mode = pem.stat()
    assert stat.S_IMODE(mode.st_mode) == 0o600 and mode.st_uid == pwd.getpwnam("alice").pw_uid
    cert = x509.load_pem_x509_certificate(pem.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert node in names.get_values_for_type(x509.DNSName)
    address = socket.gethostbyname(node)
    assert address in {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    # The job's environment holds the paths, never the key; the hub kept no copy of it.
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    assert b"PRIVATE KEY" not in environ
    assert f"JUPYTERHUB_SSL_KEYFILE={pem}".encode() in environ
    store = hub.state / "internal-ssl"
    assert not [p for p in store.rglob("*") if p.name.startswith("session-")]

    # From the login host: plain HTTP and TLS without a certificate get nothing.
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://{node}:{port}/user/alice/api", timeout=10)
    # Every CA of the hub's (what the hub checks a lab's certificate against): a refusal
    # below is the lab's, not the client's own check failing.
    hub_cas = str(store / "hub-ca_trust.crt")
    with pytest.raises((requests.exceptions.SSLError, requests.ConnectionError)):
        requests.get(f"https://{node}:{port}/user/alice/api", verify=hub_cas, timeout=10)
    # The hub's own certificate is let in (what the hub and the proxy present).
    tls = hub.client_tls
    answer = requests.get(
        f"https://{node}:{port}/user/alice/api",
        cert=(tls["hub_ssl_certfile"], tls["hub_ssl_keyfile"]),
        verify=hub_cas,
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    assert "version" in answer.json()
    # And the way users come, through the proxy, works.
    token = hub.api(alice, "POST", "/users/alice/tokens", json={}).json()["token"]
    through_proxy = alice.get(
        f"{hub.url}/user/alice/api/status", headers={"Authorization": f"token {token}"}, timeout=30
    )
    assert through_proxy.status_code == 200, through_proxy.text


def test_another_users_job_on_the_other_node_gets_nothing(hub: Hub, clean: None, tmp_path):
    alice, bob = hub.login("alice"), hub.login("bob")
    # alice takes a whole node, so bob's session lands on the other one.
    assert spawn(hub, alice, "alice", profile="gpu-4").status_code in (201, 202)
    hub.wait_ready(alice, "alice", timeout=180)
    assert spawn(hub, bob, "bob").status_code in (201, 202)
    hub.wait_ready(bob, "bob", timeout=180)
    node, port, _ = lab_of(hub, "alice")
    bobs_node, _, _ = lab_of(hub, "bob")
    assert bobs_node != node
    (bobs_job,) = [line.split("|")[0] for line in user_jobs("bob", "%i|%T") if "RUNNING" in line]

    probe = Path("/tmp") / f"tls-probe-{os.getpid()}.py"
    probe.write_text(PROBE)
    probe.chmod(0o644)
    # The hub's CAs (public certificates), so that bob's side accepts the lab's certificate
    # and any refusal is the lab's: a copy he can open.
    ca = hub.state / "internal-ssl" / "hub-ca_trust.crt"
    public_ca = Path("/tmp") / f"tls-probe-ca-{os.getpid()}.pem"
    public_ca.write_text(ca.read_text())
    public_ca.chmod(0o644)
    python = Path(os.environ.get("VIRTUAL_ENV", "/opt/gpuportal/venv")) / "bin" / "python"
    try:
        said = subprocess.run(
            ["runuser", "-u", "bob", "--", "srun", f"--jobid={bobs_job}", "--overlap", "-n1",
             "--gres=none", "--mem=1G", str(python), str(probe), node, str(port),
             str(public_ca), str(handover_pem("bob"))],
            capture_output=True, text=True, timeout=120, cwd="/tmp",
        )  # fmt: skip
    finally:
        probe.unlink()
        public_ca.unlink()
    assert said.returncode == 0, said.stderr
    lines = dict(line.split(" ", 1) for line in said.stdout.splitlines() if " " in line)
    assert set(lines) == {"plain", "no-certificate", "own-session-certificate"}, said.stdout
    for what, outcome in lines.items():
        assert outcome.startswith("refused"), f"{what}: {outcome}"
