"""The bus of a single process: everything in its own memory (see :mod:`patience.server.bus`)."""

from __future__ import annotations

import bisect
import time
from collections import defaultdict
from collections.abc import Callable

from patience.server.bus.base import Bus, Handler

__all__ = ["MemoryBus"]


class MemoryBus(Bus):
    """One process's bus. ``now`` is the clock of leases and rate limits (seconds, monotonic)."""

    def __init__(self, node: str | None = None, *, now: Callable[[], float] = time.monotonic) -> None:
        super().__init__(node)
        self.now = now
        self._handlers: defaultdict[str, list[Handler]] = defaultdict(list)
        self._hashes: defaultdict[str, dict[str, bytes]] = defaultdict(dict)
        self._leases: dict[str, tuple[str, float]] = {}  # name -> (token, expires)
        self._hits: defaultdict[str, list[float]] = defaultdict(list)
        self._members: dict[tuple[str, str], float] = {}  # events named when counted (:meth:`unhit`)
        self._windows: dict[str, float] = {}

    async def publish(self, channel: str, data: bytes) -> None:
        for handler in list(self._handlers.get(channel, ())):
            handler(data)

    async def subscribe(self, channel: str, handler: Handler) -> None:
        self._handlers[channel].append(handler)

    async def unsubscribe(self, channel: str, handler: Handler) -> None:
        handlers = self._handlers.get(channel)
        if handlers and handler in handlers:
            handlers.remove(handler)
            if not handlers:
                del self._handlers[channel]

    async def hset(self, key: str, field: str, value: bytes) -> None:
        self._hashes[key][field] = value

    async def hget(self, key: str, field: str) -> bytes | None:
        return self._hashes.get(key, {}).get(field)

    async def hdel(self, key: str, *fields: str) -> int:
        found = self._hashes.get(key, {})
        gone = sum(1 for f in fields if found.pop(f, None) is not None)
        if not found:
            self._hashes.pop(key, None)
        return gone

    async def hgetall(self, key: str) -> dict[str, bytes]:
        return dict(self._hashes.get(key, {}))

    async def hmget(self, key: str, fields: list[str]) -> list[bytes | None]:
        found = self._hashes.get(key, {})
        return [found.get(f) for f in fields]

    async def hlen(self, key: str) -> int:
        return len(self._hashes.get(key, {}))

    async def claim(self, key: str, *fields: str, unless: str | None = None,
                    index: tuple[str, bytes] | None = None) -> list[bytes] | None:
        found = self._hashes.get(key, {})
        held = [f for f in fields if unless is not None and f in self._hashes.get(unless, {})]
        if held or not all(f in found for f in fields):
            for f in held:
                found.pop(f, None)
            self._unindex(index, held)
            if not found:
                self._hashes.pop(key, None)
            return None
        values = [found.pop(f) for f in fields]
        if not found:
            self._hashes.pop(key, None)
        self._unindex(index, list(fields))
        return values

    def _unindex(self, index: tuple[str, bytes] | None, fields: list[str]) -> None:
        if index is None:
            return
        entries = self._hashes.get(index[0], {})
        for f in fields:
            if entries.get(f) == index[1]:
                del entries[f]
        if not entries:
            self._hashes.pop(index[0], None)

    def _live(self, name: str) -> tuple[str, float] | None:
        held = self._leases.get(name)
        if held is not None and held[1] <= self.now():
            del self._leases[name]
            return None
        return held

    async def acquire(self, name: str, ttl_s: float) -> str | None:
        if self._live(name) is not None or self._hashes.get(name) or self._recent(name):
            return None  # as on Redis, where every name is one key: a hash or a counter of it holds it
        token = self.token()
        self._leases[name] = (token, self.now() + ttl_s)
        return token

    async def renew(self, name: str, token: str, ttl_s: float) -> bool:
        held = self._live(name)
        if held is None or held[0] != token:
            return False
        self._leases[name] = (token, self.now() + ttl_s)
        return True

    async def release(self, name: str, token: str) -> None:
        held = self._live(name)
        if held is not None and held[0] == token:
            del self._leases[name]

    async def holder(self, name: str) -> str | None:
        held = self._live(name)
        return None if held is None else self.node_of(held[0])

    def _recent(self, key: str) -> bool:
        times = self._hits.get(key)
        return bool(times) and times[-1] + self._windows.get(key, 0.0) > self.now()  # type: ignore[index]

    async def hit(self, key: str, window_s: float, limit: int, member: str | None = None) -> float:
        now = self.now()
        times = self._hits[key]
        self._windows[key] = window_s  # the counter lasts a window after its last event, as on Redis
        del times[:bisect.bisect_right(times, now - window_s)]
        if len(times) >= limit:
            return max(0.001, times[len(times) - limit] + window_s - now)
        times.append(now)
        if member is not None:
            self._members[(key, member)] = now
        return 0.0

    async def unhit(self, key: str, member: str) -> None:
        at = self._members.pop((key, member), None)
        times = self._hits.get(key)
        if at is not None and times and at in times:
            times.remove(at)
