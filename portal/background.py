"""The portal's background looks at Slurm (every job's state and new sessions in squeue, ended
jobs' use in sacct): each one step repeated for ever, whatever a step meets."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from gpuportal_adapters.slurm import SlurmError

log = logging.getLogger(__name__)


async def repeat(
    step: Callable[[], Awaitable[int]],
    *,
    every: float,
    done: str,
    what: str,
    wake: asyncio.Event | None = None,
) -> None:
    """`step` every `every` seconds, or at once when `wake` is set; its count logged as `done`
    ("Recorded %d new session(s)") when not 0. Slurm down, or a database error, is logged and
    the next step goes on."""
    while True:
        try:
            count = await step()
            if count:
                log.info(done, count)
        except (SlurmError, OSError) as error:  # Slurm down, or no command on this host
            log.warning("Could not %s: %s", what, error)
        except Exception:  # a database error, say: logged, and the next look goes on
            log.exception("Could not %s; trying again in %s s", what, every)
        if wake is None:
            await asyncio.sleep(every)
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), every)
        wake.clear()
