"""The arena: every duel, on one server process or many, drawn as rooms that each know only what
is below them:

- :mod:`~patience.server.arena.nodes` — the processes of the arena, and the envelopes between them;
- :mod:`~patience.server.arena.pools` — the pools of the lobby: seeks are single writes, one
  process pairs them in waves;
- :mod:`~patience.server.arena.owned` — the matches this process owns: made, played and logged
  here, their clocks, their leases, taken over from a process that stopped;
- :mod:`~patience.server.arena.view` — the lobby as its pages see it;
- :mod:`~patience.server.arena.spectators` and :mod:`~patience.server.arena.challenges`;
- this module — the pages: which room a message is for, which match a page shows and where it
  is played (a page on another process than its match's owner reaches it through envelopes), a
  rematch, and the clocks and loops of the whole.

A pair found by the pairer is made into a match on the process of one of its players (the one
the pairer is on, else the one who waited longer): that player's intents never cross the bus, and
matches spread over the processes as their players do (docs/scaling.md).

The clocks of the matches owned here run in their own loop (:meth:`Arena.run_clock`): pairing,
tournaments and the leases each have a loop of their own, so no clock waits for them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio

from patience.duel import Format
from patience.errors import PatienceError
from patience.ratings import Rating
from patience.server.accounts import Hashing, owasp_hasher
from patience.server.arena.apart import PlayNow
from patience.server.arena.challenges import CHALLENGE_SECONDS, Challenges
from patience.server.arena.dealstock import DealStock
from patience.server.arena.matches import COUNTDOWN_SECONDS, Intent, LiveMatch
from patience.server.arena.nodes import (
    Envelope,
    Nodes,
    Outbound,
    RemoteMatch,
    RemotePeer,
    channel_of,
    read_envelope,
    unpacked,
)
from patience.server.arena.owned import LEASE_SECONDS, OwnedMatches, encode_error
from patience.server.arena.pools import FORMAT_KEYS, Pools, Side
from patience.server.arena.spectators import Spectators
from patience.server.arena.tournaments import TOURNAMENT_MESSAGES, Tournaments
from patience.server.arena.view import LobbyView
from patience.server.bus import Bus, MemoryBus, stop_tasks
from patience.server.live import Connection, Now, Peer
from patience.server.protocol import (
    AcceptIntent,
    ChallengeIntent,
    ChallengeLook,
    DeclineIntent,
    GiveUpIntent,
    HintAsk,
    LobbyAsk,
    MatchJoin,
    MoveIntent,
    Ping,
    Pong,
    ProtocolError,
    RematchIntent,
    RematchMsg,
    SeekIntent,
    StockIntent,
    TargetsAsk,
    TourAsk,
    TourJoin,
    TourPause,
    UndoIntent,
    UnseekIntent,
    WatchIntent,
    decode,
    encode,
)
from patience.server.storage.fairplay import marked_category
from patience.server.storage.league import load_rating, seekers_facts
from patience.server.storage.reader import GroupReader
from patience.server.storage.store import Store
from patience.server.storage.writer import GroupWriter

__all__ = ["CHALLENGE_SECONDS", "FORMAT_KEYS", "LEASE_SECONDS", "Arena"]

log = logging.getLogger("patience.server")

RENEW_SECONDS = 1.0  # how often the leases are renewed (and stopped processes looked for)
START_CHECK_SECONDS = 6.0
"""A pair sent to another process to be made into a match is looked at again this often: once that
process has died with neither player in a match (the envelope died with it), each whose page is still
open waits in the pool again. A process that is alive makes it, however busy: it is never second-guessed."""
START_CHECKS = 20  # looks at most (two minutes)
TOURNAMENT_SECONDS = 1.0  # how often the tournaments are paired and their standings told

MATCH_INTENTS = (MoveIntent, StockIntent, UndoIntent, GiveUpIntent)
REMATCH_INTENTS = (RematchIntent, DeclineIntent)
ARENA_MESSAGES = (LobbyAsk, SeekIntent, UnseekIntent, ChallengeIntent, AcceptIntent, MatchJoin, ChallengeLook,
                  RematchIntent, DeclineIntent, WatchIntent, *TOURNAMENT_MESSAGES)


class Arena:
    """Every duel: the pools of the lobby, open challenges, live matches and their log.

    ``now`` is the clock of matches (monotonic, this process's); ``wall`` the clock of what
    processes and restarts share (seconds since the epoch): waiting since, challenges made."""

    def __init__(self, store: Store, bus: Bus | None = None, *, now: Now = time.monotonic, wall: Now = time.time,
                 deals: DealStock | None = None, writer: GroupWriter | None = None,
                 countdown: float = COUNTDOWN_SECONDS, schedule: bool = True,
                 hashing: Hashing | None = None) -> None:
        """``hashing``: the accounts' password hashing, for tournaments' passwords (its own if None)."""
        self.store = store
        self.bus = bus if bus is not None else MemoryBus()
        self.node = self.bus.node
        self.now = now
        self.wall = wall
        self.deals = deals if deals is not None else DealStock(store, 0)
        self.writer = writer if writer is not None else GroupWriter(store)
        # a burst of seeks reads its seekers' ratings and marks a few hundred to a query
        self.seekers: GroupReader[tuple[Rating, str | None]] = GroupReader(
            lambda game, users: seekers_facts(self.store.engine, game, users))
        self.out = Outbound(self.bus)
        self.hashing = hashing if hashing is not None else Hashing(owasp_hasher())
        self.peers: dict[str, Connection] = {}  # this process's pages that talked to the arena, by id
        self.remote: dict[str, RemoteMatch] = {}  # matches owned elsewhere that pages here show
        self.remote_peers: dict[str, RemotePeer] = {}  # pages elsewhere that play a match owned here
        self.nodes = Nodes(self.bus, now)
        self.owned = OwnedMatches(store, self.bus, self.nodes, self.out, self.deals, self.writer, self.peers,
                                  now=now, wall=wall, countdown=countdown)
        self.pools = Pools(self.bus, self.nodes, wall, self._paired, self._lobby_changed)
        self.view = LobbyView(self.bus, self.nodes, self.pools, now)
        self.spectators = Spectators(self.bus, self.nodes, self.out, self.owned, self.peers)
        self.challenges = Challenges(store, self.bus, self.writer, self.view, self.pools, self.peers, wall,
                                     self._make, self._busy, self._rating, self.owned.playing, self._mark_of)
        self.playnow = PlayNow(store, self.bus, self.deals, self.peers, wall=wall)
        self.owned.show = self._join
        self.owned.lost = self._lost
        self.owned.changed = self._lobby_changed
        self._tasks: list[asyncio.Task[None]] = []
        self._checks: set[asyncio.Task[None]] = set()  # pairs sent to other processes, looked at again later
        self._loop: asyncio.AbstractEventLoop | None = None  # the arena's, once started (marks from threads)
        self.tournaments = Tournaments(self, schedule=schedule)

    @property
    def matches(self) -> dict[str, LiveMatch]:
        """The matches this process owns, by id."""
        return self.owned.matches

    @property
    def takeovers(self) -> int:
        return self.owned.takeovers

    # -- starting and stopping ---------------------------------------------------------------

    async def start(self) -> int:
        """Join the arena: listen on the bus, take up open challenges and every live match nobody
        owns (after a restart); returns how many matches were taken up."""
        await self.bus.subscribe(channel_of(self.node), self._on_envelope)
        await self.bus.subscribe("marked", self._on_marked)
        self._loop = asyncio.get_running_loop()
        await self.view.start()
        await self.nodes.join()
        await self.pools.lead()  # the first process of an arena pairs (and tells the lobby) from the start
        await self.challenges.take_up()
        taken = await self.owned.take_up()
        await self.playnow.start()
        self._tasks = [asyncio.create_task(self.playnow.run(), name="arena-playnow"),
                       asyncio.create_task(self.out.run(), name="arena-outbound"),
                       asyncio.create_task(self._keep_leases(), name="arena-leases"),
                       asyncio.create_task(self.pools.run(), name="arena-pairer"),
                       asyncio.create_task(self._run_tournaments(), name="arena-tournaments")]
        return taken

    restore = start

    async def stop(self) -> None:
        """Leave the arena: let go of every lease, so that other processes take the matches at once."""
        await stop_tasks(self._tasks)
        for check in list(self._checks):
            check.cancel()
        await self.view.stop()
        await self.playnow.stop()
        await self.writer.flush()
        await self.owned.stop()
        try:
            await self.pools.stop()
        except Exception:  # the bus is away: the pairer's lease lapses by itself
            log.warning("the pairer's lease could not be given back")
        await self.nodes.leave()
        try:
            await self.out.flush()
        except Exception:
            log.warning("the last messages to other processes could not be sent")

    async def _keep_leases(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            try:
                await self.renew()
            except Exception:  # pragma: no cover - the bus is away: try again
                log.exception("renewing the arena's leases failed")

    async def renew(self) -> None:
        """Renew this process's leases; give up the matches whose lease was lost; take over the
        matches of processes that stopped (those pages here show first, then every one)."""
        await self.nodes.keep()
        await self.pools.restore(self._connected)
        await self.owned.renew()
        for remote in list(self.remote.values()):
            if await self.nodes.alive(remote.owner):
                continue
            await self._rejoin(remote.id)
        await self.owned.sweep()
        await self.spectators.follow()

    def _connected(self, user_id: str, peer: str) -> bool:
        """Is page ``peer`` of ``user_id`` connected to this process?"""
        conn = self.peers.get(peer)
        return conn is not None and not conn.dropped and conn.user is not None and conn.user.id == user_id

    async def _rejoin(self, match_id: str) -> None:
        """The pages here that show match ``match_id``, owned elsewhere, join it again wherever it is
        played now (taking it over if nobody plays it)."""
        remote = self.remote.pop(match_id, None)
        if remote is None:
            return
        for conn in [c for c in remote.conns if not c.dropped]:
            conn.match = None
            await self._join(conn, match_id, 0)
        await self._send_again(remote)

    async def _send_again(self, remote: RemoteMatch) -> None:
        """The intents the old owner of a match never answered go to its new owner (which answers
        one it had logged from its log, by its ack, and plays the others): every intent is answered."""
        for conn, intent in list(remote.unanswered.values()):
            if not conn.dropped and conn.match is not None:
                await self.act(conn, intent)

    def _lost(self, live: LiveMatch) -> None:
        """The lease of ``live`` was lost: its pages here and elsewhere join it at its new owner."""
        for side_conns in live.conns:
            for peer in list(side_conns):
                if isinstance(peer, Connection):
                    peer.match = RemoteMatch(live.id, "")
                    self.remote.setdefault(live.id, peer.match).conns.add(peer)
                else:
                    self.remote_peers.pop(peer.id, None)
                    self.out.send(peer.node, Envelope("moved", m=live.id, x=peer.id))
        asyncio.get_running_loop().create_task(self._rejoin(live.id))

    # -- the clocks ----------------------------------------------------------------------------

    async def tick(self) -> None:
        """The clock of every match owned here (time penalties, time-outs and heartbeats, logged
        before told). Nothing else: pairing and tournaments run in loops of their own."""
        await self.owned.tick()

    async def run_clock(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.tick()
            except Exception:  # pragma: no cover - one broken match must not stop every clock
                log.exception("duel tick failed")

    async def _run_tournaments(self) -> None:
        while True:
            await asyncio.sleep(TOURNAMENT_SECONDS)
            try:
                await self.tournaments.tick(pairer=self.pools.pairing_here)
            except Exception:  # pragma: no cover - the bus or the database is away: the next round tries again
                log.exception("tournament tick failed")

    # -- connections -------------------------------------------------------------------------

    def takes(self, conn: Connection, message: Any) -> bool:
        """Is ``message`` for the arena (a duel message, or an intent while the page shows a match)?"""
        if isinstance(message, ARENA_MESSAGES):
            return True
        if conn.match is not None:
            if isinstance(message, MoveIntent | StockIntent | UndoIntent | GiveUpIntent | HintAsk | TargetsAsk
                          | Ping):
                return True
            self.detach(conn)  # the page went on to a solo game
        return False

    def detach(self, conn: Connection) -> None:
        shown = conn.match
        if isinstance(shown, LiveMatch):
            shown.conns[conn.side].discard(conn)
            self._left(shown, conn.side)
        elif isinstance(shown, RemoteMatch):
            shown.detach(conn, self.out)
            if not shown.conns:
                self.remote.pop(shown.id, None)
        conn.match = None

    def disconnect(self, conn: Connection) -> None:
        self.detach(conn)
        self.spectators.unwatch(conn)
        self.view.watchers.discard(conn)
        self.peers.pop(conn.id, None)
        user = conn.user
        if user is not None:
            asyncio.get_running_loop().create_task(self._forget_page(user.id, conn.id))
        if conn.id in self.tournaments.shown:
            asyncio.get_running_loop().create_task(self.tournaments.disconnect(conn))

    async def _forget_page(self, user_id: str, peer: str) -> None:
        """Nobody is paired with a page that has gone, nor challenged through it; it is not online."""
        changed = await self.view.forget_page(user_id, peer)
        changed |= await self.pools.forget_page(user_id, peer)
        if changed:
            await self._lobby_changed()

    async def handle(self, conn: Connection, message: Any) -> None:
        if conn.id not in self.peers and conn.user is not None:  # a player on a duel page: online
            await self.view.online(conn)  # the lobby pages count them at once
        self.peers[conn.id] = conn
        cid = getattr(message, "cid", None)
        if cid is not None:
            conn.cid = cid  # the page's id: acks count per page
        if isinstance(message, MATCH_INTENTS):
            await self.act(conn, message)
        elif isinstance(message, REMATCH_INTENTS):
            await self.rematch(conn, message)
        elif isinstance(message, WatchIntent):
            self.detach(conn)
            self.view.watchers.discard(conn)
            await self.spectators.watch(conn, message.id)
        elif isinstance(message, ChallengeLook):
            await self.challenges.look(conn, message.code)
        elif isinstance(message, Ping):  # answered here, whoever owns the match: the page asks whether we are alive
            shown = conn.match
            owned = isinstance(shown, LiveMatch)
            conn.send(encode(Pong(shown.match.sessions[conn.side].elapsed_ms() if owned else 0)))
        elif isinstance(message, HintAsk | TargetsAsk):
            conn.error("not_here", "hints are off in duels")
        elif isinstance(message, TourAsk):
            await self.tournaments.handle(conn, message)
        elif isinstance(message, LobbyAsk):
            self.spectators.unwatch(conn)
            await self.view.watch(conn)
            conn.send(await self.view.for_page(conn, fresh=True))
        elif isinstance(message, MatchJoin):
            self.spectators.unwatch(conn)
            await self._join(conn, message.id, message.v)
        elif conn.user is None:
            conn.error("sign_in", "duels are between people with an account: sign in first")
        elif isinstance(message, TourJoin) and self.tournaments.refused_lately(conn, message):
            return  # a guesser refused lately: answered from memory, before the database is asked for a mark
        elif isinstance(message, ChallengeIntent | AcceptIntent | TourJoin) and await self.refused(conn):
            return
        elif isinstance(message, SeekIntent):
            await self.seek(conn, message)
        elif isinstance(message, UnseekIntent):
            if await self.pools.unseek(conn.user.id):
                await self._lobby_changed()
            conn.send(await self.view.for_page(conn))
        elif isinstance(message, ChallengeIntent):
            fmt = self._format(conn, message.format)
            if fmt is not None:
                await self.challenges.challenge(conn, fmt, message)
        elif isinstance(message, AcceptIntent):
            await self.challenges.accept(conn, message)
        elif isinstance(message, TourJoin | TourPause):
            await self.tournaments.handle(conn, message)

    # -- the lobby ---------------------------------------------------------------------------

    def _format(self, conn: Connection, key: str) -> Format | None:
        try:
            return Format.from_key(key)
        except PatienceError as exc:
            conn.error("bad_format", str(exc))
            return None

    async def _busy(self, conn: Connection) -> bool:
        user = conn.user
        if user is None:
            return False
        playing = await self.owned.playing(user.id)
        if playing is None:
            return False
        conn.error("in_match", f"finish your match {playing} first")
        return True

    async def refused(self, conn: Connection) -> bool:
        """A marked account plays no rated game (docs/fairplay.md): True, and the page told why. Read from the
        database at the moment of the action, on whatever process: a mark counts at once everywhere."""
        assert conn.user is not None
        return self._marked(conn, await self._mark_of(conn.user.id))

    async def _mark_of(self, user_id: str) -> str | None:
        return await anyio.to_thread.run_sync(marked_category, self.store.engine, user_id)

    @staticmethod
    def _marked(conn: Peer, category: str | None) -> bool:
        if category is None:
            return False
        conn.error("marked", f"this account is marked ({category}): it plays no rated games")
        return True

    async def _rating(self, user_id: str, game: str) -> Rating:
        return await anyio.to_thread.run_sync(load_rating, self.store.engine, user_id, game)

    async def seek(self, conn: Connection, message: SeekIntent) -> None:
        """Wait in a pool: a single write (the pairer pairs within a wave); the page is told at once.
        A marked account is refused (the mark and the rating are one reading of the database)."""
        user = conn.user
        assert user is not None
        fmt = self._format(conn, message.format)
        if fmt is None:
            return
        rating, mark = await self.seekers.get(fmt.game, user.id) or (Rating(), None)
        if self._marked(conn, mark) or await self._busy(conn):
            return
        shown = conn.match  # a match over, or none
        await self.pools.seek(Side(user.id, user.name, rating, self.node, conn.id), fmt)
        await self.view.watch(conn)
        await self._lobby_changed()
        told = await self.view.for_seeker(conn, fmt.key)
        if conn.match is shown:  # not paired meanwhile (then the page has its new match, not this)
            conn.send(told)

    async def waiting(self, key: str) -> list[str]:
        """The ids of the players waiting in pool ``key``, longest waiting first."""
        return [user for user, (_, since) in sorted((await self.pools.waiting(key)).items(), key=lambda e: e[1][1])]

    async def _lobby_changed(self) -> None:
        await self.view.changed()

    # -- making matches ----------------------------------------------------------------------

    async def _paired(self, fmt: Format, a: Side, b: Side) -> None:
        """A pair from the pairer: the match is made on the process of one of the players (this one
        if either is here, else the one who waited longer), so their intents stay on that process."""
        if self.node in (a.node, b.node):
            await self._make(fmt, a, b)
            return
        owner = a.node if await self.nodes.alive(a.node) or not await self.nodes.alive(b.node) else b.node
        sides = [[side.user, side.entry(0).decode()] for side in (a, b)]
        self.out.send(owner, Envelope("start", m=fmt.key, d=json.dumps(sides)))
        task = asyncio.get_running_loop().create_task(self._check_started(fmt, a, b, owner, self.wall()))
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    async def _check_started(self, fmt: Format, a: Side, b: Side, owner: str, since: float) -> None:
        """A pair whose ``start`` envelope was lost with the process it went to: back into the pool."""
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
                await self._lobby_changed()
        except Exception:  # the bus is away: the players' pages seek again when they see no match
            log.exception("checking that a pair was made into a match failed")

    async def _make(self, fmt: Format, a: Side, b: Side, also: Iterable[Callable[[Any], None]] = (),
                    match_id: str | None = None) -> LiveMatch | None:
        return await self.owned.make(fmt, a, b, also, match_id)

    async def start_pair(self, fmt: Format, sides: list[tuple[str, str, Rating, str, str]], match_id: str,
                         also: Iterable[Callable[[Any], None]] = ()) -> bool:
        """Start match ``match_id`` of two players (user, name, rating, process and page of each), as
        a tournament pairs them: out of any pool they wait in; False if it could not be started."""
        a, b = (Side(*side) for side in sides)
        for side in (a, b):
            if await self.pools.unseek(side.user):
                await self._lobby_changed()
        return await self._make(fmt, a, b, also=also, match_id=match_id) is not None

    # -- a page and its match ----------------------------------------------------------------

    def _attach(self, conn: Peer, live: LiveMatch, side: int) -> None:
        if isinstance(conn, Connection):
            self.detach(conn)
            self.view.watchers.discard(conn)
        # one playing socket per player per match: the newest page plays, an older one is told and detached
        for old in [c for c in live.conns[side] if c is not conn]:
            live.conns[side].discard(old)
            old.error("replaced", "this match is played in another window now")
            if isinstance(old, Connection):
                old.match = None
            else:
                self.remote_peers.pop(old.id, None)
                self.out.send(old.node, Envelope("refused", x=old.id))
        conn.match = live  # type: ignore[attr-defined]
        conn.side = side
        live.conns[side].add(conn)  # type: ignore[arg-type]

    async def _join(self, conn: Connection, match_id: str, seen: int) -> None:
        """Show match ``match_id`` on this page: owned here, elsewhere, or by nobody (then take it)."""
        self.spectators.unwatch(conn)  # a page plays or watches, never both
        live = self.owned.matches.get(match_id)
        if live is None:
            owner = await self.bus.holder(f"match:{match_id}")
            if owner is None or (owner == self.node and self.owned.taking(match_id)):  # (or join the one under way)
                live = await self.owned.take_over(match_id)
                if live is None:
                    conn.error("no_such_match", f"no match {match_id} going on (a finished one is at /match?id=…)")
                    return
            elif owner != self.node:
                self.detach(conn)
                self.view.watchers.discard(conn)
                remote = self.remote.setdefault(match_id, RemoteMatch(match_id, owner))
                if remote.owner != owner:  # it moved: every page here follows it there
                    remote.owner = owner
                remote.conns.add(conn)
                conn.match = remote
                user = conn.user.id if conn.user is not None else ""
                self.out.send(owner, Envelope("join", m=match_id, x=conn.id, r=self.node, u=user, c=conn.cid,
                                              v=seen))
                return
            else:
                live = self.owned.matches.get(match_id)  # taken over here while the lease was asked for?
                if live is None:
                    conn.error("server_error", f"match {match_id} is being restored: reconnect")
                    return
        side = live.side_of(conn.user.id) if conn.user is not None else None
        if side is None:
            conn.error("not_your_match", "this match is between two other players")
            return
        self._attach(conn, live, side)
        live.catch_up(conn, side, seen)

    def _forward(self, conn: Connection, remote: RemoteMatch, message: Any) -> None:
        if isinstance(message, MATCH_INTENTS):
            remote.unanswered[(conn.id, message.ack)] = (conn, message)
        self.out.send(remote.owner, Envelope("act", m=remote.id, x=conn.id, r=self.node, c=conn.cid,
                                             d=encode(message).decode()))

    async def act(self, conn: Peer, intent: Intent) -> None:
        live = getattr(conn, "match", None)
        if isinstance(live, RemoteMatch):
            assert isinstance(conn, Connection)
            self._forward(conn, live, intent)
            return
        if live is None:
            conn.error("no_game", "join a match first", intent.ack)
            return
        await self.owned.play(conn, live, intent)

    # -- rematches ---------------------------------------------------------------------------

    def _left(self, live: LiveMatch, side: int) -> None:
        """A page of ``side`` left a match: when none is left after the end, no rematch of it any more."""
        if live.conns[side] or not live.match.is_over or live.rematch_closed:
            return
        live.rematch_closed = True
        live.offers = [False, False]
        data = encode(RematchMsg(live.id, "left", side))
        for conn in live.conns[1 - side]:
            conn.send(data)

    def _no_rematch(self, live: LiveMatch, side: int) -> None:
        """Side ``side`` of a finished match is marked: no rematch of it; both pages are told (``marked``)."""
        if not live.rematch_closed:
            live.rematch_closed = True
            live.offers = [False, False]
            self._tell_rematch(live, "marked", side)

    def _tell_rematch(self, live: LiveMatch, state: str, side: int) -> None:
        data = encode(RematchMsg(live.id, state, side))
        for conns in live.conns:
            for conn in conns:
                conn.send(data)

    async def rematch(self, conn: Connection, intent: RematchIntent | DeclineIntent) -> None:
        shown = conn.match
        if isinstance(shown, RemoteMatch) and shown.id == intent.id:
            self._forward(conn, shown, intent)  # the owner of the finished match settles it
        elif isinstance(shown, LiveMatch) and shown.id == intent.id:
            await self._rematch_here(conn, shown, intent)
        else:
            conn.error("no_game", "a rematch is offered from the page of the match that ended")

    async def _rematch_here(self, peer: Peer, live: LiveMatch, intent: RematchIntent | DeclineIntent) -> None:
        if not isinstance(live, LiveMatch) or self.owned.matches.get(live.id) is not live:
            peer.error("no_such_match", "this match is gone: no rematch of it")
            return
        if not live.match.is_over:
            peer.error("not_over", "a rematch is offered once the match is over")
            return
        side = peer.side
        if isinstance(intent, RematchIntent):
            # a mark counts at the moment of the action, on any process: never a rated match of a marked account
            for s, player in enumerate(live.match.players):
                category = await self._mark_of(player.id)
                if category is not None:
                    async with live.lock:
                        self._no_rematch(live, s)
                    if s == side:
                        self._marked(peer, category)
                    else:
                        peer.error("marked", f"{player.name} is marked for fair play: no rematch")
                    return
        async with live.lock:
            if live.rematch_closed:
                peer.error("no_rematch", "your opponent has left: no rematch")
                return
            if isinstance(intent, DeclineIntent):
                if live.offers[side]:
                    live.offers[side] = False
                    self._tell_rematch(live, "withdrew", side)
                elif live.offers[1 - side]:
                    live.offers[1 - side] = False
                    self._tell_rematch(live, "declined", side)
                return
            live.offers[side] = True
            if not all(live.offers):
                self._tell_rematch(live, "offered", side)
                return
            sides = []
            for s, player in enumerate(live.match.players):
                page = next(iter(live.conns[s]), None)
                if page is None:
                    peer.error("no_rematch", "your opponent has left: no rematch")
                    return
                node = page.node if isinstance(page, RemotePeer) else self.node
                if await self.owned.playing(player.id, but=live.id) is not None:  # this one is over
                    peer.error("in_match", f"{player.name} plays another match now")
                    live.offers = [False, False]
                    self._tell_rematch(live, "withdrew", s)
                    return
                rating = await self._rating(player.id, live.match.game)
                sides.append(Side(player.id, player.name, rating, node, page.id))
            live.rematch_closed = True  # this match's pages move on to the new one: nobody "left"
            live.offers = [False, False]
        for side_ in sides:
            if await self.pools.unseek(side_.user):
                await self._lobby_changed()
        # a new match like any other: a new secret deal from the stock, the same format
        await self._make(live.match.format, sides[1], sides[0])

    # -- fair play -------------------------------------------------------------------------------

    async def marked(self, user_id: str) -> None:
        """An account was marked (by the detection or a moderator), on this process: it leaves the pool it
        waits in, its challenge link closes, its open matches of Play now close and those taken are void
        (:meth:`patience.server.arena.apart.PlayNow.marked`), and every process closes the rematches of its
        finished matches with it (the channel ``marked``). Its seeks, challenges, accepts, rematches and
        tournament joins are refused from the moment of the mark on, everywhere: each reads the mark then."""
        changed = await self.pools.unseek(user_id)
        changed |= await self.challenges.withdraw(user_id)
        await self.playnow.marked(user_id)
        await self.bus.publish("marked", user_id.encode())
        if changed:
            await self._lobby_changed()

    def on_fairplay(self, user_id: str, state: str) -> None:
        """Fair play's word on an account (:attr:`patience.server.solo.fairplay.FairPlay.on_state`), from
        any thread (the analysis runs on a worker thread): a mark is carried out on the arena's loop."""
        if state == "marked" and self._loop is not None:
            self._loop.call_soon_threadsafe(self._spawn_marked, user_id)

    def _spawn_marked(self, user_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._marked_safely(user_id))
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    async def _marked_safely(self, user_id: str) -> None:
        try:
            await self.marked(user_id)
        except Exception:  # the refusals read the mark anyway: only the closing waits for the next word
            log.exception("closing what the marked account %s had open failed", user_id)

    def _on_marked(self, data: bytes) -> None:
        """Every process: no rematch of a finished match with a marked account (both pages are told), and a
        match of it going on here ends now (:meth:`patience.server.arena.owned.OwnedMatches.end_marked`)."""
        user_id = data.decode()
        for live in list(self.owned.matches.values()):
            side = live.side_of(user_id)
            if side is None:
                continue
            if not live.match.is_over:
                task = asyncio.get_running_loop().create_task(self._end_marked(live, side))
                self._checks.add(task)
                task.add_done_callback(self._checks.discard)
            elif not live.rematch_closed:
                self._no_rematch(live, side)

    async def _end_marked(self, live: LiveMatch, side: int) -> None:
        try:
            await self.owned.end_marked(live, side)
        except Exception:
            log.exception("the match %s of a marked account could not be ended", live.id)
            return
        async with live.lock:
            self._no_rematch(live, side)

    # -- what other processes say ------------------------------------------------------------

    def _on_envelope(self, data: bytes) -> None:
        envelope = read_envelope(data)
        if envelope is not None:
            for one in unpacked(envelope):
                asyncio.get_running_loop().create_task(self._envelope(one))

    async def _envelope(self, e: Envelope) -> None:
        try:
            if e.k == "out":
                for peer, text in e.o:
                    conn = self.peers.get(peer)
                    if conn is not None:
                        data = text.encode()
                        if isinstance(conn.match, RemoteMatch):
                            conn.match.answered(peer, data)
                        conn.send(data)
            elif e.k == "joined":
                conn = self.peers.get(e.x)
                if conn is not None:
                    conn.side = e.s
            elif e.k == "refused":
                conn = self.peers.get(e.x)
                if conn is not None:
                    self.detach(conn)
            elif e.k == "matched":
                conn = self.peers.get(e.x)
                if conn is not None and not conn.dropped:
                    await self._join(conn, e.m, 0)
            elif e.k == "moved":
                conn = self.peers.get(e.x)
                shown = conn.match if conn is not None else None
                if conn is not None and isinstance(shown, RemoteMatch) and shown.id == e.m:
                    shown.conns.discard(conn)
                    if not shown.conns:
                        self.remote.pop(shown.id, None)
                    conn.match = None
                    await self._join(conn, e.m, 0)
                    await self._send_again(RemoteMatch(e.m, shown.owner, unanswered={
                        key: value for key, value in shown.unanswered.items() if key[0] == conn.id}))
            elif e.k == "start":
                a, b = (Side.of(user, entry.encode())[0] for user, entry in json.loads(e.d))
                await self._make(Format.from_key(e.m), a, b)
            elif e.k == "join":
                await self._remote_join(e)
            elif e.k == "act":
                await self._remote_act(e)
            elif e.k == "leave":
                peer = self.remote_peers.pop(e.x, None)
                live = self.owned.matches.get(e.m)
                if peer is not None and live is not None:
                    live.conns[peer.side].discard(peer)  # type: ignore[arg-type]
                    self._left(live, peer.side)
            elif e.k == "watch":
                await self.spectators.remote_watch(e)
            elif e.k == "unwatch":
                self.spectators.remote_unwatch(e.x)
        except Exception:
            log.exception("a message from another process failed: %s", e.k)

    async def _remote_join(self, e: Envelope) -> None:
        peer = self.remote_peers.get(e.x) or RemotePeer(e.x, e.r, e.u, self.out)
        peer.cid = e.c
        live = self.owned.matches.get(e.m)
        if live is None and self.owned.taking(e.m):  # its take-over here is under way: wait for it
            live = await self.owned.take_over(e.m)
        if live is None:  # not (or no longer) here: the page asks again and finds the owner
            peer.error("server_error", f"match {e.m} is being restored: reconnect")
            self.out.send(e.r, Envelope("refused", x=e.x))
            return
        side = live.side_of(e.u)
        if side is None:
            peer.error("not_your_match", "this match is between two other players")
            self.out.send(e.r, Envelope("refused", x=e.x))
            return
        self.remote_peers[e.x] = peer
        self.out.send(e.r, Envelope("joined", x=e.x, s=side))
        self._attach(peer, live, side)
        live.catch_up(peer, side, e.v)

    async def _remote_act(self, e: Envelope) -> None:
        peer = self.remote_peers.get(e.x)
        if peer is None or peer.match is not self.owned.matches.get(e.m):
            self.out.to_peer(e.r, e.x, encode_error("server_error", "join the match again: reconnect"))
            return
        peer.cid = e.c
        try:
            message = decode(e.d)
        except ProtocolError as exc:
            peer.error(exc.code, str(exc))
            return
        if isinstance(message, MATCH_INTENTS):
            await self.act(peer, message)
        elif isinstance(message, REMATCH_INTENTS):
            await self._rematch_here(peer, peer.match, message)  # type: ignore[arg-type]
