"""Pages and their matches on different processes, and the envelopes between the processes.

A match is played by its owner (:mod:`patience.server.arena.owned`). A page here that shows a match owned
elsewhere holds a :class:`~patience.server.arena.nodes.RemoteMatch`: its intents are forwarded to the owner
(:class:`~patience.server.arena.nodes.Act`) and kept until answered; a page elsewhere that plays a match
owned here is a :class:`~patience.server.arena.nodes.RemotePeer` at the owner. What comes over the bus is
decoded by type (:func:`~patience.server.arena.nodes.read_envelopes`) and handed to one method per kind.

When an owner stops, the pages here that show its matches join them again wherever they are played now
(taking one over if nobody plays it) and send their unanswered intents there: every intent is answered,
once (its ack).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from patience.duel import Format
from patience.server.arena.matches import Intent, LiveMatch
from patience.server.arena.nodes import (
    Act,
    Envelope,
    Join,
    Joined,
    Leave,
    Matched,
    Moved,
    Out,
    Outbound,
    Refused,
    RemoteMatch,
    RemotePeer,
    Start,
    Unwatch,
    Watch,
    channel_of,
    read_envelopes,
)
from patience.server.arena.owned import OwnedMatches, encode_error
from patience.server.arena.pools import Side
from patience.server.arena.rematches import Rematches
from patience.server.arena.spectators import Spectators
from patience.server.bus import Bus
from patience.server.live import Connection, Peer
from patience.server.protocol import (
    DeclineIntent,
    GiveUpIntent,
    MoveIntent,
    ProtocolError,
    RematchIntent,
    StockIntent,
    UndoIntent,
    decode,
    encode,
)

__all__ = ["MATCH_INTENTS", "Elsewhere", "Pages"]

log = logging.getLogger("patience.server")

MATCH_INTENTS = (MoveIntent, StockIntent, UndoIntent, GiveUpIntent)


class Pages(Protocol):
    """What this room needs of the pages' room above it (the arena, :mod:`.routing`)."""

    async def show(self, conn: Connection, match_id: str, seen: int) -> None:
        """Put page ``conn`` of this process on match ``match_id``, wherever it is played."""

    def detach(self, conn: Connection) -> None:
        """Page ``conn`` shows no match any more."""


