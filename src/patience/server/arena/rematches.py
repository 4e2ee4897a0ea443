"""Rematches: once a match owned here is over, either page may offer the same duel again; when both have,
it is made like any other match (a new secret deal from the stock, the same format), on this process.
A page that leaves after the end, a mark of either player or the new match closes the offer.

A mark (:mod:`patience.server.marks`) counts at the moment of the offer, on any process; a mark heard on
the bus closes the rematches of the matches owned here with that account, and ends one of its going on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from patience.ratings import Rating
from patience.server.arena.matches import LiveMatch
from patience.server.arena.nodes import RemotePeer
from patience.server.arena.owned import OwnedMatches
from patience.server.arena.pools import Pools, Side
from patience.server.arena.view import LobbyView
from patience.server.live import Peer
from patience.server.marks import mark_of, told
from patience.server.protocol import DeclineIntent, RematchIntent, RematchMsg, encode
from patience.server.storage.store import Store

__all__ = ["Rematches"]

log = logging.getLogger("patience.server")


class Rematches:
    """The rematches of the matches owned here. ``rating`` is a player's rating in a game."""

    def __init__(self, store: Store, owned: OwnedMatches, pools: Pools, view: LobbyView,
                 rating: Callable[[str, str], Awaitable[Rating]]) -> None:
        self.store = store
        self.node = owned.node
        self.owned = owned
        self.pools = pools
        self.view = view
        self.rating = rating
        self._tasks: set[asyncio.Task[None]] = set()  # matches of a marked account being ended

    def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def left(self, live: LiveMatch, side: int) -> None:
        """A page of ``side`` left a match: when none is left after the end, no rematch of it any more."""
        if live.conns[side] or not live.match.is_over or live.rematch_closed:
            return
        live.rematch_closed = True
        live.offers = [False, False]
        data = encode(RematchMsg(live.id, "left", side))
        for conn in live.conns[1 - side]:
            conn.send(data)

    def _close(self, live: LiveMatch, side: int) -> None:
        """Side ``side`` of a finished match is marked: no rematch of it; both pages are told (``marked``)."""
        if not live.rematch_closed:
            live.rematch_closed = True
            live.offers = [False, False]
            self._tell(live, "marked", side)

    @staticmethod
    def _tell(live: LiveMatch, state: str, side: int) -> None:
        data = encode(RematchMsg(live.id, state, side))
        for conns in live.conns:
            for conn in conns:
                conn.send(data)

    async def answer(self, peer: Peer, live: LiveMatch, intent: RematchIntent | DeclineIntent) -> None:
        """Page ``peer`` (here or elsewhere) offers, withdraws or declines a rematch of ``live``."""
        if self.owned.matches.get(live.id) is not live:
            peer.error("no_such_match", "this match is gone: no rematch of it")
            return
        if not live.match.is_over:
            peer.error("not_over", "a rematch is offered once the match is over")
            return
        side = peer.side
        if isinstance(intent, RematchIntent):
            # a mark counts at the moment of the action, on any process: never a rated match of a marked account
            for s, player in enumerate(live.match.players):
                category = await mark_of(self.store.engine, player.id)
                if category is not None:
                    async with live.lock:
                        self._close(live, s)
                    if s == side:
                        told(peer, category)
                    else:
                        peer.error("marked", f"{player.name} is marked for fair play: no rematch")
                    return
        async with live.lock:
            sides = await self._settle(peer, live, intent, side)
        if sides is None:
            return
        for side_ in sides:
            if await self.pools.unseek(side_.user):
                await self.view.changed()
        # a new match like any other: a new secret deal from the stock, the same format
        await self.owned.make(live.match.format, sides[1], sides[0])

    async def _settle(self, peer: Peer, live: LiveMatch, intent: RematchIntent | DeclineIntent,
                      side: int) -> list[Side] | None:
        """Under the match's lock: the offers after ``intent``; both sides of the new match once both offered."""
        if live.rematch_closed:
            peer.error("no_rematch", "your opponent has left: no rematch")
            return None
        if isinstance(intent, DeclineIntent):
            if live.offers[side]:
                live.offers[side] = False
                self._tell(live, "withdrew", side)
            elif live.offers[1 - side]:
                live.offers[1 - side] = False
                self._tell(live, "declined", side)
            return None
        live.offers[side] = True
        if not all(live.offers):
            self._tell(live, "offered", side)
            return None
        sides = []
        for s, player in enumerate(live.match.players):
            page = next(iter(live.conns[s]), None)
            if page is None:
                peer.error("no_rematch", "your opponent has left: no rematch")
                return None
            node = page.node if isinstance(page, RemotePeer) else self.node
            if await self.owned.playing(player.id, but=live.id) is not None:  # this one is over
                peer.error("in_match", f"{player.name} plays another match now")
                live.offers = [False, False]
                self._tell(live, "withdrew", s)
                return None
            rating = await self.rating(player.id, live.match.game)
            sides.append(Side(player.id, player.name, rating, node, page.id))
        live.rematch_closed = True  # this match's pages move on to the new one: nobody "left"
        live.offers = [False, False]
        return sides

    # -- fair play -------------------------------------------------------------------------------

    def marked(self, user_id: str) -> None:
        """Every process, when an account is marked: no rematch of a finished match with it (both pages are
        told), and a match of it going on here ends now (:meth:`OwnedMatches.end_marked`)."""
        for live in list(self.owned.matches.values()):
            side = live.side_of(user_id)
            if side is None:
                continue
            if not live.match.is_over:
                task = asyncio.get_running_loop().create_task(self._end_marked(live, side))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            elif not live.rematch_closed:
                self._close(live, side)

    async def _end_marked(self, live: LiveMatch, side: int) -> None:
        try:
            await self.owned.end_marked(live, side)
        except Exception:
            log.exception("the match %s of a marked account could not be ended", live.id)
            return
        async with live.lock:
            self._close(live, side)
