"""The bus interface (see :mod:`patience.server.bus`) and what every implementation shares."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import secrets
import socket
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from patience.errors import PatienceError

__all__ = ["Bus", "BusError", "Handler", "node_name", "stop_tasks"]

Handler = Callable[[bytes], None]
"""Called in the event loop with each message of a channel subscribed to."""


class BusError(PatienceError):
    """The bus cannot be reached or used (a wrong URL, Redis down)."""


async def stop_tasks(tasks: Iterable[asyncio.Task[Any]], again_s: float = 0.5) -> None:
    """Cancel ``tasks`` and return once every one has ended.

    A cancellation can be lost on the way: redis-py's asyncio client may finish a command and return
    although its task was cancelled meanwhile, and a loop that goes on after it would keep a stopping
    server waiting for ever. A task still running after ``again_s`` is cancelled again, at its next
    wait, until it ends. What the tasks raised is taken (and dropped), as ``gather(return_exceptions=True)``.

    >>> async def deaf() -> None:  # loses its first cancellation, as a command of the bus may
    ...     try:
    ...         await asyncio.sleep(10)
    ...     except asyncio.CancelledError:
    ...         pass
    ...     await asyncio.sleep(10)
    >>> async def demo() -> bool:
    ...     task = asyncio.create_task(deaf())
    ...     await asyncio.sleep(0)
    ...     await stop_tasks([task], again_s=0.01)
    ...     return task.cancelled()
    >>> asyncio.run(demo())
    True
    """
    every = list(tasks)
    pending = {task for task in every if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=again_s)
    for task in every:
        if not task.cancelled():
            task.exception()


def node_name() -> str:
    """A name for this process on the bus, unique among the processes of one arena."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


