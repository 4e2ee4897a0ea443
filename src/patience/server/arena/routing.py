"""The arena: every duel, on one server process or many, drawn as rooms that each know only what is below
them (docs/scaling.md, *The rooms of the arena*):

- :mod:`~patience.server.arena.nodes` — the processes of the arena, and the envelopes between them;
- :mod:`~patience.server.arena.pools` — the pools of the lobby: one process pairs them in waves;
- :mod:`~patience.server.arena.owned` — the matches this process owns: made, played and logged
  here, their clocks, their leases, taken over from a process that stopped;
- :mod:`~patience.server.arena.view` — the lobby as its pages see it;
- :mod:`~patience.server.arena.lobby` — seeks, and the pairs the pairer found made into matches;
- :mod:`~patience.server.arena.rematches`, :mod:`~patience.server.arena.spectators`,
  :mod:`~patience.server.arena.challenges`, :mod:`~patience.server.arena.tournaments`;
- :mod:`~patience.server.arena.elsewhere` — pages whose match is played on another process, and the
  envelopes between the processes;
- this module — the rooms made and tied together, which room a page's message is for, which match a page
  shows, a mark carried out, and the loops of the whole.

The clocks of the matches owned here run in their own loop (:meth:`Arena.run_clock`): pairing,
tournaments and the leases each have a loop of their own, so no clock waits for them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from patience.duel import Format
from patience.server.accounts import Hashing, owasp_hasher
from patience.server.arena.apart import PlayNow, Resumes
from patience.server.arena.challenges import CHALLENGE_SECONDS, Challenges
from patience.server.arena.dealstock import DealStock
from patience.server.arena.elsewhere import MATCH_INTENTS, Elsewhere
from patience.server.arena.lobby import Lobby
from patience.server.arena.matches import COUNTDOWN_SECONDS, LiveMatch
from patience.server.arena.nodes import Nodes, Outbound, RemoteMatch
from patience.server.arena.owned import LEASE_SECONDS, OwnedMatches
from patience.server.arena.pools import FORMAT_KEYS, Pools, Side
from patience.server.arena.rematches import Rematches
from patience.server.arena.spectators import Spectators
from patience.server.arena.tournaments import TOURNAMENT_MESSAGES, Tournaments
from patience.server.arena.view import LobbyView
from patience.server.bus import Bus, MemoryBus, stop_tasks
from patience.server.live import Connection, Now
from patience.server.protocol import (
    AcceptIntent,
    ChallengeIntent,
    ChallengeLook,
    DeclineIntent,
    HintAsk,
    LobbyAsk,
    MatchJoin,
    Ping,
    Pong,
    RematchIntent,
    SeekIntent,
    TargetsAsk,
    TourAsk,
    TourJoin,
    TourPause,
    UnseekIntent,
    WatchIntent,
    encode,
)
from patience.server.signals import Signal
from patience.server.solo.fairplay import FairPlay
from patience.server.storage.store import Store
from patience.server.storage.writer import GroupWriter

__all__ = ["CHALLENGE_SECONDS", "FORMAT_KEYS", "LEASE_SECONDS", "Arena"]

log = logging.getLogger("patience.server")

RENEW_SECONDS = 1.0  # how often the leases are renewed (and stopped processes looked for)
TOURNAMENT_SECONDS = 1.0  # how often the tournaments are paired and their standings told

ARENA_MESSAGES = (LobbyAsk, SeekIntent, UnseekIntent, ChallengeIntent, AcceptIntent, MatchJoin, ChallengeLook,
                  RematchIntent, DeclineIntent, WatchIntent, *TOURNAMENT_MESSAGES)
SHOWN_MESSAGES = (*MATCH_INTENTS, HintAsk, TargetsAsk, Ping)  # the arena's while the page shows a match


class Arena:
    """Every duel: the pools of the lobby, open challenges, live matches and their log.

    ``now`` is the clock of matches (monotonic, this process's); ``wall`` the clock of what
    processes and restarts share (seconds since the epoch): waiting since, challenges made.
    ``hashing``: the accounts' password hashing, for tournaments' passwords (its own if None);
    ``fairplay`` gets the evidence of every match that ends here (None: nobody); ``games`` is the solo games'
    hub (Play now brings a stale game back through it); the arena hears ``game_ends`` (the hub: a game of
    Play now ended) and ``marks`` (fair play: an account flagged or marked) (:mod:`patience.server.signals`)."""

    def __init__(self, store: Store, bus: Bus | None = None, *, now: Now = time.monotonic, wall: Now = time.time,
                 deals: DealStock | None = None, writer: GroupWriter | None = None,
                 countdown: float = COUNTDOWN_SECONDS, schedule: bool = True,
                 hashing: Hashing | None = None, fairplay: FairPlay | None = None, games: Resumes | None = None,
                 marks: Signal[tuple[str, str]] | None = None, game_ends: Signal[str] | None = None) -> None:
        self.store = store
        self.bus = bus if bus is not None else MemoryBus()
        self.node = self.bus.node
        self.now = now
        self.wall = wall
        self.deals = deals if deals is not None else DealStock(store, 0)
        self.writer = writer if writer is not None else GroupWriter(store)
        self.out = Outbound(self.bus)
        self.hashing = hashing if hashing is not None else Hashing(owasp_hasher())
        self.peers: dict[str, Connection] = {}  # this process's pages that talked to the arena, by id
        self.nodes = Nodes(self.bus, now)
        self.owned = OwnedMatches(store, self.bus, self.nodes, self.out, self.deals, self.writer, self.peers, self,
                                  now=now, wall=wall, countdown=countdown, fairplay=fairplay)
        self.pools = Pools(self.bus, self.nodes, wall, self._paired, self.changed)
        self.view = LobbyView(self.bus, self.nodes, self.pools, now)
        self.lobby = Lobby(store, self.bus, self.nodes, self.out, self.owned, self.pools, self.view, wall=wall)
        self.spectators = Spectators(self.bus, self.nodes, self.out, self.owned, self.peers)
        self.rematches = Rematches(store, self.owned, self.pools, self.view, self.lobby.rating)
        self.challenges = Challenges(store, self.bus, self.writer, self.view, self.pools, self.peers, wall,
                                     self.owned.make, self.lobby.busy, self.lobby.rating, self.owned.playing,
                                     self.lobby.mark_of)
        self.tournaments = Tournaments(store, self.bus, self.lobby, self.hashing, wall=wall, schedule=schedule)
        self.playnow = PlayNow(store, self.bus, self.deals, self.peers, wall=wall, games=games)
        if game_ends is not None:  # the hub says when a game of Play now ended: its match may be complete
            game_ends.hear(self.playnow.game_ended)
        if marks is not None:  # fair play says when an account is marked: what it had open closes
            marks.hear(lambda told: self.on_fairplay(*told))
        self.elsewhere = Elsewhere(self.bus, self.out, self.owned, self.spectators, self.rematches, self.peers,
                                   self)
        self._tasks: list[asyncio.Task[None]] = []
        self._marking: set[asyncio.Task[None]] = set()  # marks carried out here
        self._loop: asyncio.AbstractEventLoop | None = None  # the arena's, once started (marks from threads)

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
        await self.elsewhere.start()
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

    async def stop(self) -> None:
        """Leave the arena: let go of every lease, so that other processes take the matches at once."""
        await stop_tasks(self._tasks)
        self.lobby.stop()
        self.rematches.stop()
        for task in list(self._marking):
            task.cancel()
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
        await self.elsewhere.follow()
        await self.owned.sweep()
        await self.spectators.follow()

    def _connected(self, user_id: str, peer: str) -> bool:
        """Is page ``peer`` of ``user_id`` connected to this process?"""
        conn = self.peers.get(peer)
        return conn is not None and not conn.dropped and conn.user is not None and conn.user.id == user_id

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

    # -- what the rooms below need of this one -------------------------------------------------

    async def changed(self) -> None:
        """The lobby changed (a seek, a match begun or ended)."""
        await self.view.changed()

    async def _paired(self, fmt: Format, a: Side, b: Side) -> None:
        await self.lobby.paired(fmt, a, b)

    def lost(self, live: LiveMatch) -> None:
        """The lease of ``live`` was lost: its pages here and elsewhere join it at its new owner."""
        self.elsewhere.lost(live)

    # -- connections -------------------------------------------------------------------------

    def takes(self, conn: Connection, message: Any) -> bool:
        """Is ``message`` for the arena (a duel message, or an intent while the page shows a match)?"""
        if isinstance(message, ARENA_MESSAGES):
            return True
        if conn.match is not None:
            if isinstance(message, SHOWN_MESSAGES):
                return True
            self.detach(conn)  # the page went on to a solo game
        return False

    def detach(self, conn: Connection) -> None:
        """Page ``conn`` shows no match any more."""
        shown = conn.match
        if isinstance(shown, LiveMatch):
            shown.conns[conn.side].discard(conn)
            self.rematches.left(shown, conn.side)
        elif isinstance(shown, RemoteMatch):
            self.elsewhere.detach(conn, shown)
        conn.match = None

    def disconnect(self, conn: Connection) -> None:
        self.detach(conn)
        self.spectators.unwatch(conn)
        self.view.watchers.discard(conn)
        self.peers.pop(conn.id, None)
        user = conn.user
        if user is not None:
            asyncio.get_running_loop().create_task(self.lobby.forget_page(user.id, conn.id))
        if conn.id in self.tournaments.shown:
            asyncio.get_running_loop().create_task(self.tournaments.disconnect(conn))

    async def handle(self, conn: Connection, message: Any) -> None:
        """One valid message of a page for the arena (:meth:`takes`), to the room it is for."""
        if conn.id not in self.peers and conn.user is not None:  # a player on a duel page: online
            await self.view.online(conn)  # the lobby pages count them at once
        self.peers[conn.id] = conn
        cid = getattr(message, "cid", None)
        if cid is not None:
            conn.cid = cid  # the page's id: acks count per page
        if isinstance(message, MATCH_INTENTS):
            await self.elsewhere.act(conn, message)
        elif isinstance(message, RematchIntent | DeclineIntent):
            await self.rematch(conn, message)
        elif isinstance(message, WatchIntent):
            self.detach(conn)
            self.view.watchers.discard(conn)
            await self.spectators.watch(conn, message.id)
        elif isinstance(message, ChallengeLook):
            await self.challenges.look(conn, message.code)
        elif isinstance(message, Ping):  # answered here, whoever owns the match: the page asks whether we are alive
            shown = conn.match
            conn.send(encode(Pong(shown.match.sessions[conn.side].elapsed_ms() if isinstance(shown, LiveMatch) else 0)))
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
            await self.show(conn, message.id, message.v)
        elif conn.user is None:
            conn.error("sign_in", "duels are between people with an account: sign in first")
        elif isinstance(message, TourJoin) and self.tournaments.refused_lately(conn, message):
            return  # a guesser refused lately: answered from memory, before the database is asked for a mark
        elif isinstance(message, ChallengeIntent | AcceptIntent | TourJoin) and await self.lobby.refused(conn):
            return
        elif isinstance(message, SeekIntent):
            await self.lobby.seek(conn, message)
        elif isinstance(message, UnseekIntent):
            await self.lobby.unseek(conn)
        elif isinstance(message, ChallengeIntent):
            fmt = self.lobby.format(conn, message.format)
            if fmt is not None:
                await self.challenges.challenge(conn, fmt, message)
        elif isinstance(message, AcceptIntent):
            await self.challenges.accept(conn, message)
        elif isinstance(message, TourJoin | TourPause):
            await self.tournaments.handle(conn, message)

    async def rematch(self, conn: Connection, intent: RematchIntent | DeclineIntent) -> None:
        shown = conn.match
        if isinstance(shown, RemoteMatch) and shown.id == intent.id:
            self.elsewhere.forward(conn, shown, intent)  # the owner of the finished match settles it
        elif isinstance(shown, LiveMatch) and shown.id == intent.id:
            await self.rematches.answer(conn, shown, intent)
        else:
            conn.error("no_game", "a rematch is offered from the page of the match that ended")

    # -- a page and its match ----------------------------------------------------------------

    async def show(self, conn: Connection, match_id: str, seen: int) -> None:
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
                self.elsewhere.show(conn, match_id, owner, seen)
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
        self.detach(conn)
        self.view.watchers.discard(conn)
        self.elsewhere.seat(conn, live, side)
        live.catch_up(conn, side, seen)

    # -- fair play -------------------------------------------------------------------------------

    async def marked(self, user_id: str) -> None:
        """An account was marked (by the detection or a moderator), on this process: it leaves the pool it
        waits in, its challenge link closes, its open matches of Play now close and those taken are void
        (:meth:`patience.server.arena.apart.PlayNow.marked`), and every process closes the rematches of its
        finished matches with it (the channel ``marked``). Its seeks, challenges, accepts, rematches and
        tournament joins are refused from the moment of the mark on, everywhere: each reads the mark then
        (:mod:`patience.server.marks`)."""
        changed = await self.pools.unseek(user_id)
        changed |= await self.challenges.withdraw(user_id)
        await self.playnow.marked(user_id)
        await self.bus.publish("marked", user_id.encode())
        if changed:
            await self.changed()

    def on_fairplay(self, user_id: str, state: str) -> None:
        """Fair play's word on an account (:attr:`patience.server.solo.fairplay.FairPlay.states`), from
        any thread (the analysis runs on a worker thread): a mark is carried out on the arena's loop."""
        if state == "marked" and self._loop is not None:
            self._loop.call_soon_threadsafe(self._spawn_marked, user_id)

    def _spawn_marked(self, user_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._marked_safely(user_id))
        self._marking.add(task)
        task.add_done_callback(self._marking.discard)

    async def _marked_safely(self, user_id: str) -> None:
        try:
            await self.marked(user_id)
        except Exception:  # the refusals read the mark anyway: only the closing waits for the next word
            log.exception("closing what the marked account %s had open failed", user_id)

    def _on_marked(self, data: bytes) -> None:
        """Every process: the rematches and the matches going on here of the marked account
        (:meth:`patience.server.arena.rematches.Rematches.marked`)."""
        self.rematches.marked(data.decode())
