"""The lobby's pools, paired in waves.

A seek is a single write that never waits for a lock: the player's entry goes into the hash
``pool:FORMAT`` (rating, since when, the process and page that wait) and the hash ``seeking``
says which pool they are in (so that a seek elsewhere, an unseek or a page that closes takes
them out with one more write). An unseek deletes the two.

One process at a time pairs: the holder of the lease ``pairer`` (another takes it over within
:data:`PAIRER_SECONDS` if it dies). Every :data:`WAVE_SECONDS`, and at once after a seek on its
own process, it reads each pool and pairs all of its members at once by the rule of
:func:`patience.duel.pairs` (the closest rating in reach, the longest waiting first: a whole-wave
matching, not first come first served; two who met last, by the hash ``met`` read once a pool and
wave, not again while anyone else in reach waits). Each pair is then taken out of the pool (and out of
``seeking``) with one atomic claim of both entries (:meth:`patience.server.bus.Bus.claim`), unless
either plays a match already (``busy``: a challenge accepted meanwhile; that one leaves the pool,
the other waits on): a player who left, or was taken meanwhile, is never in a match, and nobody is
ever in two. The claims of a wave go to the bus 256 at a time in one pipeline. The pairs go to
``paired``, which makes each match on the process of one of its players.

The seekers of a process that looks stopped (its lease lapsed) are taken out of the pools, so that
nobody is paired with a page that is gone; they are kept in ``unpooled``, and a process that was
only stalled (stopped, starved past its lease under load) puts its seekers whose pages are still
connected back within a second of running again (:meth:`Pools.restore`; within
:data:`UNPOOLED_SECONDS`), waiting since the same moment: a seeker whose page is connected is not
left out of the pairing.

Nothing here runs a match's clock: pairing can take as long as it likes, no clock waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import patience.server.figures as figures
from patience.duel import FORMATS, LIMITS, Format, Seeker, pairs
from patience.ratings import Rating
from patience.server.arena.nodes import Nodes
from patience.server.bus import Bus
from patience.server.live import Now

__all__ = ["FORMAT_KEYS", "MET_KEEP_SECONDS", "MET_PRUNE_SECONDS", "PAIRER_SECONDS", "WAVE_SECONDS", "Pools", "Side",
           "met_value", "read_met", "remember_met"]

log = logging.getLogger("patience.server")

FORMAT_KEYS = [Format(game, variant, limit).key for game, variants in FORMATS.items() for variant in variants
               for limit in LIMITS]
WAVE_SECONDS = 0.5  # the pairer pairs every pool this often (and at once after a seek on its process)
PAIRER_SECONDS = 3.0  # the pairer's lease: another process pairs within this long after it stops
CLAIMS_AT_ONCE = 256  # claims of one wave sent to the bus together (one pipeline)
UNPOOLED_SECONDS = 300.0  # a process that looked stopped puts its seekers back if it runs again within this long
MET_KEEP_SECONDS = 600.0
"""Whom a player met last counts this long after their match ended (``met``: a field per player, its value
the other player and when it lapses on the shared clock); the pairer deletes the lapsed ones every
:data:`MET_PRUNE_SECONDS`, so the hash holds only players of the last minutes, never every player ever paired."""
MET_PRUNE_SECONDS = 60.0
STARTS_AT_ONCE = 32
"""Matches of one wave made together: a wave of a thousand pairs is made in short turns of the event
loop, so that the leases and the clocks of the matches going on are never held up for seconds."""


@dataclass(frozen=True)
class Side:
    """One player of a match about to start: who, their rating, and where their page is."""

    user: str
    name: str
    rating: Rating
    node: str
    peer: str

    def entry(self, since: float) -> bytes:
        """The player as a pool keeps them (and a ``start`` envelope carries them)."""
        r = self.rating
        return json.dumps({"name": self.name, "r": r.rating, "d": r.deviation, "v": r.volatility, "since": since,
                           "node": self.node, "peer": self.peer}).encode()

    @staticmethod
    def of(user: str, data: bytes) -> tuple[Side, float]:
        e = json.loads(data)
        return Side(user, e["name"], Rating(e["r"], e["d"], e["v"]), e["node"], e["peer"]), float(e["since"])


Paired = Callable[[Format, Side, Side], Awaitable[None]]


def met_value(other: str, until: float) -> bytes:
    """A field of ``met``: the player met last and until when (the shared clock, s) it counts."""
    return f"{other} {until:.0f}".encode()


async def remember_met(bus: Bus, a: str, b: str, until: float) -> None:
    """``a`` and ``b`` met last, until ``until`` (the shared clock, s): written when their match starts and
    again when it ends (:mod:`patience.server.arena.owned`)."""
    await asyncio.gather(bus.hset("met", a, met_value(b, until)), bus.hset("met", b, met_value(a, until)))


def read_met(value: bytes | None, now: float) -> str | None:
    """The player a field of ``met`` names, if it still counts at ``now`` (a value without a time: no longer).

    >>> read_met(met_value("bob", 1000.0), 999.0), read_met(met_value("bob", 1000.0), 1001.0), read_met(b"bob", 0)
    ('bob', None, None)
    """
    if value is None:
        return None
    other, _, until = value.decode().partition(" ")
    return other if until and float(until) > now else None


class Pools:
    """The pools of the lobby on the bus. ``wall`` is the clock all processes share (seconds since
    the epoch: how long a player has waited); ``paired`` makes the match of a pair taken out of a
    pool; ``changed`` tells the lobby pages that the pools changed."""

    def __init__(self, bus: Bus, nodes: Nodes, wall: Now, paired: Paired,
                 changed: Callable[[], Awaitable[None]]) -> None:
        self.bus = bus
        self.nodes = nodes
        self.wall = wall
        self.paired = paired
        self.changed = changed
        self._token: str | None = None
        self._wake = asyncio.Event()
        self.waves = 0  # waves this process ran as the pairer
        self.pruned_at = 0.0  # when (the shared clock) this process last deleted the lapsed fields of ``met``
        self.made = 0  # pairs it made
        self.seekers: dict[str, int] = {}  # seekers waiting per pool at its last wave
        self.left: dict[str, tuple[float, list[Side]]] = {}
        """Per pool, as of this process's last wave (when, on the shared clock): who it left waiting,
        longest waiting first. The lobby's view names the first few of a large pool from it rather
        than reading thousands of entries again (:mod:`patience.server.arena.view`)."""

    @property
    def pairing_here(self) -> bool:
        """Does this process hold the pairer's lease (as of its last wave)?"""
        return self._token is not None

    # -- seeks: single writes -------------------------------------------------------------------

    async def seek(self, side: Side, fmt: Format) -> None:
        """Put ``side`` in pool ``fmt`` (out of any other they wait in)."""
        old = await self.bus.hget("seeking", side.user)
        if old is not None and old.decode() != fmt.key:
            await self.bus.hdel(f"pool:{old.decode()}", side.user)
        await asyncio.gather(self.bus.hset(f"pool:{fmt.key}", side.user, side.entry(self.wall())),  # one round trip
                             self.bus.hset("seeking", side.user, fmt.key.encode()))
        self._wake.set()  # the pairer here pairs at once; elsewhere within a wave

    async def unseek(self, user: str) -> bool:
        """Take ``user`` out of the pool they wait in; False if they waited in none."""
        key = await self.bus.hget("seeking", user)
        if key is None:
            return False
        await self.bus.hdel("seeking", user)
        return bool(await self.bus.hdel(f"pool:{key.decode()}", user))

    async def forget_page(self, user: str, peer: str) -> bool:
        """Take ``user`` out of their pool if they wait through page ``peer`` (it has closed)."""
        key = await self.bus.hget("seeking", user)
        if key is None:
            return False
        found = await self.bus.hget(f"pool:{key.decode()}", user)
        if found is None or json.loads(found)["peer"] != peer:
            return False
        return await self.unseek(user)

    async def waiting(self, key: str) -> dict[str, tuple[Side, float]]:
        """The players waiting in pool ``key``, less those whose process looks stopped (its lease lapsed).

        Those are taken out of the pool but kept in ``unpooled``: a process that was only stalled
        (stopped, swapped out, starved under load past its lease) puts them back as soon as it runs
        again (:meth:`restore`), so that a page still connected is never left waiting unpaired."""
        pool = await self.bus.hgetall(f"pool:{key}")
        found = {user: Side.of(user, data) for user, data in pool.items()}
        gone = {node for node in {side.node for side, _ in found.values()} if not await self.nodes.alive(node)}
        if gone:
            stale = [user for user, (side, _) in found.items() if side.node in gone]
            at = self.wall()
            for user in stale:
                kept = {"node": found[user][0].node, "pool": key, "entry": pool[user].decode(), "at": at}
                await self.bus.hset("unpooled", user, json.dumps(kept).encode())
            await self.bus.hdel(f"pool:{key}", *stale)
            for user in stale:
                if await self.bus.hget("seeking", user) == key.encode():
                    await self.bus.hdel("seeking", user)
            found = {user: entry for user, entry in found.items() if entry[0].node not in gone}
        return found

    async def restore(self, connected: Callable[[str, str], bool]) -> int:
        """Put back the seekers of this process that another took out of their pools while this one looked
        stopped (:meth:`waiting`), as they were (waiting since the same moment): those whose page is still
        ``connected(user, page)`` here, who seek nothing else meanwhile and play no match. Entries of
        another process older than :data:`UNPOOLED_SECONDS` are deleted (it stopped for good: its pages
        went with it). Returns how many seekers wait again."""
        kept = {user: json.loads(data) for user, data in (await self.bus.hgetall("unpooled")).items()}
        if not kept:
            return 0
        edge = self.wall() - UNPOOLED_SECONDS
        mine = {user: item for user, item in kept.items() if item["node"] == self.nodes.node}
        done = [user for user, item in kept.items() if user in mine or item["at"] < edge]
        if done:
            await self.bus.hdel("unpooled", *done)  # taken first: one taken out again meanwhile stays
        back = 0
        for user, item in mine.items():
            side, _ = Side.of(user, item["entry"].encode())
            if (connected(user, side.peer) and await self.seeking(user) is None
                    and await self.bus.hget("busy", user) is None):
                await self.seek_again(side, Format.from_key(item["pool"]), item["entry"].encode())
                back += 1
        if back:
            log.warning("%d seeker(s) of this process were taken out of their pools while it looked stopped: "
                        "they wait again", back)
            self._wake.set()
            await self.changed()
        return back

    async def seeking(self, user: str) -> str | None:
        """The pool ``user`` waits in, if any."""
        key = await self.bus.hget("seeking", user)
        return None if key is None else key.decode()

    # -- the pairer -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Pair in waves while this process holds the pairer's lease (try for it every wave)."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(WAVE_SECONDS):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self.wave()
            except Exception:  # the bus is away: the next wave tries again
                log.exception("a pairing wave failed")

    async def lead(self) -> bool:
        """Be the pairer (keep the lease, or take it if nobody holds it); True if this process is."""
        if self._token is not None and await self.bus.renew("pairer", self._token, PAIRER_SECONDS):
            return True
        self._token = await self.bus.acquire("pairer", PAIRER_SECONDS)
        if self._token is not None:
            log.info("this process pairs the pools now")
            await self.changed()  # the lobby's view comes from the pairer: a new one tells it at once
        return self._token is not None

    async def wave(self) -> int:
        """Pair every pool once, if this process is the pairer; returns the pairs made."""
        if not await self.lead():
            return 0
        started = time.perf_counter()
        try:
            return await self._wave()
        finally:
            figures.WAVE_SECONDS.observe(time.perf_counter() - started)
            figures.WAVE_SEEKERS.observe(sum(self.seekers.values()))

    async def _wave(self) -> int:
        self.waves += 1
        now = self.wall()
        if now - self.pruned_at >= MET_PRUNE_SECONDS:
            await self.prune_met(now)
        made: list[tuple[Format, Side, Side]] = []
        for key in FORMAT_KEYS:
            waiting = await self.waiting(key)
            self.seekers[key] = len(waiting)
            if len(waiting) < 2:
                self.left[key] = (now, [side for side, _ in waiting.values()])
                continue
            users = list(waiting)
            met = {user: other for user, value in zip(users, await self.bus.hmget("met", users), strict=True)
                   if (other := read_met(value, now)) is not None}  # whom each met last: not again while another waits
            chosen = pairs([Seeker(side.user, side.rating.rating, since) for side, since in waiting.values()], now,
                           met)
            taken = {seeker.user for pair in chosen for seeker in pair}
            self.left[key] = (now, [side for side, _ in sorted((entry for user, entry in waiting.items()
                                                                if user not in taken), key=lambda e: e[1])])
            for start in range(0, len(chosen), CLAIMS_AT_ONCE):
                batch = chosen[start:start + CLAIMS_AT_ONCE]
                claims = await asyncio.gather(*(self.bus.claim(f"pool:{key}", a.user, b.user, unless="busy",
                                                               index=("seeking", key.encode())) for a, b in batch))
                fmt = Format.from_key(key)
                for (a, b), got in zip(batch, claims, strict=True):
                    if got is not None:  # both were still there and neither plays: they are this pair's
                        made.append((fmt, Side.of(a.user, got[0])[0], Side.of(b.user, got[1])[0]))
        if not made:
            return 0
        self.made += len(made)
        await self.changed()
        for start in range(0, len(made), STARTS_AT_ONCE):
            await asyncio.gather(*(self._start(fmt, a, b) for fmt, a, b in made[start:start + STARTS_AT_ONCE]))
        return len(made)

    async def prune_met(self, now: float) -> int:
        """Delete the fields of ``met`` that no longer count; returns how many."""
        self.pruned_at = now
        lapsed = [user for user, value in (await self.bus.hgetall("met")).items() if read_met(value, now) is None]
        for start in range(0, len(lapsed), CLAIMS_AT_ONCE):
            await self.bus.hdel("met", *lapsed[start:start + CLAIMS_AT_ONCE])
        return len(lapsed)

    async def seek_again(self, side: Side, fmt: Format, entry: bytes) -> None:
        """Put a player taken out of a pool back as they were (waiting since the same moment)."""
        await self.bus.hset(f"pool:{fmt.key}", side.user, entry)
        await self.bus.hset("seeking", side.user, fmt.key.encode())

    async def _start(self, fmt: Format, a: Side, b: Side) -> None:
        try:
            await self.paired(fmt, a, b)
        except Exception:
            log.exception("the match of a pair could not be made")

    async def stop(self) -> None:
        if self._token is not None:
            await self.bus.release("pairer", self._token)
            self._token = None
