"""TensorBoard on a unix socket that only its owner can reach.

TensorBoard has no authentication: on a TCP port, anyone on the node could read it. Here it
listens on a socket in a 0700 directory of the user's own, and reaches the browser only through
the user's Jupyter server (jupyter-server-proxy, gpuportal_session.board_proxy), which the hub
authenticates. The session points `%tensorboard` here (TENSORBOARD_BINARY); the "port" it
reports is the instance's number, which board_proxy maps back to its socket.

    python -m gpuportal_session.tensorboard_private --logdir DIR [other TensorBoard flags]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from gpuportal_session.session_tmp import records_dir

MAX_INSTANCES = 999
RUNTIME_ENV = "GPUPORTAL_RUNTIME_DIR"


def runtime_dir() -> Path:
    """The user's private directory for TensorBoard sockets (created 0700, checked).

    The session sets RUNTIME_ENV to a directory it made with a random name; the fixed
    fallback is only for a TensorBoard started outside a session, and is refused when it
    belongs to somebody else.
    """
    base = Path(os.environ.get(RUNTIME_ENV) or f"/tmp/gpuportal-{os.getuid()}")
    path = base / "tensorboard"
    for directory in (base, path):
        directory.mkdir(mode=0o700, exist_ok=True)
        info = directory.lstat()
        # Somebody else's directory (made in /tmp before us) must not hold our sockets.
        if info.st_uid != os.getuid() or directory.is_symlink():
            raise SystemExit(f"{directory} is not yours; refusing to put TensorBoard there")
        if info.st_mode & 0o077:
            directory.chmod(0o700)
    return path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def instances(directory: Path) -> list[dict[str, Any]]:
    """The TensorBoards of this user that are running: number, pid, logdir, socket."""
    found = []
    for record in sorted(directory.glob("*.json"), key=lambda p: int(p.stem)):
        try:
            info = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if alive(int(info["pid"])) and Path(info["socket"]).exists():
            found.append(info)
    return found


def claim_number(directory: Path) -> int:
    """The lowest free instance number, held by an exclusively created lock file."""
    for number in range(1, MAX_INSTANCES + 1):
        lock = directory / f"{number}.lock"
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            record = directory / f"{number}.json"
            try:
                owner = int(json.loads(record.read_text())["pid"])
            except (OSError, ValueError, KeyError):
                continue  # being set up right now by another start
            if alive(owner):
                continue
            release(directory, number)  # left by a TensorBoard that was killed
            return claim_number(directory)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return number
    raise SystemExit("too many TensorBoards running; close some first")


def release(directory: Path, number: int) -> None:
    for suffix in ("sock", "json", "lock"):
        (directory / f"{number}.{suffix}").unlink(missing_ok=True)


def check_logdir(argv: list[str]) -> str:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--logdir", default="")
    known, _ = parser.parse_known_args(argv)
    logdir = os.path.expanduser(known.logdir)
    if not logdir:
        raise SystemExit("TensorBoard needs a folder: --logdir DIR")
    if not os.path.isdir(logdir):
        raise SystemExit(f"TensorBoard: there is no folder {logdir!r}")
    if not os.access(logdir, os.R_OK | os.X_OK):
        raise SystemExit(f"TensorBoard: the folder {logdir!r} is not readable by you")
    return str(os.path.abspath(logdir))


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    logdir = check_logdir(args)
    directory = runtime_dir()
    number = claim_number(directory)
    socket_path = directory / f"{number}.sock"

    # Imported late: a bad folder is reported in well under a second, before this import.
    from tensorboard import program
    from werkzeug.serving import make_server

    class UnixSocketServer(program.TensorBoardServer):
        def __init__(self, wsgi_app: Any, flags: Any) -> None:
            socket_path.unlink(missing_ok=True)
            self._server = make_server(f"unix://{socket_path}", 0, wsgi_app, threaded=True)
            socket_path.chmod(0o600)
            (directory / f"{number}.json").write_text(
                json.dumps(
                    {
                        "number": number,
                        "pid": os.getpid(),
                        "logdir": logdir,
                        "socket": str(socket_path),
                    }
                )
            )
            self._prefix = flags.path_prefix

        def serve_forever(self) -> None:
            self._server.serve_forever()

        def get_url(self) -> str:
            # The "port" that %tensorboard puts in TENSORBOARD_PROXY_URL: our instance number.
            return f"http://localhost:{number}{self._prefix}/"

        def print_serving_message(self) -> None:
            print(f"TensorBoard {number} on {logdir} (socket {socket_path})", file=sys.stderr)

    atexit.register(release, directory, number)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so that atexit runs
    # TensorBoard's record of itself (.tensorboard-info) in the session's private folder, where
    # `%tensorboard` looks (notebook_tensorboard), not in the node's shared /tmp.
    tempfile.tempdir = records_dir(str(directory.parent))
    board = program.TensorBoard(server_class=UnixSocketServer)
    # The argv exactly as given: %tensorboard finds this instance by a key made from it.
    board.configure(argv=["tensorboard", *args])
    # No fast loader: it is a separate data server on a localhost TCP port, which any user of
    # the node could query; the Python loader stays inside this process.
    board.flags.load_fast = "false"
    sys.exit(board.main())


if __name__ == "__main__":
    main()
