"""The portal's background looks at Slurm (new sessions in squeue, ended jobs' use in sacct):
each one step repeated for ever, whatever a step meets."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from gpuportal_core.slurm import SlurmError

log = logging.getLogger(__name__)


async def repeat(step: Callable[[], Awaitable[int]], *, every: float, done: str, what: str) -> None:
    """`step` every `every` seconds; its count logged as `done` ("Recorded %d new session(s)")
    when not 0. Slurm down, or a database error, is logged and the next step goes on."""
    while True:
        try:
            count = await step()
            if count:
                log.info(done, count)
        except (SlurmError, OSError) as error:  # Slurm down, or no command on this host
            log.warning("Could not %s: %s", what, error)
        except Exception:  # a database error, say: logged, and the next look goes on
            log.exception("Could not %s; trying again in %s s", what, every)
        await asyncio.sleep(every)
