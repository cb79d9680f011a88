"""`python -m gpuportal_adapters.hub_service MODULE [ARGS...]`: how the hub starts every service it
runs.

The portal, the spawn resumer, jupyterhub-idle-culler and any later service start through
here, so that each of them, whatever it is written with:
- dies with the hub: after a `kill -9` of the hub none runs on with parent 1 beside the next
  hub's own (gpuportal_adapters.process.die_with_parent);
- stops at once when the hub asks. The hub sends SIGINT, and SIGTERM only 10 s later
  (LocalProcessSpawner.interrupt_timeout); a hub started in the background by a script
  inherits SIGINT as ignored, so a service that keeps that disposition cost a restart 10 s.
"""

from __future__ import annotations

import contextlib
import runpy
import signal
import sys

from gpuportal_adapters.process import die_with_parent


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m gpuportal_adapters.hub_service MODULE [ARGS...]")
    module, *args = argv
    die_with_parent()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.argv = [module, *args]
    with contextlib.suppress(KeyboardInterrupt):
        runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
