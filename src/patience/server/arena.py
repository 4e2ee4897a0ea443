"""Duels live: the lobby and its pools, challenges, matches on the server clock, the append-only
move log written before anything is told, and the matches rebuilt from that log after a restart.

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
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio

from patience.duel import (
    FORMATS,
    LIMITS,
    Format,
    Match,
    MatchResult,
    Player,
    Seeker,
    closest,
    pairs,
)
from patience.errors import BadInputError, GameOverError, IllegalMoveError, PatienceError
from patience.games import DRAW, REDEAL, get_game
from patience.ratings import Rating
from patience.rng import check_seed
from patience.server.dealstock import DealStock
from patience.server.explain import why
from patience.server.hub import Connection, GameClock, LiveGame, _line
from patience.server.league import (
    MoveRow,
    OpenChallenge,
    delete_challenges,
    finish_match,
    insert_challenge,
    insert_match,
    insert_moves,
    load_rating,
    open_challenges,
    parse_rating,
    saved_matches,
)
from patience.server.protocol import (
    AcceptIntent,
    ChallengeIntent,
    ChallengeMsg,
    DuelEvent,
    DuelMsg,
    DuelPlayer,
    ErrorMsg,
    GiveUpIntent,
    HintAsk,
    LobbyAsk,
    LobbyMsg,
    MatchEnd,
    MatchJoin,
    MoveIntent,
    Ping,
    Pong,
    PoolInfo,
    Progress,
    Rejected,
    SeekIntent,
    Status,
    StockIntent,
    TargetsAsk,
    UndoIntent,
    UnseekIntent,
    encode,
)
from patience.server.store import Store

__all__ = ["Arena", "LiveMatch", "LogWriter"]

log = logging.getLogger("patience.server")

Now = Callable[[], float]
Intent = MoveIntent | StockIntent | UndoIntent | GiveUpIntent

KEEP_REPLIES = 256  # answers kept per match for intents sent again
KEEP_EVENTS = 400  # versions kept per match for a player who reconnects (older: the whole match)
GATHER_SECONDS = 0.002  # how long the log writer lets rows gather before a transaction
HEARTBEAT_MS = 5000  # a match logs its clock at least this often: a restart loses at most this much time
CHALLENGE_SECONDS = 3600.0
OVER_KEEP_SECONDS = 120.0  # a finished match stays in memory this long for late reconnects
POOL_SHOWN = 12  # waiting players named per pool in the lobby
FORMAT_KEYS = [Format(game, variant, limit).key for game, variants in FORMATS.items() for variant in variants
               for limit in LIMITS]


# -- the move log writer -------------------------------------------------------------------------


@dataclass
class _Job:
    before: list[Callable[[Any], None]]
    moves: list[tuple[str, MoveRow]]
    after: list[Callable[[Any], None]]
    done: asyncio.Future[None]


class LogWriter:
    """Writes what matches hand it in batches, one transaction each, and says when it is durable.

    Everything queued while a transaction runs goes into the next one, so a thousand players'
    moves cost a few commits a second rather than a thousand. Within a batch, the ``before``
    work (new matches) runs first, then every move row, then the ``after`` work (results).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._jobs: list[_Job] = []
        self._wake = asyncio.Event()
        self.batches = 0
        self.rows = 0

    async def write(self, moves: Iterable[tuple[str, MoveRow]] = (), *, before: Iterable[Callable[[Any], None]] = (),
                    after: Iterable[Callable[[Any], None]] = ()) -> None:
        job = _Job(list(before), list(moves), list(after), asyncio.get_running_loop().create_future())
        self._jobs.append(job)
        self._wake.set()
        await job.done

    async def run(self, gather_seconds: float = GATHER_SECONDS) -> None:
        while True:
            await self._wake.wait()
            # a transaction costs far more than a row: let the moves of the next moment join this one
            await asyncio.sleep(gather_seconds)
            self._wake.clear()
            await self.flush()

    async def flush(self) -> None:
        jobs, self._jobs = self._jobs, []
        if not jobs:
            return
        try:
            await anyio.to_thread.run_sync(self._commit, jobs)
        except Exception as exc:  # every job of the batch is told; the matches rebuild from what is durable
            log.exception("writing the move log failed")
            for job in jobs:
                if not job.done.done():
                    job.done.set_exception(exc)
            return
        self.batches += 1
        self.rows += sum(len(j.moves) for j in jobs)
        for job in jobs:
            if not job.done.done():
                job.done.set_result(None)

    def _commit(self, jobs: list[_Job]) -> None:
        with self.store.engine.begin() as connection:
            for job in jobs:
                for work in job.before:
                    work(connection)
            insert_moves(connection, [row for job in jobs for row in job.moves])
            for job in jobs:
                for work in job.after:
                    work(connection)


