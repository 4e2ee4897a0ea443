"""The bus of an arena of many processes: a Redis server (see :mod:`patience.server.bus`).

Messages go through Redis Pub/Sub, one connection per process for all its subscriptions, read
by one task that calls the handlers. Hashes are Redis hashes; a lease is a key holding its
token, set with ``NX`` and an expiry, renewed and released by small Lua scripts that check the
token first (so a process never extends or deletes a lease another has taken since); a claim takes
several fields of a hash out at once or none (a Lua script); a rate
limit is a sorted set of the times of recent events, kept and counted by one Lua script on the
Redis server's own clock, the one clock every process agrees on. Every key starts with
``prefix`` (``patience:`` by default), so one Redis can serve other things too.

Every command but the subscriptions is **pipelined** on its own: those that tasks send in one turn
of the event loop (hash reads and writes, publishing, leases, claims, rate limits) go to Redis
together, on one connection, in the order they were sent, and each task gets its own answer. A burst
of a thousand seeks is then a few round trips, not a thousand connections waiting for the pool. A
round trip has one deadline, :data:`COMMAND_SECONDS`, for all of its commands (the client's own
deadline is per reply: a timer for each of a thousand answers), after which each of its commands
fails with a :class:`BusError` and the connection is let go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import defaultdict
from typing import cast

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from patience.server.bus.base import Bus, BusError, Handler, stop_tasks

__all__ = ["RedisBus"]

log = logging.getLogger("patience.server")

MAX_CONNECTIONS = 64  # connections to Redis a process uses at most (commands wait for one beyond that)
RENEW_BATCH = 500  # leases renewed by one command
PIPELINE_MOST = 1000  # commands sent in one pipeline at most
COMMAND_SECONDS = 5.0  # a round trip to Redis not answered within this long fails (Redis is away or hung)

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""
_RENEW_MANY = """
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('get', key) == ARGV[i + 1] then
    out[i] = redis.call('pexpire', key, ARGV[1])
  else
    out[i] = 0
  end
end
return out
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
_CLAIM = """
-- KEYS: the hash, the hash 'unless' (or the hash itself: then no field is in it), the index;
-- ARGV: the index's value for the hash ('' when there is no index), then the fields
local fields = {unpack(ARGV, 2)}
local unless = KEYS[2] ~= KEYS[1]
local held = {}
for i = 1, #fields do
  if unless and redis.call('hexists', KEYS[2], fields[i]) == 1 then held[#held + 1] = fields[i] end
end
local function unindex(list)
  if ARGV[1] == '' then return end
  for i = 1, #list do
    if redis.call('hget', KEYS[3], list[i]) == ARGV[1] then redis.call('hdel', KEYS[3], list[i]) end
  end
end
if #held > 0 then
  redis.call('hdel', KEYS[1], unpack(held))
  unindex(held)
  return false
end
for i = 1, #fields do
  if redis.call('hexists', KEYS[1], fields[i]) == 0 then return false end
end
local values = redis.call('hmget', KEYS[1], unpack(fields))
redis.call('hdel', KEYS[1], unpack(fields))
unindex(fields)
return values
"""
_HIT = """
local t = redis.call('time')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('zremrangebyscore', KEYS[1], '-inf', now - window)
local n = redis.call('zcard', KEYS[1])
if n >= limit then
  local oldest = redis.call('zrange', KEYS[1], n - limit, n - limit, 'WITHSCORES')
  return tostring(math.max(0.001, tonumber(oldest[2]) + window - now))
end
redis.call('zadd', KEYS[1], now, ARGV[3])
redis.call('pexpire', KEYS[1], math.ceil(window * 1000))
return '0'
"""


