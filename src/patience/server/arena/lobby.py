"""The arena: the lobby and its pools, challenges, and the matches on the server clock, rebuilt
from their logs after a restart (the matches themselves: :mod:`patience.server.arena.matches`).

A match is a :class:`patience.duel.Match` in a :class:`LiveMatch`, which numbers every change as
the next version and tells each player their own part (their table, score and ledger) and the
opponent's progress (figures only, never a card). Each version is first a row of the match's
move log; the :class:`LogWriter` commits the rows of all matches together (a group commit) and
only then are the events sent. So whatever a player was told survives a crash, and replaying
the rows rebuilds each match, its versions and its answers to acks exactly.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio

from patience.duel import (
    FORMATS,
    LIMITS,
    Format,
    Match,
    Player,
    Seeker,
    closest,
    pairs,
)
from patience.errors import PatienceError
from patience.ratings import Rating
from patience.rng import check_seed
from patience.server.arena.dealstock import DealStock
from patience.server.arena.matches import Intent, LiveMatch, LogWriter
from patience.server.live import Connection, GameClock, Now
from patience.server.protocol import (
    AcceptIntent,
    ChallengeIntent,
    ChallengeMsg,
    DuelPlayer,
    GiveUpIntent,
    HintAsk,
    LobbyAsk,
    LobbyMsg,
    MatchJoin,
    MoveIntent,
    Ping,
    Pong,
    PoolInfo,
    SeekIntent,
    StockIntent,
    TargetsAsk,
    UndoIntent,
    UnseekIntent,
    encode,
)
from patience.server.storage.league import (
    MoveRow,
    OpenChallenge,
    delete_challenges,
    finish_match,
    insert_challenge,
    insert_match,
    load_rating,
    open_challenges,
    parse_rating,
    saved_matches,
)
from patience.server.storage.store import Store

__all__ = ["Arena"]

log = logging.getLogger("patience.server")


CHALLENGE_SECONDS = 3600.0
OVER_KEEP_SECONDS = 120.0  # a finished match stays in memory this long for late reconnects
POOL_SHOWN = 12  # waiting players named per pool in the lobby
FORMAT_KEYS = [Format(game, variant, limit).key for game, variants in FORMATS.items() for variant in variants
               for limit in LIMITS]


# -- the arena: lobby, challenges, matches -------------------------------------------------------


@dataclass
class _Seeking:
    user: str
    name: str
    rating: Rating
    conn: Connection
    since: float


@dataclass
class _Challenge:
    code: str
    user: str
    format: Format
    made: float  # on the wall clock: the challenge is in the database and outlives a restart
    taken: bool = field(default=False)


class Arena:
    """Every duel: the pools of the lobby, open challenges, live matches and their log.

    The pools are in memory only: a player waits with an open page, and a page that reconnects
    (after a restart, say) joins its pool again. Open challenges are kept in the database too
    (made and lapsed on ``wall``, the clock of seconds since the epoch), so a link passed on
    still works after a restart."""

    def __init__(self, store: Store, *, now: Now = time.monotonic, wall: Now = time.time,
                 deals: DealStock | None = None) -> None:
        self.store = store
        self.now = now
        self.wall = wall
        self.deals = deals if deals is not None else DealStock(store, 0)
        self.writer = LogWriter(store)
        self.matches: dict[str, LiveMatch] = {}
        self.playing: dict[str, LiveMatch] = {}  # user id -> their match going on
        self.pools: dict[str, dict[str, _Seeking]] = {key: {} for key in FORMAT_KEYS}
        self.challenges: dict[str, _Challenge] = {}  # code -> the challenge
        self.challenge_of: dict[str, str] = {}  # user id -> the code of their open challenge
        self.watchers: set[Connection] = set()
        self._lobby_later: asyncio.TimerHandle | None = None

    # -- starting and stopping ---------------------------------------------------------------

    async def restore(self) -> int:
        """Rebuild every live match from its move log and take up the open challenges (after a
        restart); returns how many matches."""
        lapsed_ms = round((self.wall() - CHALLENGE_SECONDS) * 1000)
        for kept in await anyio.to_thread.run_sync(open_challenges, self.store.engine, lapsed_ms):
            try:
                fmt = Format.from_key(kept.format)
            except PatienceError:  # a format that is no longer played: the link lapses
                continue
            self._keep_challenge(_Challenge(kept.code, kept.user, fmt, kept.made_ms / 1000))
        saved = await anyio.to_thread.run_sync(saved_matches, self.store.engine)
        for row, names, moves in saved:
            try:
                live = self._rebuild(row, names, moves)
            except (PatienceError, KeyError, TypeError, ValueError):
                log.exception("match %s cannot be rebuilt from its log", row.id)
                continue
            self.matches[live.id] = live
            if not live.match.is_over:
                for player in live.match.players:
                    self.playing[player.id] = live
        return len(saved)

    def _rebuild(self, row: Any, names: dict[str, str], moves: list[MoveRow]) -> LiveMatch:
        fmt = Format(row.game, row.variant, row.limit_s)
        players = (Player(row.player_a, names.get(row.player_a, "?"), parse_rating(row.rating_a)),
                   Player(row.player_b, names.get(row.player_b, "?"), parse_rating(row.rating_b)))
        clock = GameClock(self.now)
        match = Match(row.id, fmt, check_seed(row.seed), row.nonce, clock, players, proved=bool(row.proved))
        if match.commitment != row.commitment:
            raise ValueError("the stored commitment does not match the stored deal")
        live = LiveMatch(match, clock, self.now)
        for move in moves:
            live.replay_row(move)
        # the clock goes on from the last logged moment: time while the server was down does not count
        clock.set_ms(live.logged_ms)
        clock.go_live()
        if match.is_over:
            live.over_at = self.now()
        return live

    async def tick(self) -> None:
        """The clock of every match (time penalties, time-outs and heartbeats, logged before told),
        and the pools: a player's reach in rating grows while waiting."""
        await self._pair_waiting()
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
                    self._ended(live)
        self._evict()

    async def run_clock(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.tick()
            except Exception:  # pragma: no cover - one broken match must not stop every clock
                log.exception("duel tick failed")

    def _evict(self) -> None:
        now = self.now()
        for live in list(self.matches.values()):
            if live.over_at is not None and now - live.over_at > OVER_KEEP_SECONDS and not any(live.conns):
                del self.matches[live.id]
        wall = self.wall()
        for challenge in list(self.challenges.values()):
            if not challenge.taken and wall - challenge.made > CHALLENGE_SECONDS:
                self._drop_challenge(challenge)  # its row goes at the next restart or challenge of its maker

    # -- connections -------------------------------------------------------------------------

    def takes(self, conn: Connection, message: Any) -> bool:
        """Is ``message`` for the arena (a duel message, or an intent while the page shows a match)?"""
        if isinstance(message, LobbyAsk | SeekIntent | UnseekIntent | ChallengeIntent | AcceptIntent | MatchJoin):
            return True
        if conn.match is not None:
            if isinstance(message, MoveIntent | StockIntent | UndoIntent | GiveUpIntent | HintAsk | TargetsAsk
                          | Ping):
                return True
            self.detach(conn)  # the page went on to a solo game
        return False

    def detach(self, conn: Connection) -> None:
        live = conn.match
        if live is not None:
            live.conns[conn.side].discard(conn)
            conn.match = None

    def disconnect(self, conn: Connection) -> None:
        self.detach(conn)
        self.watchers.discard(conn)
        user = conn.user
        if user is not None:
            for pool in self.pools.values():
                seeking = pool.get(user.id)
                if seeking is not None and seeking.conn is conn:
                    del pool[user.id]  # nobody is paired with a page that has gone
                    self._lobby_changed()

    async def handle(self, conn: Connection, message: Any) -> None:
        cid = getattr(message, "cid", None)
        if cid is not None:
            conn.cid = cid  # the page's id: acks count per page
        if isinstance(message, MoveIntent | StockIntent | UndoIntent | GiveUpIntent):
            await self.act(conn, message)
        elif isinstance(message, Ping):
            live = conn.match
            conn.send(encode(Pong(live.match.sessions[conn.side].elapsed_ms() if live else 0)))
        elif isinstance(message, HintAsk | TargetsAsk):
            conn.error("not_here", "hints are off in duels")
        elif isinstance(message, LobbyAsk):
            self.watchers.add(conn)
            conn.send(self._lobby_for(conn))
        elif isinstance(message, MatchJoin):
            await self.join(conn, message)
        elif conn.user is None:
            conn.error("sign_in", "duels are between people with an account: sign in first")
        elif isinstance(message, SeekIntent):
            await self.seek(conn, message)
        elif isinstance(message, UnseekIntent):
            self._unseek(conn.user.id)
            conn.send(self._lobby_for(conn))
        elif isinstance(message, ChallengeIntent):
            await self.challenge(conn, message)
        elif isinstance(message, AcceptIntent):
            await self.accept(conn, message)

    # -- the lobby ---------------------------------------------------------------------------

    def _format(self, conn: Connection, key: str) -> Format | None:
        try:
            return Format.from_key(key)
        except PatienceError as exc:
            conn.error("bad_format", str(exc))
            return None

    def _busy(self, conn: Connection) -> bool:
        user = conn.user
        live = self.playing.get(user.id) if user is not None else None
        if live is None or live.match.is_over:
            return False
        conn.error("in_match", f"finish your match {live.id} first")
        return True

    async def _rating(self, user_id: str, game: str) -> Rating:
        return await anyio.to_thread.run_sync(load_rating, self.store.engine, user_id, game)

    async def seek(self, conn: Connection, message: SeekIntent) -> None:
        user = conn.user
        assert user is not None
        fmt = self._format(conn, message.format)
        if fmt is None or self._busy(conn):
            return
        rating = await self._rating(user.id, fmt.game)
        self._unseek(user.id)
        pool = self.pools[fmt.key]
        waiting = [Seeker(s.user, s.rating.rating, s.since) for s in pool.values()]
        other = closest(rating.rating, waiting, exclude=user.id, now=self.now())
        if other is None:
            pool[user.id] = _Seeking(user.id, user.name, rating, conn, self.now())
            self.watchers.add(conn)
            self._lobby_changed()
            conn.send(self._lobby_for(conn))
            return
        opponent = pool.pop(other.user)
        self._lobby_changed()
        await self._start(fmt, (opponent.user, opponent.name, opponent.rating, opponent.conn),
                          (user.id, user.name, rating, conn))

    async def _pair_waiting(self) -> None:
        now = self.now()
        for key, pool in self.pools.items():
            if len(pool) < 2:
                continue
            waiting = [Seeker(s.user, s.rating.rating, s.since) for s in pool.values()]
            for first, second in pairs(waiting, now):
                a, b = pool.pop(first.user, None), pool.pop(second.user, None)
                if a is None or b is None:
                    continue
                self._lobby_changed()
                await self._start(Format.from_key(key), (a.user, a.name, a.rating, a.conn),
                                  (b.user, b.name, b.rating, b.conn))

    def _unseek(self, user_id: str) -> None:
        for pool in self.pools.values():
            if pool.pop(user_id, None) is not None:
                self._lobby_changed()

    def _keep_challenge(self, challenge: _Challenge) -> None:
        old = self.challenge_of.get(challenge.user)
        if old is not None:
            self.challenges.pop(old, None)  # one open challenge each: the newest
        self.challenges[challenge.code] = challenge
        self.challenge_of[challenge.user] = challenge.code

    def _drop_challenge(self, challenge: _Challenge) -> None:
        self.challenges.pop(challenge.code, None)
        if self.challenge_of.get(challenge.user) == challenge.code:
            del self.challenge_of[challenge.user]

    async def challenge(self, conn: Connection, message: ChallengeIntent) -> None:
        user = conn.user
        assert user is not None
        fmt = self._format(conn, message.format)
        if fmt is None or self._busy(conn):
            return
        made = _Challenge(secrets.token_urlsafe(9), user.id, fmt, self.wall())
        kept = OpenChallenge(made.code, user.id, fmt.key, round(made.made * 1000))
        try:
            # the link is in the database before it is handed out: it works after a restart too
            await self.writer.write(before=[functools.partial(insert_challenge, challenge=kept)])
        except Exception:
            conn.error("server_error", "the challenge could not be saved: try again")
            return
        self._keep_challenge(made)
        self.watchers.add(conn)
        conn.send(encode(ChallengeMsg(made.code, fmt.key, f"/duel?c={made.code}")))

    def _lobby_page(self, user_id: str) -> Connection | None:
        """A page of this player's that shows the lobby now (not a match), if any."""
        for conn in self.watchers:
            if not conn.dropped and conn.match is None and conn.user is not None and conn.user.id == user_id:
                return conn
        return None

    async def accept(self, conn: Connection, message: AcceptIntent) -> None:
        user = conn.user
        assert user is not None
        challenge = self.challenges.get(message.code)
        if challenge is None or challenge.taken or self.wall() - challenge.made > CHALLENGE_SECONDS:
            conn.error("no_such_challenge", "this challenge is no longer open")
            return
        if challenge.user == user.id:
            conn.error("own_challenge", "this is your own challenge: pass the link on to a friend")
            return
        if self._busy(conn):
            return
        host = self._lobby_page(challenge.user)
        if host is None or host.user is None:
            conn.error("challenger_away", "the player who made this challenge is not here right now")
            return
        if self.playing.get(challenge.user) is not None and not self.playing[challenge.user].match.is_over:
            conn.error("challenger_away", "the player who made this challenge is playing another match")
            return
        challenge.taken = True
        fmt = challenge.format
        host_rating = await self._rating(challenge.user, fmt.game)
        rating = await self._rating(user.id, fmt.game)
        self._unseek(user.id)
        self._unseek(challenge.user)
        # the challenge goes in the transaction that makes the match: taken exactly when the match exists
        live = await self._start(fmt, (challenge.user, host.user.name, host_rating, host),
                                 (user.id, user.name, rating, conn),
                                 also=[functools.partial(delete_challenges, codes=[challenge.code])])
        if live is None:
            challenge.taken = False  # nothing was written: the link is still open
        else:
            self._drop_challenge(challenge)

    async def _start(self, fmt: Format, a: tuple[str, str, Rating, Connection],
                     b: tuple[str, str, Rating, Connection],
                     also: Iterable[Callable[[Any], None]] = ()) -> LiveMatch | None:
        deal, proved = await self.deals.take(fmt)  # a secret key: nobody can compute the deal before the end
        clock = GameClock(self.now)
        clock.go_live()
        players = (Player(a[0], a[1], a[2]), Player(b[0], b[1], b[2]))
        match = Match(secrets.token_urlsafe(12), fmt, deal, clock=clock, players=players, proved=proved)
        live = LiveMatch(match, clock, self.now)
        try:
            # the match exists in the database before anyone is told of it
            await self.writer.write(before=[lambda connection: insert_match(connection, match), *also])
        except Exception:
            for conn in (a[3], b[3]):
                conn.error("server_error", "the match could not be started: try again")
            return None
        self.matches[live.id] = live
        for side, (_, _, _, conn) in enumerate((a, b)):
            self.playing[players[side].id] = live
            self._attach(conn, live, side)
            conn.send(encode(live.snapshot(side)))
        self._lobby_changed()
        return live

    def _attach(self, conn: Connection, live: LiveMatch, side: int) -> None:
        self.detach(conn)
        self.watchers.discard(conn)
        conn.match = live
        conn.side = side
        live.conns[side].add(conn)

    # -- a match -----------------------------------------------------------------------------

    async def join(self, conn: Connection, message: MatchJoin) -> None:
        conn.cid = message.cid
        live = self.matches.get(message.id)
        if live is None:
            conn.error("no_such_match", f"no match {message.id} going on (a finished one is at /match?id=…)")
            return
        side = live.side_of(conn.user.id) if conn.user is not None else None
        if side is None:
            conn.error("not_your_match", "this match is between two other players")
            return
        self._attach(conn, live, side)
        live.catch_up(conn, side, message.v)

    async def act(self, conn: Connection, intent: Intent) -> None:
        live = conn.match
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
            if live.broken:
                conn.error("server_error", "the match is being restored: reconnect", intent.ack)
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
            self._ended(live)

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
            saved = await anyio.to_thread.run_sync(saved_matches, self.store.engine)
        except Exception:
            log.exception("cannot read the move log again")
            return
        for row, names, moves in saved:
            if row.id == live.id:
                fresh = self._rebuild(row, names, moves)
                fresh.conns = live.conns
                self.matches[live.id] = fresh
                for player in fresh.match.players:
                    self.playing[player.id] = fresh
                for side, conns in enumerate(fresh.conns):
                    for conn in conns:
                        conn.match = fresh
                        conn.send(encode(fresh.snapshot(side)))

    def _ended(self, live: LiveMatch) -> None:
        for player in live.match.players:
            if self.playing.get(player.id) is live:
                del self.playing[player.id]
        self._lobby_changed()

    # -- lobby messages ----------------------------------------------------------------------

    def _lobby_changed(self) -> None:
        """Tell the lobby's watchers soon (changes close together make one message)."""
        if self._lobby_later is not None or not self.watchers:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._lobby_later = loop.call_later(0.2, self._tell_lobby)

    def _tell_lobby(self) -> None:
        self._lobby_later = None
        pools = self._pools()
        for conn in list(self.watchers):
            if conn.dropped:
                self.watchers.discard(conn)
                continue
            conn.send(self._lobby_for(conn, pools))

    def _pools(self) -> list[PoolInfo]:
        out = []
        for key in FORMAT_KEYS:
            fmt = Format.from_key(key)
            pool = sorted(self.pools[key].values(), key=lambda s: s.since)
            shown = [DuelPlayer(s.user, s.name, round(s.rating.rating), s.rating.provisional)
                     for s in pool[:POOL_SHOWN]]
            out.append(PoolInfo(key, fmt.game, fmt.variant_name, fmt.limit_s, len(pool), shown))
        return out

    def _lobby_for(self, conn: Connection, pools: list[PoolInfo] | None = None) -> bytes:
        user = conn.user
        you = seeking = match = None
        if user is not None:
            you = DuelPlayer(user.id, user.name, 0, True)
            seeking = next((key for key, pool in self.pools.items() if user.id in pool), None)
            live = self.playing.get(user.id)
            match = live.id if live is not None and not live.match.is_over else None
        playing = sum(1 for live in self.matches.values() if not live.match.is_over)
        challenge = self.challenge_of.get(user.id) if user is not None else None
        return encode(LobbyMsg(pools if pools is not None else self._pools(), you, seeking, match, playing,
                               challenge))
