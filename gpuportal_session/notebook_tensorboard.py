"""`%tensorboard` in a session's notebooks, in words that fit this portal.

TensorBoard's own magic reports where an instance listens: "Reusing TensorBoard on port 1
(pid 4242) ... Use '!kill 4242'". Here TensorBoard listens on a private socket and its "port" is
an instance number (gpuportal_session.tensorboard_private), so that line only confuses. Once
`%load_ext tensorboard` has run, this module's `start` stands in for tensorboard.notebook.start
(gpuportal_session.compat): the same launch (tensorboard.manager, through TENSORBOARD_BINARY),
then a line that says which folder is shown and that it is private, a link to open it in a tab,
and the board in a frame.

Kernels load it through PYTHONSTARTUP (gpuportal_session/ipython_startup.py, set by the session).
"""

from __future__ import annotations

import contextlib
import html
import os
import shlex
import tempfile
from typing import Any

from gpuportal_session.session_tmp import records_dir, records_in
from gpuportal_session.tensorboard_private import RUNTIME_ENV, alive


def start(args_string: str) -> None:
    """`%tensorboard ARGS`: start (or reuse) a private TensorBoard and show it."""
    from IPython import display
    from tensorboard import manager

    handle = display.display(display.Pretty("Starting TensorBoard…"), display_id=True)
    # The session's TensorBoards record themselves in its private folder (tensorboard_private):
    # looked for there, and nowhere else.
    with records_in(session_records()):
        forget_dead_boards()
        result = manager.start(shlex.split(args_string, comments=True, posix=True))
    if isinstance(result, manager.StartLaunched | manager.StartReused):
        if handle is not None:
            handle.update(display.HTML(board_html(result.info)))
        return
    if handle is not None:
        handle.update(display.Pretty(failure(result)))


def session_records() -> str | None:
    """The session's folder of TensorBoard records (None outside a session: TensorBoard's own)."""
    runtime = os.environ.get(RUNTIME_ENV, "")
    return records_dir(runtime) if runtime and os.path.isdir(runtime) else None


def forget_dead_boards() -> None:
    """Drop the records of TensorBoards that no longer run, before `manager.start` looks.

    TensorBoard reuses any recorded instance with the same arguments and folder without asking
    whether its process still lives: a killed one's record would frame a board that answers 404.
    """
    from tensorboard import manager

    folder = os.path.join(tempfile.gettempdir(), ".tensorboard-info")  # where manager keeps them
    for info in manager.get_all():
        if not alive(info.pid):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, f"pid-{info.pid}.info"))


def board_html(info: Any) -> str:
    """The line above the board and the board itself, for a TensorBoardInfo."""
    url = os.environ.get("TENSORBOARD_PROXY_URL", "/tensorboard/tb/%PORT%/")
    url = html.escape(url.replace("%PORT%", str(info.port)))
    # As given to %tensorboard ("runs"): relative to the kernel's folder, as TensorBoard read it.
    folder = html.escape(os.path.abspath(info.logdir) if info.logdir else "(no folder)")
    return (
        f'<p class="gpuportal-tensorboard">TensorBoard on <code>{folder}</code>, private to you '
        f'(reached through the hub). <a href="{url}" target="_blank" rel="noopener">Open it in a '
        f"new tab</a>; the launcher's TensorBoard tile lists and closes the open ones.</p>"
        f'<iframe src="{url}" width="100%" height="800" frameborder="0" '
        f'title="TensorBoard on {folder}"></iframe>'
    )


def failure(result: Any) -> str:
    """Why TensorBoard did not start, in one or two lines."""
    from tensorboard import manager

    if isinstance(result, manager.StartFailed):
        lines = (result.stderr or result.stdout or "").strip().splitlines()
        return "TensorBoard did not start: " + (lines[-1] if lines else f"exit {result.exit_code}")
    if isinstance(result, manager.StartExecFailed):
        return f"TensorBoard could not be run: {result.os_error}"
    if isinstance(result, manager.StartTimedOut):
        return "TensorBoard did not start within a minute; try again, or open it from its tile."
    return f"TensorBoard: {result!r}"


def register() -> None:
    """In an IPython kernel: stand in for tensorboard.notebook.start once `%load_ext
    tensorboard` has loaded it (gpuportal_session.compat). Nothing is imported before then."""
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    from gpuportal_adapters.compat import apply
    from gpuportal_session.compat import tensorboard_magic

    apply([tensorboard_magic(shell, start)])
