"""A stand-in for the LDAP look-ups of the hub's authenticators (ClusterDirectory._in_directory):
every look-up answers `found`, or raises it where it is an exception."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from gpuportal_adapters.directory import DirectoryUser


def answering(found: DirectoryUser | Exception | None) -> Callable[..., Awaitable[Any]]:
    async def in_directory(call: Any, *args: Any, timeout: float) -> Any:
        if isinstance(found, Exception):
            raise found
        return found

    return in_directory
