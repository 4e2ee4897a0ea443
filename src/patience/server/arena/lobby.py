"""Seeks and the lobby: a page waits in a pool, leaves it, asks who waits; a pair the pairer found is made
into a match on the process of one of its players (the one the pairer is on, else the one who waited
longer): that player's intents never cross the bus, and matches spread over the processes as their players
do (docs/scaling.md). A tournament's pair is started here too.

A seek reads the seeker's rating and mark (one query for a burst of seeks,
:class:`patience.server.storage.reader.GroupReader`) and whether they play a match (the bus), then writes
to the pool once, without a lock (:meth:`patience.server.arena.pools.Pools.seek`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio

from patience.duel import Format
from patience.errors import PatienceError
from patience.ratings import Rating
from patience.server.arena.matches import LiveMatch
from patience.server.arena.nodes import Nodes, Outbound, Start
from patience.server.arena.owned import OwnedMatches
from patience.server.arena.pools import Pools, Side
from patience.server.arena.view import LobbyView
from patience.server.bus import Bus
from patience.server.live import Connection, Now
from patience.server.marks import mark_of, told
from patience.server.protocol import SeekIntent
from patience.server.storage.league import load_rating, seekers_facts
from patience.server.storage.reader import GroupReader
from patience.server.storage.store import Store

__all__ = ["START_CHECKS", "START_CHECK_SECONDS", "Lobby"]

log = logging.getLogger("patience.server")

START_CHECK_SECONDS = 6.0
"""A pair sent to another process to be made into a match is looked at again this often: once that
process has died with neither player in a match (the envelope died with it), each whose page is still
open waits in the pool again. A process that is alive makes it, however busy: it is never second-guessed."""
START_CHECKS = 20  # looks at most (two minutes)


class Lobby:
    """The seeks of this process's pages, the pairs the pairer found, the lobby's pages told of changes."""

    def __init__(self, store: Store, bus: Bus, nodes: Nodes, out: Outbound, owned: OwnedMatches, pools: Pools,
                 view: LobbyView, *, wall: Now = time.time) -> None:
        self.store = store
        self.bus = bus
        self.node = bus.node
        self.nodes = nodes
        self.out = out
        self.owned = owned
        self.pools = pools
        self.view = view
        self.wall = wall
        # a burst of seeks reads its seekers' ratings and marks a few hundred to a query
        self.seekers: GroupReader[tuple[Rating, str | None]] = GroupReader(
            lambda game, users: seekers_facts(self.store.engine, game, users))
        self._checks: set[asyncio.Task[None]] = set()  # pairs sent to other processes, looked at again later

    def stop(self) -> None:
        for check in list(self._checks):
            check.cancel()

    async def changed(self) -> None:
        await self.view.changed()

    # -- what a seek reads -----------------------------------------------------------------------

    @staticmethod
    def format(conn: Connection, key: str) -> Format | None:
        try:
            return Format.from_key(key)
        except PatienceError as exc:
            conn.error("bad_format", str(exc))
            return None

    async def busy(self, conn: Connection) -> bool:
        """Does the page's player play a match now? Then the page is told which."""
        user = conn.user
        if user is None:
            return False
        playing = await self.owned.playing(user.id)
        if playing is None:
            return False
        conn.error("in_match", f"finish your match {playing} first")
        return True

    async def refused(self, conn: Connection) -> bool:
        """A marked account plays no rated game (:mod:`patience.server.marks`): True, and the page told why."""
        assert conn.user is not None
        return told(conn, await self.mark_of(conn.user.id))

    async def mark_of(self, user_id: str) -> str | None:
        return await mark_of(self.store.engine, user_id)

    async def rating(self, user_id: str, game: str) -> Rating:
        return await anyio.to_thread.run_sync(load_rating, self.store.engine, user_id, game)

    # -- seeks -----------------------------------------------------------------------------------

    async def seek(self, conn: Connection, message: SeekIntent) -> None:
        """Wait in a pool (the pairer pairs within a wave); the page is told at once. A marked account, or
        one that plays a match, is refused: the rating and the mark are one reading of the database (shared
        by a burst of seeks), the match one of the bus, and the pool is then one write."""
        user = conn.user
        assert user is not None
        fmt = self.format(conn, message.format)
        if fmt is None:
            return
        rating, mark = await self.seekers.get(fmt.game, user.id) or (Rating(), None)
        if told(conn, mark) or await self.busy(conn):
            return
        shown = conn.match  # a match over, or none
        await self.pools.seek(Side(user.id, user.name, rating, self.node, conn.id), fmt)
        await self.view.watch(conn)
        await self.changed()
        view = await self.view.for_seeker(conn, fmt.key)
        if conn.match is shown:  # not paired meanwhile (then the page has its new match, not this)
            conn.send(view)

    async def unseek(self, conn: Connection) -> None:
        assert conn.user is not None
        if await self.pools.unseek(conn.user.id):
            await self.changed()
        conn.send(await self.view.for_page(conn))

    async def waiting(self, key: str) -> list[str]:
        """The ids of the players waiting in pool ``key``, longest waiting first."""
        return [user for user, (_, since) in sorted((await self.pools.waiting(key)).items(), key=lambda e: e[1][1])]

    async def forget_page(self, user_id: str, peer: str) -> None:
        """Nobody is paired with a page that has gone, nor challenged through it; it is not online."""
        changed = await self.view.forget_page(user_id, peer)
        changed |= await self.pools.forget_page(user_id, peer)
        if changed:
            await self.changed()

    # -- making matches ----------------------------------------------------------------------

    async def paired(self, fmt: Format, a: Side, b: Side) -> None:
        """A pair from the pairer: the match is made on the process of one of the players (this one
        if either is here, else the one who waited longer), so their intents stay on that process."""
        if self.node in (a.node, b.node):
            await self.owned.make(fmt, a, b)
            return
        owner = a.node if await self.nodes.alive(a.node) or not await self.nodes.alive(b.node) else b.node
        self.out.send(owner, Start(fmt.key, [(side.user, side.entry(0).decode()) for side in (a, b)]))
        task = asyncio.get_running_loop().create_task(self._check_started(fmt, a, b, owner, self.wall()))
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    async def _check_started(self, fmt: Format, a: Side, b: Side, owner: str, since: float) -> None:
        """A pair whose :class:`~patience.server.arena.nodes.Start` was lost with the process it went to:
        back into the pool."""
        try:
            for _ in range(START_CHECKS):
                await asyncio.sleep(START_CHECK_SECONDS)
                if any([await self.bus.hget("busy", side.user) is not None for side in (a, b)]):
                    return  # the match was made (or one of them plays another): nothing was lost
                if not await self.nodes.alive(owner):
                    break
            else:
                return  # the owner lives on: it makes the match, or its players' pages see none and seek again
            again = False
            for side in (a, b):
                if (await self.nodes.alive(side.node) and await self.bus.hget("online", f"{side.user}/{side.peer}")
                        and await self.pools.seeking(side.user) is None):
                    await self.pools.seek_again(side, fmt, side.entry(since))
                    again = True
            if again:
                log.warning("a %s pair was not made into a match in %.0f s: its players wait again", fmt.key,
                            START_CHECK_SECONDS)
                await self.changed()
        except Exception:  # the bus is away: the players' pages seek again when they see no match
            log.exception("checking that a pair was made into a match failed")

    async def start_pair(self, fmt: Format, sides: list[tuple[str, str, Rating, str, str]], match_id: str,
                         also: Iterable[Callable[[Any], None]] = ()) -> bool:
        """Start match ``match_id`` of two players (user, name, rating, process and page of each), as
        a tournament pairs them: out of any pool they wait in; False if it could not be started."""
        a, b = (Side(*side) for side in sides)
        for side in (a, b):
            if await self.pools.unseek(side.user):
                await self.changed()
        made: LiveMatch | None = await self.owned.make(fmt, a, b, also=also, match_id=match_id)
        return made is not None