# -- a live match --------------------------------------------------------------------------------


def _player(p: Player) -> DuelPlayer:
    return DuelPlayer(p.id, p.name, round(p.rating.rating), p.rating.provisional)


class LiveMatch:
    """A match being played: versions, the answers to acks, the players' connections."""

    def __init__(self, match: Match, clock: GameClock, now: Now) -> None:
        self.match = match
        self.clock = clock
        self.id = match.id
        self.version = 0
        self.first_version = 1
        self.events: deque[tuple[bytes, bytes]] = deque()
        self.replies: OrderedDict[tuple[int, str, int], bytes] = OrderedDict()
        self.last_ack: dict[tuple[int, str], int] = {}
        self.conns: tuple[set[Connection], set[Connection]] = (set(), set())
        # a LiveGame per side draws that side's table and status exactly as a solo game's
        self.views = tuple(LiveGame(match.id, p.id, s, clock, match.format.variant_name, now)
                           for p, s in zip(match.players, match.sessions, strict=True))
        self.ledger_sent = [len(s.ledger) for s in match.sessions]
        self.lock = asyncio.Lock()
        self.seq = 0
        self.logged_ms = 0
        self.end: MatchEnd | None = None
        self.result: tuple[MatchResult, tuple[Rating, Rating]] | None = None
        self.over_at: float | None = None
        self.broken = False

    # -- what each player sees ---------------------------------------------------------------

    def side_of(self, user_id: str) -> int | None:
        for side, player in enumerate(self.match.players):
            if player.id == user_id:
                return side
        return None

    def status(self, side: int) -> Status:
        return self.views[side].status()  # every duel game has its own clock: the match's limit

    def progress(self, side: int) -> Progress:
        return Progress(**self.match.progress(side))

    def snapshot(self, side: int) -> DuelMsg:
        match = self.match
        info = get_game(match.game).INFO
        view = self.views[side]
        return DuelMsg(
            id=match.id, v=self.version, you=side, format=match.format.key, game=match.game, names=dict(info.names),
            variant=match.format.variant_name, limit_s=match.format.limit_s, options=match.options,
            commitment=match.commitment, players=[_player(p) for p in match.players], table=view.table(),
            status=self.status(side), ledger=[_line(e) for e in match.sessions[side].ledger],
            opp=self.progress(1 - side), summary=view.summary(), end=self.end,
        )

    def catch_up(self, conn: Connection, side: int, seen: int) -> None:
        if 0 < seen <= self.version and seen + 1 >= self.first_version:
            for pair in list(self.events)[seen + 1 - self.first_version:]:
                conn.send(pair[side])
        else:
            conn.send(encode(self.snapshot(side)))

    # -- changes -----------------------------------------------------------------------------

    def _version(self, kind: str, actor: int | None, *, ack: int | None = None, cid: str | None = None,
                 move: str | None = None, ok: bool = True, reason: str | None = None, moved: bool = False,
                 ) -> tuple[bytes, bytes]:
        """Number a change as the next version; render it for both players (not sent yet)."""
        if self.match.is_over and self.end is None:
            self._finish()
        self.version += 1
        rendered = []
        for side in (0, 1):
            session = self.match.sessions[side]
            lines = [_line(e) for e in session.ledger[self.ledger_sent[side]:]]
            self.ledger_sent[side] = len(session.ledger)
            mine = actor == side
            own_kind = kind if actor is None or mine else "opp"
            rendered.append(encode(DuelEvent(
                v=self.version, kind=own_kind, ack=ack if mine else None, cid=cid if mine else None,
                move=move if mine else None, ok=ok or not mine, reason=reason if mine else None,
                why=why(reason) if mine and reason else None,
                table=self.views[side].table() if mine and moved else None, status=self.status(side), ledger=lines,
                opp=self.progress(1 - side), summary=self.views[side].summary(),
                end=self.end if self.match.is_over else None,
            )))
        pair = (rendered[0], rendered[1])
        self.events.append(pair)
        while len(self.events) > KEEP_EVENTS:
            self.events.popleft()
            self.first_version += 1
        return pair

    def _finish(self) -> None:
        result, after = self.match.finish()
        self.result = (result, after)
        self.end = MatchEnd(
            winner=result.winner, scores=list(result.scores), finals=list(result.finals), bonus=result.bonus,
            seed=str(self.match.seed), nonce=self.match.nonce, proved=self.match.proved,
            ratings=[DuelPlayer(p.id, p.name, round(r.rating), r.provisional)
                     for p, r in zip(self.match.players, after, strict=True)],
            outcomes=list(result.outcomes),
        )

    def _row(self, kind: str, side: int | None, action: str | None, t_ms: int, cid: str | None = None,
             ack: int | None = None) -> MoveRow:
        self.seq += 1
        self.logged_ms = max(self.logged_ms, t_ms)
        return MoveRow(self.seq, kind, side, action, t_ms, cid, ack)

    def now_ms(self) -> int:
        return max(0, round(self.clock() * 1000))

    def tick(self, rows: list[MoveRow], out: list[tuple[bytes, bytes]], *, heartbeat: bool = False) -> None:
        """Bring both games to the clock; a change (or a due heartbeat) becomes a logged version."""
        if self.match.is_over:
            return
        changed = self.match.tick()
        now = self.now_ms()
        if changed or (heartbeat and now - self.logged_ms >= HEARTBEAT_MS):
            rows.append(self._row("tick", None, None, now))
            out.append(self._version("tick", None))

    def carry_out(self, side: int, cid: str, intent: Intent, rows: list[MoveRow],
                  out: list[tuple[bytes, bytes]]) -> bytes:
        """Play an intent of ``side``; returns the answer for the intent's sender."""
        ack = intent.ack
        session = self.match.sessions[side]
        if session.is_over:
            text = session.outcome.value.replace("_", " ") if session.outcome else "over"
            return _error("game_over", f"your game is over ({text})", ack)
        if isinstance(intent, UndoIntent):
            action = "undo"
        elif isinstance(intent, GiveUpIntent):
            action = "giveup"
        elif isinstance(intent, StockIntent):
            state = session.state
            if state.check(DRAW) is None:
                action = str(DRAW)
            elif state.check(REDEAL) is None:
                action = str(REDEAL)
            else:
                reason = state.check(DRAW) or "the stock is empty"
                return encode(Rejected(ack, "stock", reason, why(reason)))
        else:
            action = str(self.views[side]._resolve(intent))
        logged = len(session.log)
        try:
            self.match.act(side, action)
        except IllegalMoveError as exc:
            if len(session.log) == logged:
                return encode(Rejected(ack, exc.move, exc.reason, why(exc.reason)))
            entry = session.log[-1]  # a wrong click that cost points is a change like any move
            rows.append(self._row("act", side, entry.action, entry.t_ms, cid, ack))
            pair = self._version("illegal", side, ack=ack, cid=cid, move=entry.action, ok=False, reason=exc.reason)
            out.append(pair)
            return pair[side]
        except (BadInputError, GameOverError) as exc:
            return _error("bad_move", str(exc), ack)
        entry = session.log[-1]
        rows.append(self._row("act", side, entry.action, entry.t_ms, cid, ack))
        kind = entry.action if entry.action in ("undo", "giveup") else "move"
        pair = self._version(kind, side, ack=ack, cid=cid, move=entry.action, moved=kind != "giveup")
        out.append(pair)
        return pair[side]

    def replay_row(self, row: MoveRow) -> None:
        """Apply one logged row again while rebuilding (the clock stands at the row's time)."""
        self.clock.set_ms(row.t_ms)
        self.seq = row.seq
        self.logged_ms = max(self.logged_ms, row.t_ms)
        if row.kind == "tick":
            self.match.tick()
            self._version("tick", None)
            return
        side = int(row.side or 0)
        action = str(row.action)
        ok, reason = True, None
        try:
            self.match.act(side, action)
        except IllegalMoveError as exc:
            ok, reason = False, exc.reason
        kind = "illegal" if not ok else action if action in ("undo", "giveup") else "move"
        pair = self._version(kind, side, ack=row.ack, cid=row.cid, move=action, ok=ok, reason=reason,
                             moved=kind in ("move", "undo"))
        if row.cid is not None and row.ack is not None:
            self.last_ack[(side, row.cid)] = max(row.ack, self.last_ack.get((side, row.cid), -1))
            self.remember((side, row.cid, row.ack), pair[side])

    def remember(self, key: tuple[int, str, int], reply: bytes) -> None:
        self.replies[key] = reply
        while len(self.replies) > KEEP_REPLIES:
            self.replies.popitem(last=False)

    def send(self, out: Iterable[tuple[bytes, bytes]]) -> None:
        for pair in out:
            for side in (0, 1):
                for conn in self.conns[side]:
                    conn.send(pair[side])


def _error(code: str, message: str, ack: int | None = None) -> bytes:
    return encode(ErrorMsg(code, message, ack))


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