class Bus(ABC):
    """What the processes of one arena share. ``node`` names this process."""

    def __init__(self, node: str | None = None) -> None:
        self.node = node or node_name()
        self._local_locks: dict[str, tuple[asyncio.Lock, int]] = {}  # name -> its lock, coroutines using it

    async def start(self) -> None:  # noqa: B027 (a bus in memory has nothing to connect)
        """Connect (a no-op for the memory bus)."""

    async def close(self) -> None:  # noqa: B027
        """Let go of connections and subscriptions."""

    @property
    def shared(self) -> bool:
        """Do other processes see what this bus holds? (False for the memory bus.)"""
        return False

    # -- messages ------------------------------------------------------------------------------

    @abstractmethod
    async def publish(self, channel: str, data: bytes) -> None:
        """Send ``data`` to every subscriber of ``channel``, in every process (this one included)."""

    @abstractmethod
    async def subscribe(self, channel: str, handler: Handler) -> None:
        """Call ``handler`` with every message of ``channel`` from now on."""

    @abstractmethod
    async def unsubscribe(self, channel: str, handler: Handler) -> None:
        """Stop calling ``handler`` for ``channel``."""

    # -- shared hashes -------------------------------------------------------------------------

    @abstractmethod
    async def hset(self, key: str, field: str, value: bytes) -> None:
        """Set ``field`` of hash ``key``."""

    @abstractmethod
    async def hget(self, key: str, field: str) -> bytes | None:
        """One field of hash ``key``, or None."""

    @abstractmethod
    async def hdel(self, key: str, *fields: str) -> int:
        """Delete fields of hash ``key``; returns how many there were."""

    @abstractmethod
    async def hgetall(self, key: str) -> dict[str, bytes]:
        """Every field of hash ``key``."""

    @abstractmethod
    async def hmget(self, key: str, fields: list[str]) -> list[bytes | None]:
        """Several fields of hash ``key`` in one command (None for each that is not there)."""

    @abstractmethod
    async def hlen(self, key: str) -> int:
        """How many fields hash ``key`` has."""

    @abstractmethod
    async def claim(self, key: str, *fields: str, unless: str | None = None,
                    index: tuple[str, bytes] | None = None) -> list[bytes] | None:
        """Take ``fields`` out of hash ``key`` at once: their values if every one was there (all
        deleted), else None (nothing deleted). Two processes never both get a field.

        With ``unless``: a field that is also a field of hash ``unless`` is not taken (it is deleted
        from ``key``, nothing else is, None). With ``index`` = (hash, value): each field deleted from
        ``key`` is also deleted from that hash where its value there is ``value`` (a pool and the
        hash saying which pool each player waits in). All of it is one atomic step."""

    # -- leases --------------------------------------------------------------------------------

    @abstractmethod
    async def acquire(self, name: str, ttl_s: float) -> str | None:
        """Take lease ``name`` for ``ttl_s`` seconds if nobody holds it; returns its token, or None."""

    @abstractmethod
    async def renew(self, name: str, token: str, ttl_s: float) -> bool:
        """Extend a lease still held with ``token``; False if it was lost (expired, taken by another)."""

    async def renew_many(self, leases: dict[str, str], ttl_s: float) -> set[str]:
        """Renew several leases (name -> token) at once; returns the names still held."""
        return {name for name, token in leases.items() if await self.renew(name, token, ttl_s)}

    @abstractmethod
    async def release(self, name: str, token: str) -> None:
        """Let go of a lease held with ``token`` (nothing if it is no longer ours)."""

    @abstractmethod
    async def holder(self, name: str) -> str | None:
        """The node holding lease ``name``, or None."""

    def token(self) -> str:
        """A new lease token: this node's name and a random part (two holders on one node differ)."""
        return f"{self.node}/{secrets.token_hex(6)}"

    @staticmethod
    def node_of(token: str) -> str:
        return token.rsplit("/", 1)[0]

    @contextlib.asynccontextmanager
    async def lock(self, name: str, ttl_s: float = 2.0, wait_s: float = 30.0) -> AsyncIterator[None]:
        """Hold lease ``name`` for a short piece of work (waiting up to ``wait_s`` for it).

        The coroutines of this process queue for it in order on a lock of their own, so that only
        one of them at a time asks the bus: under a burst the bus sees one waiter per process, not
        one per page. ``ttl_s`` bounds how long a holder that died keeps others out."""
        local, users = self._local_locks.get(name, (asyncio.Lock(), 0))
        self._local_locks[name] = (local, users + 1)
        try:
            try:
                async with asyncio.timeout(wait_s):
                    await local.acquire()
            except TimeoutError:
                raise BusError(f"{name} stayed locked for {wait_s} s") from None
            try:
                async with self._lease_lock(name, ttl_s, wait_s):
                    yield
            finally:
                local.release()
        finally:
            lock, users = self._local_locks[name]
            if users == 1:
                del self._local_locks[name]  # nobody else waits: forget it (challenge codes come and go)
            else:
                self._local_locks[name] = (lock, users - 1)

    @contextlib.asynccontextmanager
    async def _lease_lock(self, name: str, ttl_s: float, wait_s: float) -> AsyncIterator[None]:
        deadline = asyncio.get_running_loop().time() + wait_s
        pause = 0.001
        while True:
            token = await self.acquire(name, ttl_s)
            if token is not None:
                break
            if asyncio.get_running_loop().time() > deadline:
                raise BusError(f"{name} stayed locked for {wait_s} s")
            await asyncio.sleep(pause * (1 + random.random()))
            pause = min(pause * 2, 0.02)
        try:
            yield
        finally:
            await self.release(name, token)

    # -- rate limits ---------------------------------------------------------------------------

    @abstractmethod
    async def hit(self, key: str, window_s: float, limit: int, member: str | None = None) -> float:
        """Count one event for ``key`` if fewer than ``limit`` happened in the last ``window_s``
        seconds: returns 0.0 then, else the seconds until one more is allowed (nothing counted).
        ``member`` names the event, so that :meth:`unhit` can take it back."""

    @abstractmethod
    async def unhit(self, key: str, member: str) -> None:
        """Take back the event ``member`` counted for ``key`` (what it was counted for did not happen)."""
