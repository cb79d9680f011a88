import asyncio
import logging

from gpuportal_spawner.stop_handler import end_pending_spawn

LOG = logging.getLogger("test")


class FakeSpawner:
    _log_name = "frank"

    def __init__(self, future: asyncio.Future[None] | None, pending: str | None) -> None:
        self._spawn_future = future
        self.pending = pending


async def test_a_spawn_slow_to_cancel_has_ended_when_the_stop_goes_on():
    ended = asyncio.Event()

    async def spawn() -> None:
        try:
            await asyncio.sleep(60)
        finally:  # a clean-up that outlasts JupyterHub's one second
            await asyncio.sleep(1.5)
            ended.set()

    task = asyncio.ensure_future(spawn())
    await asyncio.sleep(0)
    await end_pending_spawn(FakeSpawner(task, "spawn"), LOG, wait_s=5)
    assert task.done() and ended.is_set()


async def test_nothing_is_cancelled_without_a_pending_spawn():
    task = asyncio.ensure_future(asyncio.sleep(60))
    await end_pending_spawn(FakeSpawner(task, "stop"), LOG, wait_s=5)
    await end_pending_spawn(FakeSpawner(None, "spawn"), LOG, wait_s=5)
    assert not task.done()
    task.cancel()
