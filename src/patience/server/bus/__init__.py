"""The bus: what the server processes of one arena share, behind one small interface.

One process alone needs nothing outside itself: :class:`MemoryBus` keeps everything in its
memory. Several processes, on one machine or many, share a Redis server: :class:`RedisBus`
(``patience serve --redis-url redis://HOST:6379/0``). The arena above uses only these verbs:

* **messages** on named channels (``publish`` / ``subscribe``): at most once, in order per
  channel. Nothing depends on a message arriving: every match event carries a version and every
  intent an ack id, so a page that missed something asks again and gets it once (see
  docs/scaling.md for why Pub/Sub and not Streams);
* **shared hashes** (``hset`` / ``hdel`` / ``hgetall``): the waiting pools, the open challenges,
  who is online; ``claim`` takes several fields out of a hash in one atomic step (a pair out of its
  pool: nobody is in two matches, and no lock is held on a pool);
* **leases** (``acquire`` / ``renew`` / ``release`` / ``holder``): one holder at a time, until it
  lets go or stops renewing — the owner of a live match, the one process that pairs the pools; a
  short lock (``lock``) where one piece of work must run once, as a challenge taken up;
* **sliding-window counters** (``hit``): rate limits shared by every process.

>>> import asyncio
>>> async def demo() -> tuple[bool, bool]:
...     bus = MemoryBus("a")
...     token = await bus.acquire("lease:m1", 5.0)
...     return token is not None, await bus.acquire("lease:m1", 5.0) is None
>>> asyncio.run(demo())
(True, True)
"""

from __future__ import annotations

from patience.server.bus.base import Bus, BusError, Handler, node_name, stop_tasks
from patience.server.bus.memory import MemoryBus

__all__ = ["Bus", "BusError", "Handler", "MemoryBus", "make_bus", "node_name", "stop_tasks"]


def make_bus(url: str | None, node: str | None = None) -> Bus:
    """The memory bus without a URL, else the Redis bus at ``url`` (``redis://host:port/db``)."""
    if not url:
        return MemoryBus(node)
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise BusError(f"the bus URL must start with redis://, rediss:// or unix://, not {url[:40]!r}")
    from patience.server.bus.redisbus import RedisBus

    return RedisBus(url, node)