class RedisBus(Bus):
    """The bus on the Redis server at ``url``."""

    def __init__(self, url: str, node: str | None = None, *, prefix: str = "patience:") -> None:
        super().__init__(node)
        self.url = url
        self.prefix = prefix
        # a bounded pool that makes a command wait for a free connection rather than fail under a burst
        # no deadline per reply (socket_timeout): a round trip has one deadline for all its replies (_send)
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=MAX_CONNECTIONS, timeout=10,
                                                        socket_connect_timeout=5, socket_timeout=None,
                                                        health_check_interval=15)
        self.redis: aioredis.Redis = aioredis.Redis(connection_pool=pool)
        self._pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        self._handlers: defaultdict[str, list[Handler]] = defaultdict(list)
        self._reader: asyncio.Task[None] | None = None
        self._renew = self.redis.register_script(_RENEW)
        self._renew_many = self.redis.register_script(_RENEW_MANY)
        self._release = self.redis.register_script(_RELEASE)
        self._hit = self.redis.register_script(_HIT)
        self._claim = self.redis.register_script(_CLAIM)
        self.commands = 0  # commands sent (for the figures of benchmarks/duels.py)
        self.round_trips = 0  # pipelines of small commands sent
        self._queued: list[tuple[str, tuple[object, ...], dict[str, object], asyncio.Future[object]]] = []
        self._flushing: set[asyncio.Task[None]] = set()

    @property
    def shared(self) -> bool:
        return True

    def _k(self, name: str) -> str:
        return self.prefix + name

    async def start(self) -> None:
        try:
            async with asyncio.timeout(COMMAND_SECONDS):
                await self.redis.ping()
            # the process's own channel: there is always one subscription for the reader to wait on
            await self._pubsub.subscribe(self._k(f"node:{self.node}"))
        except (RedisError, OSError) as exc:
            raise BusError(f"cannot reach Redis at {self.url}: {exc}") from exc
        self._reader = asyncio.create_task(self._read(), name="redis-bus-reader")

    async def close(self) -> None:
        if self._reader is not None:
            await stop_tasks([self._reader])  # its read of the channels may lose a first cancellation
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    async def _read(self) -> None:
        while True:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reading the Redis bus failed: reconnecting")
                await asyncio.sleep(0.5)
                continue
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"].decode() if isinstance(message["channel"], bytes) else message["channel"]
            for handler in list(self._handlers.get(channel[len(self.prefix):], ())):
                try:
                    handler(message["data"])
                except Exception:
                    log.exception("a handler of %s failed", channel)

    # -- the commands, pipelined --------------------------------------------------------------

    async def _small(self, command: str, *args: object, **options: object) -> object:
        """Send one command (a method of the client's pipeline, with its arguments and options) with the
        others of this turn of the event loop, in one pipeline."""
        self.commands += 1
        loop = asyncio.get_running_loop()
        future: asyncio.Future[object] = loop.create_future()
        if not self._queued:
            loop.call_soon(self._flush)
        self._queued.append((command, args, options, future))
        return await future

    def _flush(self) -> None:
        queued, self._queued = self._queued, []
        for start in range(0, len(queued), PIPELINE_MOST):
            task = asyncio.get_running_loop().create_task(self._send(queued[start:start + PIPELINE_MOST]))
            self._flushing.add(task)
            task.add_done_callback(self._flushing.discard)

    async def _send(self, batch: list[tuple[str, tuple[object, ...], dict[str, object], asyncio.Future[object]]]
                    ) -> None:
        self.round_trips += 1
        try:
            async with asyncio.timeout(COMMAND_SECONDS), self.redis.pipeline(transaction=False) as pipe:
                for command, args, options, _ in batch:
                    if command == "script":  # a Lua script: loaded by the pipeline first if Redis lacks it
                        script, keys, argv = args
                        await script(keys=keys, args=argv, client=pipe)  # type: ignore[operator]
                    else:
                        getattr(pipe, command)(*args, **options)
                answers = await pipe.execute(raise_on_error=False)
        except BaseException as exc:  # every task of the batch gets the error (a cancellation too)
            if isinstance(exc, TimeoutError):  # the client let its connection go (a cancelled read disconnects it)
                error: Exception = BusError(f"Redis at {self.url} did not answer within {COMMAND_SECONDS:g} s")
            else:
                error = exc if isinstance(exc, Exception) else BusError("the bus is closing")
            for *_, future in batch:
                if not future.done():
                    future.set_exception(error)
            if not isinstance(exc, Exception):
                raise
            return
        for (*_, future), answer in zip(batch, answers, strict=True):
            if future.done():  # its task was cancelled: the command was sent all the same
                continue
            if isinstance(answer, Exception):
                future.set_exception(answer)
            else:
                future.set_result(answer)

    async def publish(self, channel: str, data: bytes) -> None:
        await self._small("publish", self._k(channel), data)

    async def subscribe(self, channel: str, handler: Handler) -> None:
        first = channel not in self._handlers
        self._handlers[channel].append(handler)
        if first:
            self.commands += 1
            await self._pubsub.subscribe(self._k(channel))

    async def unsubscribe(self, channel: str, handler: Handler) -> None:
        handlers = self._handlers.get(channel)
        if handlers and handler in handlers:
            handlers.remove(handler)
            if not handlers:
                del self._handlers[channel]
                self.commands += 1
                await self._pubsub.unsubscribe(self._k(channel))

    async def hset(self, key: str, field: str, value: bytes) -> None:
        await self._small("hset", self._k(key), field, value)

    async def hget(self, key: str, field: str) -> bytes | None:
        found = cast("bytes | None", await self._small("hget", self._k(key), field))  # Redis answers are untyped
        return None if found is None else bytes(found)

    async def hdel(self, key: str, *fields: str) -> int:
        if not fields:
            return 0
        return int(await self._small("hdel", self._k(key), *fields))  # type: ignore[call-overload]

    async def hgetall(self, key: str) -> dict[str, bytes]:
        found: dict[bytes | str, bytes] = await self._small("hgetall", self._k(key))  # type: ignore[assignment]
        return {(k.decode() if isinstance(k, bytes) else k): v for k, v in found.items()}

    async def hmget(self, key: str, fields: list[str]) -> list[bytes | None]:
        if not fields:
            return []
        found = await self._small("hmget", self._k(key), fields)
        return [None if v is None else bytes(v) for v in found]  # type: ignore[attr-defined]

    async def hlen(self, key: str) -> int:
        return int(await self._small("hlen", self._k(key)))  # type: ignore[call-overload]

    async def claim(self, key: str, *fields: str, unless: str | None = None,
                    index: tuple[str, bytes] | None = None) -> list[bytes] | None:
        if not fields:
            return []
        keys = [self._k(key), self._k(unless or key), self._k(index[0] if index else key)]
        found = await self._small("script", self._claim, keys, [index[1] if index else b"", *fields])
        return None if found is None else [bytes(value) for value in found]  # type: ignore[attr-defined]

    async def acquire(self, name: str, ttl_s: float) -> str | None:
        token = self.token()
        got = await self._small("set", self._k(name), token, nx=True, px=max(1, round(ttl_s * 1000)))
        return token if got else None

    async def renew(self, name: str, token: str, ttl_s: float) -> bool:
        return bool(await self._small("script", self._renew, [self._k(name)], [token, max(1, round(ttl_s * 1000))]))

    async def renew_many(self, leases: dict[str, str], ttl_s: float) -> set[str]:
        names = list(leases)
        kept: set[str] = set()
        for start in range(0, len(names), RENEW_BATCH):
            batch = names[start:start + RENEW_BATCH]
            answers: list[int] = await self._small(  # type: ignore[assignment]
                "script", self._renew_many, [self._k(n) for n in batch],
                [max(1, round(ttl_s * 1000)), *(leases[n] for n in batch)])
            kept.update(name for name, ok in zip(batch, answers, strict=True) if ok)
        return kept

    async def release(self, name: str, token: str) -> None:
        await self._small("script", self._release, [self._k(name)], [token])

    async def holder(self, name: str) -> str | None:
        token = cast("bytes | None", await self._small("get", self._k(name)))  # Redis answers are untyped
        return None if token is None else self.node_of(bytes(token).decode())

    async def hit(self, key: str, window_s: float, limit: int, member: str | None = None) -> float:
        wait = await self._small("script", self._hit, [self._k(key)], [window_s, limit, member or secrets.token_hex(8)])
        return float(wait)  # type: ignore[arg-type]

    async def unhit(self, key: str, member: str) -> None:
        await self._small("zrem", self._k(key), member)