class Elsewhere:
    """The matches owned elsewhere that pages here show (``remote``, by match id) and the pages elsewhere
    that play a match owned here (``remote_peers``, by page id)."""

    def __init__(self, bus: Bus, out: Outbound, owned: OwnedMatches, spectators: Spectators,
                 rematches: Rematches, peers: dict[str, Connection], pages: Pages) -> None:
        self.bus = bus
        self.node = bus.node
        self.out = out
        self.owned = owned
        self.spectators = spectators
        self.rematches = rematches
        self.peers = peers
        self.pages = pages
        self.remote: dict[str, RemoteMatch] = {}
        self.remote_peers: dict[str, RemotePeer] = {}

    async def start(self) -> None:
        await self.bus.subscribe(channel_of(self.node), self._on_message)

    # -- a page here, a match elsewhere ------------------------------------------------------------

    def show(self, conn: Connection, match_id: str, owner: str, seen: int) -> None:
        """Show match ``match_id``, owned by process ``owner``, on page ``conn`` (detached from any other)."""
        remote = self.remote.setdefault(match_id, RemoteMatch(match_id, owner))
        if remote.owner != owner:  # it moved: every page here follows it there
            remote.owner = owner
        remote.conns.add(conn)
        conn.match = remote
        user = conn.user.id if conn.user is not None else ""
        self.out.send(owner, Join(match_id, conn.id, self.node, user, conn.cid, seen))

    def detach(self, conn: Connection, remote: RemoteMatch) -> None:
        remote.detach(conn, self.out)
        if not remote.conns:
            self.remote.pop(remote.id, None)

    def forward(self, conn: Connection, remote: RemoteMatch, message: Intent | RematchIntent | DeclineIntent) -> None:
        """An intent of page ``conn`` goes to the owner of its match (an intent of play is kept until answered)."""
        if isinstance(message, MATCH_INTENTS):
            remote.unanswered[(conn.id, message.ack)] = (conn, message)
        self.out.send(remote.owner, Act(remote.id, conn.id, self.node, encode(message).decode(), conn.cid))

    async def act(self, conn: Peer, intent: Intent) -> None:
        """An intent of play of page ``conn``, wherever its match is played."""
        shown = conn.match
        if isinstance(shown, RemoteMatch):
            assert isinstance(conn, Connection)
            self.forward(conn, shown, intent)
        elif isinstance(shown, LiveMatch):
            await self.owned.play(conn, shown, intent)
        else:
            conn.error("no_game", "join a match first", intent.ack)

    async def follow(self) -> None:
        """The pages here of a match whose owner stopped join it again wherever it is played now."""
        for remote in list(self.remote.values()):
            if not await self.owned.nodes.alive(remote.owner):
                await self._rejoin(remote.id)

    async def _rejoin(self, match_id: str) -> None:
        """The pages here that show match ``match_id``, owned elsewhere, join it again wherever it is
        played now (taking it over if nobody plays it)."""
        remote = self.remote.pop(match_id, None)
        if remote is None:
            return
        for conn in [c for c in remote.conns if not c.dropped]:
            conn.match = None
            await self.pages.show(conn, match_id, 0)
        await self._send_again(remote)

    async def _send_again(self, remote: RemoteMatch) -> None:
        """The intents the old owner of a match never answered go to its new owner (which answers
        one it had logged from its log, by its ack, and plays the others): every intent is answered."""
        for conn, intent in list(remote.unanswered.values()):
            if not conn.dropped and conn.match is not None:
                await self.act(conn, intent)

    def lost(self, live: LiveMatch) -> None:
        """The lease of ``live`` was lost: its pages here and elsewhere join it at its new owner."""
        for side_conns in live.conns:
            for peer in list(side_conns):
                if isinstance(peer, Connection):
                    remote = self.remote.setdefault(live.id, RemoteMatch(live.id, ""))
                    peer.match = remote
                    remote.conns.add(peer)
                elif isinstance(peer, RemotePeer):
                    self.remote_peers.pop(peer.id, None)
                    self.out.send(peer.node, Moved(live.id, peer.id))
        asyncio.get_running_loop().create_task(self._rejoin(live.id))

    # -- a match here: one playing page per side, here or elsewhere ---------------------------------

    def seat(self, peer: Peer, live: LiveMatch, side: int) -> None:
        """Page ``peer`` plays ``side`` of ``live``: the newest page plays, an older one is told and let go."""
        for old in [c for c in live.conns[side] if c is not peer]:
            live.conns[side].discard(old)
            old.error("replaced", "this match is played in another window now")
            if isinstance(old, RemotePeer):
                self.remote_peers.pop(old.id, None)
                self.out.send(old.node, Refused(old.id))
            else:
                old.match = None
        peer.match = live
        peer.side = side
        live.conns[side].add(peer)

    # -- what other processes say ------------------------------------------------------------------

    def _on_message(self, data: bytes) -> None:
        for envelope in read_envelopes(data):
            asyncio.get_running_loop().create_task(self._handle(envelope))

    async def _handle(self, envelope: Envelope) -> None:
        try:
            match envelope:
                case Out():
                    self._deliver(envelope)
                case Joined():
                    self._joined(envelope)
                case Refused():
                    self._refused(envelope)
                case Matched():
                    await self._matched(envelope)
                case Moved():
                    await self._moved(envelope)
                case Start():
                    await self._start(envelope)
                case Join():
                    await self._join(envelope)
                case Act():
                    await self._act(envelope)
                case Leave():
                    self._leave(envelope)
                case Watch():
                    await self.spectators.remote_watch(envelope)
                case Unwatch():
                    self.spectators.remote_unwatch(envelope.page)
        except Exception:
            log.exception("a message from another process failed: %s", type(envelope).__name__)

    # the owner's word to this process

    def _deliver(self, out: Out) -> None:
        for peer, text in out.messages:
            conn = self.peers.get(peer)
            if conn is not None:
                data = text.encode()
                if isinstance(conn.match, RemoteMatch):
                    conn.match.answered(peer, data)
                conn.send(data)

    def _joined(self, joined: Joined) -> None:
        conn = self.peers.get(joined.page)
        if conn is not None:
            conn.side = joined.side

    def _refused(self, refused: Refused) -> None:
        conn = self.peers.get(refused.page)
        if conn is not None:
            self.pages.detach(conn)

    async def _matched(self, matched: Matched) -> None:
        conn = self.peers.get(matched.page)
        if conn is not None and not conn.dropped:
            await self.pages.show(conn, matched.match, 0)

    async def _moved(self, moved: Moved) -> None:
        conn = self.peers.get(moved.page)
        shown = conn.match if conn is not None else None
        if conn is None or not isinstance(shown, RemoteMatch) or shown.id != moved.match:
            return
        shown.conns.discard(conn)
        if not shown.conns:
            self.remote.pop(shown.id, None)
        conn.match = None
        await self.pages.show(conn, moved.match, 0)
        await self._send_again(RemoteMatch(moved.match, shown.owner, unanswered={
            key: value for key, value in shown.unanswered.items() if key[0] == conn.id}))

    async def _start(self, start: Start) -> None:
        a, b = (Side.of(user, entry.encode())[0] for user, entry in start.sides)
        await self.owned.make(Format.from_key(start.format), a, b)

    # a page elsewhere, a match here

    async def _join(self, join: Join) -> None:
        peer = self.remote_peers.get(join.page) or RemotePeer(join.page, join.node, join.user, self.out)
        peer.cid = join.cid
        live = self.owned.matches.get(join.match)
        if live is None and self.owned.taking(join.match):  # its take-over here is under way: wait for it
            live = await self.owned.take_over(join.match)
        if live is None:  # not (or no longer) here: the page asks again and finds the owner
            peer.error("server_error", f"match {join.match} is being restored: reconnect")
            self.out.send(join.node, Refused(join.page))
            return
        side = live.side_of(join.user)
        if side is None:
            peer.error("not_your_match", "this match is between two other players")
            self.out.send(join.node, Refused(join.page))
            return
        self.remote_peers[join.page] = peer
        self.out.send(join.node, Joined(join.page, side))
        self.seat(peer, live, side)
        live.catch_up(peer, side, join.seen)

    async def _act(self, act: Act) -> None:
        peer = self.remote_peers.get(act.page)
        live = self.owned.matches.get(act.match)
        if peer is None or live is None or peer.match is not live:
            self.out.to_peer(act.node, act.page, encode_error("server_error", "join the match again: reconnect"))
            return
        peer.cid = act.cid
        try:
            message = decode(act.intent)
        except ProtocolError as exc:
            peer.error(exc.code, str(exc))
            return
        if isinstance(message, MATCH_INTENTS):
            await self.act(peer, message)
        elif isinstance(message, RematchIntent | DeclineIntent):
            await self.rematches.answer(peer, live, message)

    def _leave(self, leave: Leave) -> None:
        peer = self.remote_peers.pop(leave.page, None)
        live = self.owned.matches.get(leave.match)
        if peer is not None and live is not None:
            live.conns[peer.side].discard(peer)
            self.rematches.left(live, peer.side)
