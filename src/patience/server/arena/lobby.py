"""The arena: the lobby and its pools, challenges, and the matches, on one server process or many.

What the processes of one arena share goes through the bus (:mod:`patience.server.bus`): the
waiting pools (hash ``pool:FORMAT``: a pair is made under a short lock on the pool, so a player
is paired exactly once whichever process they wait on), the open challenges, the lobby pages
open, who plays a match going on, and the owner of each live match. A match is played by the
process that holds its lease (``match:ID``, renewed every second); pages on other processes
reach it through :mod:`patience.server.arena.nodes`. When an owner stops renewing (it died),
another process takes the lease, rebuilds the match from its move log in the database and goes
on; pages resync by version. One process alone runs the same code on the memory bus.

The time between the last logged moment of a match and its takeover does not count on either
player's clock: the clock stands still while nobody owns the match (docs/protocol.md).

Each version of a match is first a row of its move log (:mod:`patience.server.arena.matches`),
committed before anyone is told, so whatever a player was told survives a crash.

Around a match: the countdown before both clocks start (a match rebuilt before its first row gets
a whole countdown again), a rematch when both players of a finished match ask for one (on a new
secret deal, like any match), spectators (``watch``: figures only, on any process, through the
owner as a player's page), and what a challenge link is before anyone accepts it (``look``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec

from patience.duel import FORMATS, LIMITS, Format, Match, Player, Seeker, closest, pairs
from patience.errors import PatienceError
from patience.ratings import Rating
from patience.rng import check_seed
from patience.server.accounts import Hashing, owasp_hasher
from patience.server.arena.dealstock import DealStock
from patience.server.arena.matches import COUNTDOWN_SECONDS, Intent, LiveMatch, MatchClock
from patience.server.arena.nodes import Envelope, Outbound, RemoteMatch, RemotePeer, channel_of, read_envelope
from patience.server.arena.tournaments import TOURNAMENT_MESSAGES, Tournaments
from patience.server.bus import Bus, BusError, MemoryBus, stop_tasks
from patience.server.live import Connection, Now, Peer
from patience.server.protocol import (
    AcceptIntent,
    ChallengeIntent,
    ChallengeLook,
    ChallengeMsg,
    DeclineIntent,
    DuelPlayer,
    ErrorMsg,
    GiveUpIntent,
    HintAsk,
    LiveInfo,
    LobbyAsk,
    LobbyMsg,
    LookMsg,
    MatchJoin,
    MoveIntent,
    Ping,
    Pong,
    PoolInfo,
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
from patience.server.storage.league import (
    MoveRow,
    OpenChallenge,
    delete_challenges,
    finish_match,
    insert_challenge,
    insert_match,
    live_match_ids,
    load_rating,
    names_of,
    open_challenges,
    parse_rating,
    saved_matches,
)
from patience.server.storage.store import Store
from patience.server.storage.writer import GroupWriter

__all__ = ["Arena"]

log = logging.getLogger("patience.server")

CHALLENGE_SECONDS = 3600.0
TAKEN_KEPT_SECONDS = 86400.0  # how long a challenge link taken up says "taken" (then: unknown)
OVER_KEEP_SECONDS = 120.0  # a finished match stays in memory this long for late reconnects
POOL_SHOWN = 12  # waiting players named per pool in the lobby
FORMAT_KEYS = [Format(game, variant, limit).key for game, variants in FORMATS.items() for variant in variants
               for limit in LIMITS]
LEASE_SECONDS = 5.0  # a match whose owner stops renewing for this long is taken over
RENEW_SECONDS = 1.0  # how often an owner renews its leases (and looks for matches nobody owns)
PAIRER_SECONDS = 2.0  # one process at a time pairs the players waiting (lease ``pairer``)

MATCH_INTENTS = (MoveIntent, StockIntent, UndoIntent, GiveUpIntent)
REMATCH_INTENTS = (RematchIntent, DeclineIntent)
LIVE_SHOWN = 20  # matches going on listed in the lobby, for spectators
ARENA_MESSAGES = (LobbyAsk, SeekIntent, UnseekIntent, ChallengeIntent, AcceptIntent, MatchJoin, ChallengeLook,
                  RematchIntent, DeclineIntent, WatchIntent, *TOURNAMENT_MESSAGES)


@dataclass(frozen=True)
class _Side:
    """One player of a match about to start: who, their rating, and where their page is."""

    user: str
    name: str
    rating: Rating
    node: str
    peer: str


def _seeker_entry(side: _Side, since: float) -> bytes:
    r = side.rating
    return json.dumps({"name": side.name, "r": r.rating, "d": r.deviation, "v": r.volatility, "since": since,
                       "node": side.node, "peer": side.peer}).encode()


def _seeker_side(user: str, data: bytes) -> tuple[_Side, float]:
    e = json.loads(data)
    return _Side(user, e["name"], Rating(e["r"], e["d"], e["v"]), e["node"], e["peer"]), float(e["since"])


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
        self.out = Outbound(self.bus)
        self.countdown = countdown  # seconds from "match found" to the start of both clocks
        self.hashing = hashing if hashing is not None else Hashing(owasp_hasher())
        self.spectating: dict[str, tuple[str, str]] = {}  # page here -> (the match it watches, its owner)
        self.remote_watchers: dict[str, tuple[str, RemotePeer]] = {}  # page elsewhere -> (match here, the page)
        self.matches: dict[str, LiveMatch] = {}  # the matches this process owns
        self.leases: dict[str, str] = {}  # match id -> the token of its lease
        self.remote: dict[str, RemoteMatch] = {}  # matches owned elsewhere that pages here show
        self.peers: dict[str, Connection] = {}  # this process's pages that talked to the arena, by id
        self.remote_peers: dict[str, RemotePeer] = {}  # pages elsewhere that watch a match owned here
        self.watchers: set[Connection] = set()  # pages here that show the lobby
        self.takeovers = 0  # matches this process took over from one that stopped
        self._lobby_later: asyncio.TimerHandle | None = None
        self._node_token: str | None = None
        self._pairer_token: str | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.tournaments = Tournaments(self, schedule=schedule)

    # -- starting and stopping ---------------------------------------------------------------

    async def start(self) -> int:
        """Join the arena: listen on the bus, take up open challenges and every live match nobody
        owns (after a restart); returns how many matches were taken up."""
        await self.bus.subscribe(channel_of(self.node), self._on_envelope)
        await self.bus.subscribe("lobby", self._on_lobby)
        self._node_token = await self.bus.acquire(f"node:{self.node}", LEASE_SECONDS)
        lapsed_ms = round((self.wall() - CHALLENGE_SECONDS) * 1000)
        for kept in await anyio.to_thread.run_sync(open_challenges, self.store.engine, lapsed_ms):
            if await self.bus.hget("challenges", kept.code) is None:
                await self._keep_challenge(kept.code, kept.user, kept.format, kept.made_ms / 1000)
        taken = 0
        for match_id in await anyio.to_thread.run_sync(live_match_ids, self.store.engine):
            if match_id not in self.matches and await self._take_over(match_id) is not None:
                taken += 1
        self._tasks = [asyncio.create_task(self.out.run(), name="arena-outbound"),
                       asyncio.create_task(self._keep_leases(), name="arena-leases")]
        return taken

    restore = start

    async def stop(self) -> None:
        """Leave the arena: let go of every lease, so that other processes take the matches at once."""
        await stop_tasks(self._tasks)
        await self.writer.flush()
        for match_id, token in list(self.leases.items()):
            with contextlib.suppress(Exception):
                await self.bus.release(f"match:{match_id}", token)
        for name, token in ((f"node:{self.node}", self._node_token), ("pairer", self._pairer_token)):
            if token is not None:
                with contextlib.suppress(Exception):
                    await self.bus.release(name, token)
        with contextlib.suppress(Exception):
            await self.out.flush()

    def _rebuild(self, row: Any, names: dict[str, str], moves: list[MoveRow]) -> LiveMatch:
        fmt = Format(row.game, row.variant, row.limit_s)
        players = (Player(row.player_a, names.get(row.player_a, "?"), parse_rating(row.rating_a)),
                   Player(row.player_b, names.get(row.player_b, "?"), parse_rating(row.rating_b)))
        clock = MatchClock(self.now)
        match = Match(row.id, fmt, check_seed(row.seed), row.nonce, clock, players, proved=bool(row.proved))
        if match.commitment != row.commitment:
            raise ValueError("the stored commitment does not match the stored deal")
        live = LiveMatch(match, clock, self.now)
        for move in moves:
            live.replay_row(move)
        # the clock goes on from the last logged moment: time while nobody played the match does not count
        clock.set_ms(live.logged_ms)
        if moves or self.countdown <= 0:
            clock.go_live()
        else:  # nothing logged yet: the players may not have seen the countdown through, so it starts again
            clock.go_live_at(self.now() + self.countdown)
        if match.is_over:
            live.over_at = self.now()
        return live

    async def _take_over(self, match_id: str) -> LiveMatch | None:
        """Own a live match nobody owns: take its lease and rebuild it from its log (None if the
        lease is held, or the database has no such match going on)."""
        token = await self.bus.acquire(f"match:{match_id}", LEASE_SECONDS)
        if token is None:
            return None
        try:
            saved = await anyio.to_thread.run_sync(
                functools.partial(saved_matches, self.store.engine, match_id=match_id))
            live = self._rebuild(*saved[0]) if saved else None
        except (PatienceError, KeyError, TypeError, ValueError):
            log.exception("match %s cannot be rebuilt from its log", match_id)
            live = None
        except Exception:
            await self.bus.release(f"match:{match_id}", token)
            raise
        if live is None:
            await self.bus.release(f"match:{match_id}", token)
            return None
        self.matches[live.id] = live
        self.leases[live.id] = token
        if not live.match.is_over:
            await self.bus.hset("live", live.id, self.node.encode())
            await self._list_live(live)
            for player in live.match.players:
                await self.bus.hset("busy", player.id, live.id.encode())
        self.takeovers += 1
        log.info("match %s is played here now (version %d)", live.id, live.version)
        return live

    async def _keep_leases(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            try:
                await self.renew()
            except Exception:  # pragma: no cover - the bus is away: try again
                log.exception("renewing the arena's leases failed")

    async def renew(self) -> None:
        """Renew this process's leases; give up the matches whose lease was lost; take over the
        matches whose owner stopped (pages here that show them first, then any match going on)."""
        if self._node_token is None or not await self.bus.renew(f"node:{self.node}", self._node_token,
                                                                 LEASE_SECONDS):
            self._node_token = await self.bus.acquire(f"node:{self.node}", LEASE_SECONDS)
        held = dict(self.leases)
        kept = await self.bus.renew_many({f"match:{match_id}": token for match_id, token in held.items()},
                                         LEASE_SECONDS)
        for match_id in held:
            if f"match:{match_id}" not in kept and self.leases.get(match_id) == held[match_id]:
                log.warning("the lease of match %s was lost: another process plays it now", match_id)
                self._let_go(match_id)
        for remote in list(self.remote.values()):
            owner = await self.bus.holder(f"match:{remote.id}")
            if owner == remote.owner:
                continue
            live = await self._take_over(remote.id) if owner is None else None
            conns = [c for c in remote.conns if not c.dropped]
            del self.remote[remote.id]
            for conn in conns:
                conn.match = None
                await self._join(conn, remote.id, 0)
            if live is None and owner is None:
                for conn in conns:
                    conn.error("no_such_match", f"match {remote.id} is over or gone")
        await self._sweep()
        await self._follow_watched()

    async def _follow_watched(self) -> None:
        """Spectators here of a match whose owner changed (it stopped, its lease lapsed) watch it at
        its new owner; those of a match that is over and gone from memory keep their last view."""
        owners: dict[str, str | None] = {}
        for peer_id, (match_id, owner) in list(self.spectating.items()):
            if match_id not in owners:
                owners[match_id] = await self.bus.holder(f"match:{match_id}")
            if owners[match_id] == owner and (owner != self.node or match_id in self.matches):
                continue
            conn = self.peers.get(peer_id)
            if conn is None or conn.dropped or (owners[match_id] is None
                                                 and await self.bus.hget("live", match_id) is None):
                self.spectating.pop(peer_id, None)
                continue
            await self.watch(conn, match_id)
            owners[match_id] = await self.bus.holder(f"match:{match_id}")
        nodes: dict[str, bool] = {}
        for peer_id, (match_id, peer) in list(self.remote_watchers.items()):  # spectators elsewhere, watching here
            if peer.node not in nodes:
                nodes[peer.node] = await self.bus.holder(f"node:{peer.node}") is not None
            live = self.matches.get(match_id)
            if live is None or not nodes[peer.node]:  # the match is gone from here, or their process stopped
                del self.remote_watchers[peer_id]
                if live is not None:
                    live.watchers.discard(peer)

    async def _sweep(self) -> None:
        """Take over any match going on whose owner has stopped (no page needs to come back first)."""
        owners = await self.bus.hgetall("live")
        gone: dict[str, bool] = {}
        for match_id, node in owners.items():
            name = node.decode()
            if name == self.node or match_id in self.matches:
                continue
            if name not in gone:
                gone[name] = await self.bus.holder(f"node:{name}") is None
            if gone[name] and await self.bus.holder(f"match:{match_id}") is None:
                await self._take_over(match_id)

    def _let_go(self, match_id: str) -> None:
        live = self.matches.pop(match_id, None)
        self.leases.pop(match_id, None)
        if live is None:
            return
        for side_conns in live.conns:
            for peer in list(side_conns):
                if isinstance(peer, Connection):
                    # the page joins again: at the new owner, through this process
                    peer.match = RemoteMatch(match_id, "")
                    self.remote.setdefault(match_id, peer.match).conns.add(peer)
                else:
                    self.remote_peers.pop(peer.id, None)

    # -- the clock ---------------------------------------------------------------------------

    async def tick(self) -> None:
        """The clock of every match owned here (time penalties, time-outs and heartbeats, logged
        before told), and the pools: a player's reach in rating grows while waiting."""
        await self._pair_waiting()
        await self.tournaments.tick(pairer=self._pairer_token is not None)
        due: list[tuple[LiveMatch, list[MoveRow], list[tuple[bytes, bytes]]]] = []
        for live in list(self.matches.values()):
            if live.match.is_over or live.broken or live.lock.locked():
                continue  # a match playing an intent brings its clock up itself
            await live.lock.acquire()  # free: taken at once
            rows: list[MoveRow] = []
            out: list[tuple[bytes, bytes]] = []
            live.tick(rows, out, heartbeat=True)
            if rows:
                due.append((live, rows, out))
            else:
                live.lock.release()
        if due:
            # every match's clock rows in one transaction; each match stays locked until told
            ok = await self._commit_many([(live, rows) for live, rows, _ in due])
            for live, _, out in due:
                if ok:
                    live.send(out)
                live.lock.release()
                if live.match.is_over:
                    await self._ended(live)
        await self._evict()

    async def run_clock(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.tick()
            except Exception:  # pragma: no cover - one broken match must not stop every clock
                log.exception("duel tick failed")

    async def _evict(self) -> None:
        now = self.now()
        for live in list(self.matches.values()):
            if live.over_at is not None and now - live.over_at > OVER_KEEP_SECONDS and not any(live.conns):
                del self.matches[live.id]
                token = self.leases.pop(live.id, None)
                if token is not None:
                    await self.bus.release(f"match:{live.id}", token)

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
        self._unwatch(conn)
        self.watchers.discard(conn)
        self.peers.pop(conn.id, None)
        user = conn.user
        if user is not None:
            asyncio.get_running_loop().create_task(self._forget_page(user.id, conn.id))
        if conn.id in self.tournaments.shown:
            asyncio.get_running_loop().create_task(self.tournaments.disconnect(conn))

    async def _forget_page(self, user_id: str, peer: str) -> None:
        """Nobody is paired with a page that has gone, nor challenged through it; it is not online."""
        changed = bool(await self.bus.hdel("online", f"{user_id}/{peer}"))
        for key in FORMAT_KEYS:
            found = await self.bus.hget(f"pool:{key}", user_id)
            if found is not None and json.loads(found)["peer"] == peer:
                changed |= bool(await self.bus.hdel(f"pool:{key}", user_id))
        page = await self.bus.hget("lobby_pages", user_id)
        if page is not None and json.loads(page)["peer"] == peer:
            await self.bus.hdel("lobby_pages", user_id)
        if changed:
            await self._lobby_changed()

    async def handle(self, conn: Connection, message: Any) -> None:
        if conn.id not in self.peers and conn.user is not None:  # a player on a duel page: online
            await self.bus.hset("online", f"{conn.user.id}/{conn.id}", self.node.encode())
            await self._lobby_changed()  # the lobby pages count them at once
        self.peers[conn.id] = conn
        cid = getattr(message, "cid", None)
        if cid is not None:
            conn.cid = cid  # the page's id: acks count per page
        if isinstance(message, MATCH_INTENTS):
            await self.act(conn, message)
        elif isinstance(message, REMATCH_INTENTS):
            await self.rematch(conn, message)
        elif isinstance(message, WatchIntent):
            await self.watch(conn, message.id)
        elif isinstance(message, ChallengeLook):
            await self.look(conn, message.code)
        elif isinstance(message, Ping):  # answered here, whoever owns the match: the page asks whether we are alive
            shown = conn.match
            owned = isinstance(shown, LiveMatch)
            conn.send(encode(Pong(shown.match.sessions[conn.side].elapsed_ms() if owned else 0)))
        elif isinstance(message, HintAsk | TargetsAsk):
            conn.error("not_here", "hints are off in duels")
        elif isinstance(message, TourAsk):
            await self.tournaments.handle(conn, message)
        elif isinstance(message, LobbyAsk):
            self._unwatch(conn)
            await self._watch_lobby(conn)
            conn.send(await self._lobby_for(conn))
        elif isinstance(message, MatchJoin):
            self._unwatch(conn)
            await self._join(conn, message.id, message.v)
        elif conn.user is None:
            conn.error("sign_in", "duels are between people with an account: sign in first")
        elif isinstance(message, SeekIntent):
            try:
                await self.seek(conn, message)
            except BusError:
                log.warning("the pool %s stayed locked: a seek was turned away", message.format)
                conn.error("busy", "the lobby is very busy right now: try again in a moment")
        elif isinstance(message, UnseekIntent):
            await self._unseek(conn.user.id)
            conn.send(await self._lobby_for(conn))
        elif isinstance(message, ChallengeIntent):
            await self.challenge(conn, message)
        elif isinstance(message, AcceptIntent):
            await self.accept(conn, message)
        elif isinstance(message, TourJoin | TourPause):
            await self.tournaments.handle(conn, message)

    async def _watch_lobby(self, conn: Connection) -> None:
        self.watchers.add(conn)
        if conn.user is not None:
            await self.bus.hset("lobby_pages", conn.user.id,
                                json.dumps({"node": self.node, "peer": conn.id}).encode())

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
        playing = await self.bus.hget("busy", user.id)
        if playing is None:
            return False
        conn.error("in_match", f"finish your match {playing.decode()} first")
        return True

    async def _rating(self, user_id: str, game: str) -> Rating:
        return await anyio.to_thread.run_sync(load_rating, self.store.engine, user_id, game)

    def _side(self, conn: Connection, rating: Rating) -> _Side:
        assert conn.user is not None
        return _Side(conn.user.id, conn.user.name, rating, self.node, conn.id)

    async def seek(self, conn: Connection, message: SeekIntent) -> None:
        user = conn.user
        assert user is not None
        fmt = self._format(conn, message.format)
        if fmt is None or await self._busy(conn):
            return
        rating = await self._rating(user.id, fmt.game)
        await self._unseek(user.id)
        me = self._side(conn, rating)
        async with self.bus.lock(f"lock:pool:{fmt.key}"):
            waiting = await self._waiting(fmt.key)
            seekers = [Seeker(side.user, side.rating.rating, since) for side, since in waiting.values()]
            other = closest(rating.rating, seekers, exclude=user.id, now=self.wall())
            if other is not None:
                await self.bus.hdel(f"pool:{fmt.key}", other.user)
            else:
                await self.bus.hset(f"pool:{fmt.key}", user.id, _seeker_entry(me, self.wall()))
        await self._watch_lobby(conn)
        await self._lobby_changed()
        if other is None:
            conn.send(await self._lobby_for(conn))
            return
        await self._start(fmt, waiting[other.user][0], me)

    async def _waiting(self, key: str) -> dict[str, tuple[_Side, float]]:
        """The players waiting in pool ``key``, less those whose process has stopped."""
        found = {user: _seeker_side(user, data) for user, data in (await self.bus.hgetall(f"pool:{key}")).items()}
        nodes = {side.node for side, _ in found.values()} - {self.node}
        gone = {node for node in nodes if await self.bus.holder(f"node:{node}") is None}
        if gone:
            stale = [user for user, (side, _) in found.items() if side.node in gone]
            await self.bus.hdel(f"pool:{key}", *stale)
            found = {user: entry for user, entry in found.items() if entry[0].node not in gone}
        return found

    async def waiting(self, key: str) -> list[str]:
        """The ids of the players waiting in pool ``key``, longest waiting first."""
        return [user for user, (_, since) in sorted((await self._waiting(key)).items(), key=lambda e: e[1][1])]

    async def _pair_waiting(self) -> None:
        """Pair the players whose reach has grown to each other (by one process at a time)."""
        if self._pairer_token is None or not await self.bus.renew("pairer", self._pairer_token, PAIRER_SECONDS):
            self._pairer_token = await self.bus.acquire("pairer", PAIRER_SECONDS)
            if self._pairer_token is None:
                return
        now = self.wall()
        for key in FORMAT_KEYS:
            made: list[tuple[_Side, _Side]] = []
            async with self.bus.lock(f"lock:pool:{key}"):
                waiting = await self._waiting(key)
                if len(waiting) < 2:
                    continue
                seekers = [Seeker(side.user, side.rating.rating, since) for side, since in waiting.values()]
                for first, second in pairs(seekers, now):
                    if await self.bus.hdel(f"pool:{key}", first.user, second.user) == 2:
                        made.append((waiting[first.user][0], waiting[second.user][0]))
            for a, b in made:
                await self._lobby_changed()
                await self._start(Format.from_key(key), a, b)

    async def _unseek(self, user_id: str) -> None:
        gone = 0
        for key in FORMAT_KEYS:
            gone += await self.bus.hdel(f"pool:{key}", user_id)
        if gone:
            await self._lobby_changed()

    async def _keep_challenge(self, code: str, user: str, fmt: str, made: float) -> None:
        old = await self.bus.hget("challenge_of", user)
        if old is not None:
            await self.bus.hdel("challenges", old.decode())  # one open challenge each: the newest
        await self.bus.hset("challenges", code, json.dumps({"user": user, "format": fmt, "made": made}).encode())
        await self.bus.hset("challenge_of", user, code.encode())

    async def challenge(self, conn: Connection, message: ChallengeIntent) -> None:
        user = conn.user
        assert user is not None
        fmt = self._format(conn, message.format)
        if fmt is None or await self._busy(conn):
            return
        code = secrets.token_urlsafe(9)
        made = self.wall()
        kept = OpenChallenge(code, user.id, fmt.key, round(made * 1000))
        try:
            # the link is in the database before it is handed out: it works after a restart too
            await self.writer.write(before=[functools.partial(insert_challenge, challenge=kept)])
        except Exception:
            conn.error("server_error", "the challenge could not be saved: try again")
            return
        await self._keep_challenge(code, user.id, fmt.key, made)
        await self._watch_lobby(conn)
        conn.send(encode(ChallengeMsg(code, fmt.key, f"/duel?c={code}")))

    async def accept(self, conn: Connection, message: AcceptIntent) -> None:
        user = conn.user
        assert user is not None
        found = await self.bus.hget("challenges", message.code)
        challenge = json.loads(found) if found is not None else None
        if challenge is None or self.wall() - challenge["made"] > CHALLENGE_SECONDS:
            conn.error("no_such_challenge", "this challenge is no longer open")
            return
        if challenge["user"] == user.id:
            conn.error("own_challenge", "this is your own challenge: pass the link on to a friend")
            return
        if await self._busy(conn):
            return
        page = await self.bus.hget("lobby_pages", challenge["user"])
        host_page = json.loads(page) if page is not None else None
        if host_page is None or (host_page["node"] != self.node
                                 and await self.bus.holder(f"node:{host_page['node']}") is None):
            conn.error("challenger_away", "the player who made this challenge is not here right now")
            return
        if await self.bus.hget("busy", challenge["user"]) is not None:
            conn.error("challenger_away", "the player who made this challenge is playing another match")
            return
        fmt = Format.from_key(challenge["format"])
        async with self.bus.lock(f"lock:challenge:{message.code}"):
            if not await self.bus.hdel("challenges", message.code):  # taken by someone else meanwhile
                conn.error("no_such_challenge", "this challenge is no longer open")
                return
        host_name = await self._name_of(challenge["user"], host_page)
        host = _Side(challenge["user"], host_name, await self._rating(challenge["user"], fmt.game),
                     host_page["node"], host_page["peer"])
        await self._unseek(user.id)
        await self._unseek(challenge["user"])
        # the challenge goes in the transaction that makes the match: taken exactly when the match exists
        live = await self._start(fmt, host, self._side(conn, await self._rating(user.id, fmt.game)),
                                 also=[functools.partial(delete_challenges, codes=[message.code])])
        if live is None:
            await self.bus.hset("challenges", message.code, found)  # nothing was written: the link is still open
            return
        await self._remember_taken(message.code, live.id)
        if await self.bus.hget("challenge_of", challenge["user"]) == message.code.encode():
            await self.bus.hdel("challenge_of", challenge["user"])

    async def _remember_taken(self, code: str, match_id: str) -> None:
        """A link taken up says so for a day (``look``); older ones are forgotten as new ones come."""
        now = self.wall()
        old = [kept for kept, data in (await self.bus.hgetall("challenges_taken")).items()
               if now - json.loads(data)["at"] > TAKEN_KEPT_SECONDS]
        if old:
            await self.bus.hdel("challenges_taken", *old)
        await self.bus.hset("challenges_taken", code, json.dumps({"match": match_id, "at": now}).encode())

    async def _name_of(self, user_id: str, page: dict[str, str]) -> str:
        conn = self.peers.get(page["peer"]) if page["node"] == self.node else None
        if conn is not None and conn.user is not None:
            return conn.user.name
        return (await anyio.to_thread.run_sync(names_of, self.store.engine, [user_id])).get(user_id, "?")

    async def start_pair(self, fmt: Format, sides: list[tuple[str, str, Rating, str, str]], match_id: str,
                         also: Iterable[Callable[[Any], None]] = ()) -> bool:
        """Start match ``match_id`` of two players (user, name, rating, process and page of each), as
        a tournament pairs them: out of any pool they wait in; False if it could not be started."""
        a, b = (_Side(*side) for side in sides)
        for side in (a, b):
            await self._unseek(side.user)
        return await self._start(fmt, a, b, also=also, match_id=match_id) is not None

    async def _start(self, fmt: Format, a: _Side, b: _Side,
                     also: Iterable[Callable[[Any], None]] = (), match_id: str | None = None) -> LiveMatch | None:
        """Make a match of ``a`` and ``b``, owned here; tell both pages, wherever they are."""
        deal, proved = await self.deals.take(fmt)  # a secret key: nobody can compute the deal before the end
        clock = MatchClock(self.now)
        clock.go_live_at(self.now() + self.countdown)  # both clocks start when the countdown ends
        players = (Player(a.user, a.name, a.rating), Player(b.user, b.name, b.rating))
        match = Match(match_id or secrets.token_urlsafe(12), fmt, deal, clock=clock, players=players, proved=proved)
        live = LiveMatch(match, clock, self.now)
        token = await self.bus.acquire(f"match:{live.id}", LEASE_SECONDS)
        try:
            if token is None:
                raise RuntimeError("a new match's lease is taken")
            # the match exists in the database before anyone is told of it
            await self.writer.write(before=[lambda connection: insert_match(connection, match), *also])
        except Exception:
            log.exception("match %s could not be started", live.id)
            for side in (a, b):
                self._tell_page(side.node, side.peer, encode_error("server_error",
                                                                   "the match could not be started: try again"))
            return None
        self.matches[live.id] = live
        self.leases[live.id] = token
        await self.bus.hset("live", live.id, self.node.encode())
        await self._list_live(live)
        for side in (a, b):
            await self.bus.hset("busy", side.user, live.id.encode())
        for side in (a, b):
            conn = self.peers.get(side.peer) if side.node == self.node else None
            if conn is not None:
                await self._join(conn, live.id, 0)
            else:
                self.out.send(side.node, Envelope("matched", m=live.id, x=side.peer))
        await self._lobby_changed()
        return live

    def _tell_page(self, node: str, peer: str, data: bytes) -> None:
        if node == self.node:
            conn = self.peers.get(peer)
            if conn is not None:
                conn.send(data)
        else:
            self.out.to_peer(node, peer, data)

    # -- a match -----------------------------------------------------------------------------

    def _attach(self, conn: Peer, live: LiveMatch, side: int) -> None:
        if isinstance(conn, Connection):
            self.detach(conn)
            self.watchers.discard(conn)
        conn.match = live  # type: ignore[attr-defined]
        conn.side = side
        live.conns[side].add(conn)  # type: ignore[arg-type]

    async def _join(self, conn: Connection, match_id: str, seen: int) -> None:
        """Show match ``match_id`` on this page: owned here, elsewhere, or by nobody (then take it)."""
        self._unwatch(conn)  # a page plays or watches, never both
        live = self.matches.get(match_id)
        if live is None:
            owner = await self.bus.holder(f"match:{match_id}")
            if owner is None:
                live = await self._take_over(match_id)
                if live is None:
                    conn.error("no_such_match", f"no match {match_id} going on (a finished one is at /match?id=…)")
                    return
            elif owner != self.node:
                self.detach(conn)
                self.watchers.discard(conn)
                remote = self.remote.setdefault(match_id, RemoteMatch(match_id, owner))
                remote.conns.add(conn)
                conn.match = remote
                user = conn.user.id if conn.user is not None else ""
                self.out.send(owner, Envelope("join", m=match_id, x=conn.id, r=self.node, u=user, c=conn.cid,
                                              v=seen))
                return
            else:
                conn.error("server_error", f"match {match_id} is being restored: reconnect")
                return
        side = live.side_of(conn.user.id) if conn.user is not None else None
        if side is None:
            conn.error("not_your_match", "this match is between two other players")
            return
        self._attach(conn, live, side)
        live.catch_up(conn, side, seen)

    def _forward(self, conn: Connection, remote: RemoteMatch, message: Any) -> None:
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
        side = conn.side
        key = (side, conn.cid, intent.ack)
        async with live.lock:
            seen = live.replies.get(key)
            if seen is not None:
                conn.send(seen)  # sent twice: the first answer again, nothing played twice
                return
            if intent.ack <= live.last_ack.get((side, conn.cid), -1):
                conn.error("stale_ack", f"ack {intent.ack} is older than this page's last one", intent.ack)
                return
            if live.broken or self.matches.get(live.id) is not live:
                conn.error("server_error", "the match is being restored: reconnect", intent.ack)
                return
            starts_in = live.starts_in_ms()
            if starts_in > 0:
                conn.error("not_started", f"the clocks start in {starts_in / 1000:.1f} s: no move before that",
                           intent.ack)
                return
            live.last_ack[(side, conn.cid)] = intent.ack
            rows: list[MoveRow] = []
            out: list[tuple[bytes, bytes]] = []
            live.tick(rows, out)
            reply = live.carry_out(side, conn.cid, intent, rows, out)
            if rows and not await self._commit(live, rows):
                conn.error("server_error", "the move could not be saved: reconnect", intent.ack)
                return
            live.remember(key, reply)
            live.send(out)
            if not out or reply not in out[-1]:
                conn.send(reply)  # a rejection or an error goes to the sender only
        if live.match.is_over:
            await self._ended(live)

    async def _commit(self, live: LiveMatch, rows: list[MoveRow]) -> bool:
        return await self._commit_many([(live, rows)])

    async def _commit_many(self, items: list[tuple[LiveMatch, list[MoveRow]]]) -> bool:
        """Write the rows (and the result of a match that just ended) before anyone is told;
        False if that failed: those matches are then rebuilt from what their logs hold."""
        after = []
        for live, _ in items:
            if live.match.is_over and live.result is not None and live.over_at is None:
                result, ratings = live.result
                after.append(functools.partial(finish_match, match=live.match, result=result, after=ratings))
                live.over_at = self.now()
        try:
            await self.writer.write([(live.id, row) for live, rows in items for row in rows], after=after)
        except Exception:
            for live, _ in items:
                live.broken = True
                asyncio.get_running_loop().create_task(self._reload(live))
            return False
        return True

    async def _reload(self, live: LiveMatch) -> None:
        """After a failed write the match in memory is ahead of its log: rebuild it from the log."""
        for conns in live.conns:
            for conn in list(conns):
                conn.error("server_error", "the match is being restored from its log: reconnect")
        try:
            saved = await anyio.to_thread.run_sync(
                functools.partial(saved_matches, self.store.engine, match_id=live.id))
        except Exception:
            log.exception("cannot read the move log again")
            return
        if not saved:
            return
        fresh = self._rebuild(*saved[0])
        fresh.conns = live.conns
        self.matches[live.id] = fresh
        for side, conns in enumerate(fresh.conns):
            for conn in conns:
                conn.match = fresh  # type: ignore[attr-defined]
                conn.send(encode(fresh.snapshot(side)))

    async def _ended(self, live: LiveMatch) -> None:
        for player in live.match.players:
            if await self.bus.hget("busy", player.id) == live.id.encode():
                await self.bus.hdel("busy", player.id)
        await self.bus.hdel("live", live.id)
        await self.bus.hdel("live_info", live.id)
        await self._lobby_changed()

    # -- around a match: the lobby's list, rematches, spectators, what a challenge link is ----

    async def _list_live(self, live: LiveMatch) -> None:
        """List a match going on in the lobby (for spectators): its format and players."""
        players = [{"id": p.id, "name": p.name, "rating": round(p.rating.rating), "provisional": p.rating.provisional}
                   for p in live.match.players]
        info = {"id": live.id, "format": live.match.format.key, "players": players, "at": self.wall()}
        await self.bus.hset("live_info", live.id, json.dumps(info).encode())

    def _left(self, live: LiveMatch, side: int) -> None:
        """A page of ``side`` left a match: when none is left after the end, no rematch of it any more."""
        if live.conns[side] or not live.match.is_over or live.rematch_closed:
            return
        live.rematch_closed = True
        live.offers = [False, False]
        data = encode(RematchMsg(live.id, "left", side))
        for conn in live.conns[1 - side]:
            conn.send(data)

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
        if not isinstance(live, LiveMatch) or self.matches.get(live.id) is not live:
            peer.error("no_such_match", "this match is gone: no rematch of it")
            return
        if not live.match.is_over:
            peer.error("not_over", "a rematch is offered once the match is over")
            return
        side = peer.side
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
                if await self.bus.hget("busy", player.id) is not None:
                    peer.error("in_match", f"{player.name} plays another match now")
                    live.offers = [False, False]
                    self._tell_rematch(live, "withdrew", s)
                    return
                rating = await self._rating(player.id, live.match.game)
                sides.append(_Side(player.id, player.name, rating, node, page.id))
            live.rematch_closed = True  # this match's pages move on to the new one: nobody "left"
            live.offers = [False, False]
        for side_ in sides:
            await self._unseek(side_.user)
        # a new match like any other: a new secret deal from the stock, the same format
        await self._start(live.match.format, sides[1], sides[0])

    async def watch(self, conn: Connection, match_id: str) -> None:
        """Show match ``match_id`` to this page as a spectator: figures only, wherever it is played."""
        self.detach(conn)
        self._unwatch(conn)
        self.watchers.discard(conn)
        live = self.matches.get(match_id)
        if live is None:
            owner = await self.bus.holder(f"match:{match_id}")
            if owner is None:
                live = await self._take_over(match_id)
            elif owner != self.node:
                self.spectating[conn.id] = (match_id, owner)
                self.out.send(owner, Envelope("watch", m=match_id, x=conn.id, r=self.node))
                return
        if live is None:
            conn.error("no_such_match", f"no match {match_id} going on (a finished one is at /match?id=…)")
            return
        self.spectating[conn.id] = (match_id, self.node)
        live.watchers.add(conn)
        conn.send(encode(live.watch_view()))

    def _unwatch(self, conn: Connection) -> None:
        watched = self.spectating.pop(conn.id, None)
        if watched is None:
            return
        match_id, owner = watched
        if owner == self.node:
            live = self.matches.get(match_id)
            if live is not None:
                live.watchers.discard(conn)
        else:
            self.out.send(owner, Envelope("unwatch", m=match_id, x=conn.id))

    async def _remote_watch(self, e: Envelope) -> None:
        peer = RemotePeer(e.x, e.r, "", self.out)
        live = self.matches.get(e.m)
        if live is None:
            peer.error("no_such_match", f"no match {e.m} going on (a finished one is at /match?id=…)")
            return
        old = self.remote_watchers.pop(e.x, None)
        if old is not None and old[0] in self.matches:
            self.matches[old[0]].watchers.discard(old[1])
        self.remote_watchers[e.x] = (e.m, peer)
        live.watchers.add(peer)
        peer.send(encode(live.watch_view()))

    async def look(self, conn: Connection, code: str) -> None:
        """Say what challenge ``code`` is, before anyone accepts it: who, which duel, still open or not."""
        found = await self.bus.hget("challenges", code)
        if found is None:
            taken = await self.bus.hget("challenges_taken", code)
            conn.send(encode(LookMsg(code, "taken" if taken is not None else "unknown")))
            return
        challenge = json.loads(found)
        fmt = Format.from_key(challenge["format"])
        if self.wall() - challenge["made"] > CHALLENGE_SECONDS:
            conn.send(encode(LookMsg(code, "expired", format=fmt.key)))
            return
        if conn.user is not None and conn.user.id == challenge["user"]:
            conn.send(encode(LookMsg(code, "own", format=fmt.key)))
            return
        page = await self.bus.hget("lobby_pages", challenge["user"])
        host_page = json.loads(page) if page is not None else None
        away = host_page is None or (host_page["node"] != self.node
                                     and await self.bus.holder(f"node:{host_page['node']}") is None)
        name = (await anyio.to_thread.run_sync(names_of, self.store.engine, [challenge["user"]])).get(
            challenge["user"], "?")
        rating = await self._rating(challenge["user"], fmt.game)
        by = DuelPlayer(challenge["user"], name, round(rating.rating), rating.provisional)
        conn.send(encode(LookMsg(code, "open", by, fmt.key, away)))

    # -- what other processes say ------------------------------------------------------------

    def _on_envelope(self, data: bytes) -> None:
        envelope = read_envelope(data)
        if envelope is not None:
            asyncio.get_running_loop().create_task(self._envelope(envelope))

    async def _envelope(self, e: Envelope) -> None:
        try:
            if e.k == "out":
                for peer, text in e.o:
                    conn = self.peers.get(peer)
                    if conn is not None:
                        conn.send(text.encode())
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
            elif e.k == "join":
                await self._remote_join(e)
            elif e.k == "act":
                await self._remote_act(e)
            elif e.k == "leave":
                peer = self.remote_peers.pop(e.x, None)
                live = self.matches.get(e.m)
                if peer is not None and live is not None:
                    live.conns[peer.side].discard(peer)  # type: ignore[arg-type]
                    self._left(live, peer.side)
            elif e.k == "watch":
                await self._remote_watch(e)
            elif e.k == "unwatch":
                watched = self.remote_watchers.pop(e.x, None)
                if watched is not None and watched[0] in self.matches:
                    self.matches[watched[0]].watchers.discard(watched[1])
        except Exception:
            log.exception("a message from another process failed: %s", e.k)

    async def _remote_join(self, e: Envelope) -> None:
        peer = self.remote_peers.get(e.x) or RemotePeer(e.x, e.r, e.u, self.out)
        peer.cid = e.c
        live = self.matches.get(e.m)
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
        if peer is None or peer.match is not self.matches.get(e.m):
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

    # -- lobby messages ----------------------------------------------------------------------

    def _on_lobby(self, _: bytes) -> None:
        """Tell the lobby's watchers soon (changes close together make one message)."""
        if self._lobby_later is not None or not self.watchers:
            return
        loop = asyncio.get_running_loop()
        self._lobby_later = loop.call_later(0.2, lambda: loop.create_task(self._tell_lobby()))

    async def _lobby_changed(self) -> None:
        await self.bus.publish("lobby", b"")

    async def _tell_lobby(self) -> None:
        self._lobby_later = None
        state = await self._lobby_state()
        for conn in list(self.watchers):
            if conn.dropped:
                self.watchers.discard(conn)
                continue
            conn.send(self._render_lobby(conn, state))

    async def _lobby_state(self) -> dict[str, Any]:
        pools = {key: await self._waiting(key) for key in FORMAT_KEYS}
        live = await self.bus.hgetall("live")
        listed = [json.loads(data) for match_id, data in (await self.bus.hgetall("live_info")).items()
                  if match_id in live]
        listed.sort(key=lambda info: -info["at"])
        return {"pools": pools, "busy": await self.bus.hgetall("busy"), "playing": len(live),
                "challenge_of": await self.bus.hgetall("challenge_of"), "online": await self._online(),
                "live": [LiveInfo(info["id"], info["format"], [DuelPlayer(**p) for p in info["players"]])
                         for info in listed[:LIVE_SHOWN]]}

    async def _online(self) -> int:
        """How many players have a duel page open, on any process that is alive."""
        pages = {field: node.decode() for field, node in (await self.bus.hgetall("online")).items()}
        gone = {node for node in set(pages.values()) - {self.node}
                if await self.bus.holder(f"node:{node}") is None}
        if gone:
            await self.bus.hdel("online", *[field for field, node in pages.items() if node in gone])
        return len({field.split("/", 1)[0] for field, node in pages.items() if node not in gone})

    async def _lobby_for(self, conn: Connection) -> bytes:
        return self._render_lobby(conn, await self._lobby_state())

    def _render_lobby(self, conn: Connection, state: dict[str, Any]) -> bytes:
        if "infos" not in state:  # the same for every page: encoded once
            infos = []
            for key in FORMAT_KEYS:
                fmt = Format.from_key(key)
                pool = sorted(state["pools"][key].values(), key=lambda entry: entry[1])
                shown = [DuelPlayer(side.user, side.name, round(side.rating.rating), side.rating.provisional)
                         for side, _ in pool[:POOL_SHOWN]]
                infos.append(PoolInfo(key, fmt.game, fmt.variant_name, fmt.limit_s, len(pool), shown))
            state["infos"] = msgspec.Raw(msgspec.json.encode(infos))
            state["live"] = msgspec.Raw(msgspec.json.encode(state["live"]))
        user = conn.user
        you = seeking = match = challenge = None
        if user is not None:
            you = DuelPlayer(user.id, user.name, 0, True)
            seeking = next((key for key in FORMAT_KEYS if user.id in state["pools"][key]), None)
            busy = state["busy"].get(user.id)
            match = busy.decode() if busy is not None else None
            code = state["challenge_of"].get(user.id)
            challenge = code.decode() if code is not None else None
        return encode(LobbyMsg(state["infos"], you, seeking, match, state["playing"], challenge, state["online"],
                               state["live"]))


def encode_error(code: str, message: str) -> bytes:
    return encode(ErrorMsg(code, message, None))
