"""gpuportal_adapters.compat: a patch is made only while its guards hold; and the package's own
patch, the workaround for CPython's stale OpenSSL error queue: on OpenSSL 3.4 and newer each
TLS read and write of the process clears the thread's queue first; on older OpenSSL nothing
changes. The failure itself, seen on Debian 13 only, is shown there by the Dask test
(tests/debian13-tests.txt), which lost its scheduler in 6 of 10 runs before this."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator

import pytest

from gpuportal_adapters import compat


@pytest.fixture
def pristine(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """SSLSocket's methods as the standard library has them during the test (where this
    process installed the workaround already, on OpenSSL 3.4 and newer, unwrapped), and as they
    were after it; the clears counted instead of made."""
    for name in compat.IO_METHODS:
        method = getattr(ssl.SSLSocket, name)
        monkeypatch.setattr(ssl.SSLSocket, name, getattr(method, "__wrapped__", method))
    cleared: list[str] = []
    monkeypatch.setattr(compat, "_clear_errors", lambda: lambda: cleared.append("cleared"))
    yield cleared


def counted_patch(*guards: compat.Guard, required: bool = False) -> tuple[compat.Patch, list[str]]:
    made: list[str] = []
    patch = compat.Patch(
        "a test's patch",
        guards=guards,
        change=lambda: made.append("made"),
        done=lambda: bool(made),
        required=required,
    )
    return patch, made


def test_a_patch_is_made_once_while_its_guards_hold() -> None:
    patch, made = counted_patch(compat.python_in((3, 0), (4, 0)))
    assert compat.apply([patch]) == ["a test's patch"]
    assert compat.apply([patch]) == ["a test's patch"]
    assert made == ["made"]


def test_on_an_unknown_upstream_a_patch_is_left_out_and_said_at_error_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    changed = compat.same_source("json.dumps", lambda: __import__("json").dumps, "0" * 64, "1.0")
    patch, made = counted_patch(changed)
    assert compat.apply([patch]) == []
    assert made == []
    (entry,) = caplog.records
    assert entry.levelname == "ERROR"
    assert "a test's patch: json.dumps is not 1.0's (sha256 " in entry.getMessage()
    gone = compat.same_source("x.nothing", lambda: __import__("json").nothing, "0" * 64, "1.0")
    assert "x.nothing is gone" in (gone.problem() or "")


def test_a_patch_the_product_needs_stops_the_start_on_an_unknown_upstream() -> None:
    patch, made = counted_patch(compat.version_in("pytest", "1.0", "2.0"), required=True)
    with pytest.raises(compat.UnknownUpstream, match=r"pytest [\d.]+ is not in \[1.0, 2.0\)"):
        compat.apply([patch])
    assert made == []
    assert "not installed" in (compat.version_in("no-such-dist", "1", "2").problem() or "")


def test_the_ssl_patchs_guards_hold_here() -> None:
    assert compat.ssl_error_queue(lambda: None).problems() == []


def test_older_openssl_is_left_as_it_is(pristine: list[str]) -> None:
    before = ssl.SSLSocket.recv_into
    assert compat.install(version=(3, 0, 19, 0, 15)) is False
    assert ssl.SSLSocket.recv_into is before


def test_each_tls_call_clears_the_queue_first_on_openssl_3_4_and_newer(
    pristine: list[str],
) -> None:
    assert compat.install(version=(3, 5, 9, 0, 15)) is True
    assert compat.install(version=(3, 5, 9, 0, 15)) is True  # once only
    # A real TLS exchange over a socket pair: each read and write cleared the queue first.
    server_side, client_side = socket_pair()
    client_side.sendall(b"ping")
    assert server_side.recv(4) == b"ping"
    assert len(pristine) >= 2 and pristine.count("cleared") == len(pristine)
    # And it wraps without changing what the methods are.
    assert ssl.SSLSocket.recv_into.__name__ == "recv_into"


def test_the_real_library_is_found_where_openssl_is_new_enough() -> None:
    # On this machine's Python: the ctypes handle exists exactly where the workaround applies.
    if compat.needed():
        assert compat._clear_errors() is not None


def socket_pair() -> tuple[ssl.SSLSocket, ssl.SSLSocket]:
    import socket
    import subprocess
    import tempfile

    folder = tempfile.mkdtemp()
    key, cert = f"{folder}/key.pem", f"{folder}/cert.pem"
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            *curve,
            "-days",
            "1",
            "-subj",
            "/CN=t",
            "-keyout",
            key,
            "-out",
            cert,
        ],
        check=True,
        capture_output=True,
    )
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(cert, key)
    asking = ssl.create_default_context(cafile=cert)
    asking.check_hostname = False
    left, right = socket.socketpair()
    wrapped: list[ssl.SSLSocket] = []
    handshake = threading.Thread(
        target=lambda: wrapped.append(serving.wrap_socket(left, server_side=True))
    )
    handshake.start()
    client = asking.wrap_socket(right)
    handshake.join(10)
    return wrapped[0], client
