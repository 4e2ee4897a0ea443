"""The group reader: many players' rows asked at once read in one query, as the group writer writes
many moves in one transaction."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio

__all__ = ["READ_MOST", "GroupReader"]

READ_MOST = 500  # keys in one query at most (a burst of seeks reads in several)

V = TypeVar("V")


class GroupReader(Generic[V]):
    """Reads rows by key, many keys in one query: ``read(group, keys)`` (run on a worker thread) gives
    the value of each key it found. The asks of one turn of the event loop, and those made while a
    reading runs, go into the next reading, one query per group (e.g. per game) and per
    :data:`READ_MOST` keys; a key asked twice is read once. A reading that fails fails the asks it
    held, not the later ones."""

    def __init__(self, read: Callable[[str, list[str]], dict[str, V]], most: int = READ_MOST) -> None:
        self._read = read
        self._most = most
        self._asks: dict[str, dict[str, list[asyncio.Future[V | None]]]] = {}
        self._task: asyncio.Task[None] | None = None
        self.readings = 0  # queries made

    async def get(self, group: str, key: str) -> V | None:
        """The value of ``key`` in ``group``; None if the reading did not find it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[V | None] = loop.create_future()
        self._asks.setdefault(group, {}).setdefault(key, []).append(future)
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run())
        return await future

    async def _run(self) -> None:
        asks: dict[str, dict[str, list[asyncio.Future[V | None]]]] = {}
        try:
            await asyncio.sleep(0)  # the other asks of this turn of the loop join the first reading
            while self._asks:
                asks, self._asks = self._asks, {}
                for group, keyed in asks.items():
                    keys = list(keyed)
                    for start in range(0, len(keys), self._most):
                        await self._answer(group, keys[start:start + self._most], keyed)
        except BaseException:  # stopped (the server stops): no ask is left waiting for ever
            for pending in (asks, self._asks):
                for keyed in pending.values():
                    for futures in keyed.values():
                        for future in futures:
                            if not future.done():
                                future.set_exception(RuntimeError("the reading was stopped"))
            self._asks = {}
            raise

    async def _answer(self, group: str, keys: list[str], keyed: dict[str, list[asyncio.Future[V | None]]]) -> None:
        waiting = [f for key in keys for f in keyed[key] if not f.done()]
        if not waiting:  # every one of them gave up (their pages closed)
            return
        self.readings += 1
        try:
            found = await anyio.to_thread.run_sync(self._read, group, keys)
        except Exception as exc:
            for future in waiting:
                if not future.done():
                    future.set_exception(exc)
            return
        for key in keys:
            for future in keyed[key]:
                if not future.done():
                    future.set_result(found.get(key))
