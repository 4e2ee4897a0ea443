"""Matches being played: the append-only move log written before anything is told, and the live
match that numbers every change, tells each player their part and is rebuilt from its log.

A match is a :class:`patience.duel.Match` in a :class:`LiveMatch`, which numbers every change as
the next version and tells each player their own part (their table, score and ledger) and the
opponent's progress (figures only, never a card). Each version is first a row of the match's
move log; the :class:`LogWriter` commits the rows of all matches together (a group commit) and
only then are the events sent. So whatever a player was told survives a crash, and replaying
the rows rebuilds each match, its versions and its answers to acks exactly.

A new match starts with a countdown (:data:`COUNTDOWN_SECONDS`): both players see who they meet,
and the match clock, both games' clocks, stand at 0 until it is over (:class:`MatchClock`); an
intent before then is refused. Spectators (``watchers``) get the match as :class:`WatchMsg`:
both players' figures, never a card.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence

import msgspec

from patience.duel import (
    Match,
    MatchResult,
    Player,
)
from patience.errors import BadInputError, GameOverError, IllegalMoveError
from patience.games import DRAW, REDEAL, get_game
from patience.ladder import Change, attempted, effort_of
from patience.ratings import Rating
from patience.server.explain import why
from patience.server.live import GameClock, Now, Peer
from patience.server.protocol import (
    DuelEvent,
    DuelMsg,
    DuelPlayer,
    ErrorMsg,
    GiveUpIntent,
    MatchEnd,
    MoveIntent,
    Progress,
    RatingChange,
    Rejected,
    Status,
    StockIntent,
    UndoIntent,
    WatchMsg,
    encode,
)
from patience.server.solo.hub import STALE, LiveGame, TableChanges, ledger_line
from patience.server.storage.league import (
    MoveRow,
    applied_ratings,
)

__all__ = ["COUNTDOWN_SECONDS", "Intent", "LiveMatch", "MatchClock", "error_reply"]

log = logging.getLogger("patience.server")

Intent = MoveIntent | StockIntent | UndoIntent | GiveUpIntent

KEEP_REPLIES = 256  # answers kept per match for intents sent again
KEEP_EVENTS = 400  # versions kept per match for a player who reconnects (older: the whole match)
HEARTBEAT_MS = 5000  # a match logs its clock at least this often: a restart loses at most this much time
COUNTDOWN_SECONDS = 3.0
"""From "match found" to the start of both clocks: both players see who they meet (docs/protocol.md)."""


class MatchClock(GameClock):
    """A match's clock: like a game's, and it may be set to start at a moment to come (the countdown's
    end, on the server's clock): it reads 0 until then, so neither game's time runs."""

    def __call__(self) -> float:
        if self._live_from is None:
            return self.now
        return self.now + max(0.0, self._real() - self._live_from)

    def go_live_at(self, at: float) -> None:
        self._live_from = at

    def starts_in(self) -> float:
        """Seconds until the clock starts (0 once it runs)."""
        return 0.0 if self._live_from is None else max(0.0, self._live_from - self._real())


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
        self.conns: tuple[set[Peer], set[Peer]] = (set(), set())  # the playing pages, here or elsewhere
        # a LiveGame per side draws that side's table and status exactly as a solo game's
        self.views = tuple(LiveGame(match.id, p.id, s, clock, match.format.variant_name, now)
                           for p, s in zip(match.players, match.sessions, strict=True))
        self.ledger_sent = [len(s.ledger) for s in match.sessions]
        self.changes = (TableChanges(), TableChanges())  # per side: which page moved its cards at which version
        self.lock = asyncio.Lock()
        self.seq = 0
        self.logged_ms = 0
        self.end: MatchEnd | None = None
        self.result: tuple[MatchResult, tuple[Rating, Rating]] | None = None
        self.over_at: float | None = None
        self.broken = False
        self.told_end: tuple[tuple[DuelEvent, DuelEvent], tuple[bytes, bytes]] | None = None
        """The version that first told the end (both players' events, rendered), rendered again once the
        result's write says what the ladder applied (:meth:`settle`)."""
        self.settled: tuple[tuple[bytes, bytes], tuple[bytes, bytes]] | None = None  # (as rendered, as settled)
        self.rated: Sequence[Change] | None = None  # what the result's write applied (OwnedMatches.commit_many)
        self.met_renewed = False  # whom each player met last counts again from the end (OwnedMatches.ended)
        self.evidence_sent = False  # both players' fair-play evidence was handed over at the end
        self.watchers: set[Peer] = set()  # spectators: they get WatchMsg, never a card
        self.offers = [False, False]  # after the end: which side offers a rematch
        self.rematch_closed = False  # a side left, or the rematch was made: no (more) rematch of this match

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
            status=self.status(side), ledger=[ledger_line(e) for e in match.sessions[side].ledger],
            opp=self.progress(1 - side), summary=view.summary(), end=self.end, starts_in=self.starts_in_ms(),
        )

    def starts_in_ms(self) -> int:
        starts_in = getattr(self.clock, "starts_in", None)
        return 0 if starts_in is None else round(starts_in() * 1000)

    def watch_view(self) -> WatchMsg:
        """The match as a spectator sees it: the figures of both players, never a card."""
        match = self.match
        return WatchMsg(id=match.id, v=self.version, format=match.format.key, game=match.game,
                        variant=match.format.variant_name, limit_s=match.format.limit_s,
                        commitment=match.commitment, players=[_player(p) for p in match.players],
                        sides=[self.progress(0), self.progress(1)], starts_in=self.starts_in_ms(),
                        end=self.end if match.is_over else None)

    def catch_up(self, conn: Peer, side: int, seen: int) -> None:
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
        if moved and actor is not None:
            self.changes[actor].note(self.version, cid)
        events = []
        for side in (0, 1):
            session = self.match.sessions[side]
            lines = [ledger_line(e) for e in session.ledger[self.ledger_sent[side]:]]
            self.ledger_sent[side] = len(session.ledger)
            mine = actor == side
            own_kind = kind if actor is None or mine else "opp"
            events.append(DuelEvent(
                v=self.version, kind=own_kind, ack=ack if mine else None, cid=cid if mine else None,
                move=move if mine else None, ok=ok or not mine, reason=reason if mine else None,
                why=why(reason) if mine and reason else None,
                table=self.views[side].table() if mine and moved else None, status=self.status(side), ledger=lines,
                opp=self.progress(1 - side), summary=self.views[side].summary(),
                end=self.end if self.match.is_over else None,
            ))
        pair = (encode(events[0]), encode(events[1]))
        if self.match.is_over and self.told_end is None:
            self.told_end = ((events[0], events[1]), pair)
        self.events.append(pair)
        while len(self.events) > KEEP_EVENTS:
            self.events.popleft()
            self.first_version += 1
        return pair

    def _finish(self) -> None:
        result, after = self.match.finish()
        self.result = (result, after)
        shown = after
        if not all(attempted(effort_of(s.record())) for s in self.match.sessions):  # no rating moves (ladder)
            shown = (self.match.players[0].rating, self.match.players[1].rating)
        self.end = MatchEnd(
            winner=result.winner, scores=list(result.scores), finals=list(result.finals), bonus=result.bonus,
            seed=str(self.match.seed), nonce=self.match.nonce, proved=self.match.proved,
            ratings=[DuelPlayer(p.id, p.name, round(r.rating), r.provisional)
                     for p, r in zip(self.match.players, shown, strict=True)],
            outcomes=list(result.outcomes),
            pools=None if (pools := self.match.pools()) is None else list(pools),
        )

    def settle(self, changes: Sequence[Change]) -> None:
        """The result is written: the end says what the ladder applied to each rating and why (not Glicko-2's
        proposal), in the version that told it (as kept for reconnecting pages and intents sent again) and
        from now on."""
        if self.end is None or self.result is None:
            return
        players = self.match.players
        after = applied_ratings(self.match, self.result[1], changes)
        self.end = msgspec.structs.replace(
            self.end, ratings=[DuelPlayer(p.id, p.name, round(r.rating), r.provisional) for p, r in zip(
                players, after, strict=True)],
            changes=[RatingChange(round(c.applied, 1), round(c.held, 1), c.reason) for c in changes])
        if self.told_end is None:
            return
        events, old = self.told_end
        new = (encode(msgspec.structs.replace(events[0], end=self.end)),
               encode(msgspec.structs.replace(events[1], end=self.end)))
        self.told_end, self.settled = None, (old, new)
        self.events = deque(new if pair is old else pair for pair in self.events)
        for key, reply in self.replies.items():
            if reply is old[key[0]]:
                self.replies[key] = new[key[0]]

    def as_settled(self, out: list[tuple[bytes, bytes]], reply: bytes | None = None
                   ) -> tuple[list[tuple[bytes, bytes]], bytes | None]:
        """Versions rendered before the result's write (and the answer to the intent that ended the match), as
        :meth:`settle` rendered them again."""
        if self.settled is None:
            return out, reply
        old, new = self.settled
        out = [new if pair is old else pair for pair in out]
        if reply is not None and reply in old:
            reply = new[old.index(reply)]
        return out, reply

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
            return error_reply("game_over", f"your game is over ({text})", ack)
        if isinstance(intent, MoveIntent | StockIntent) and self.changes[side].stale(intent.v, cid):
            # made on a table another page of this player has changed since: refused at no cost
            move = f"{intent.src}>{intent.dst}" if isinstance(intent, MoveIntent) else "stock"
            return encode(Rejected(ack, move, STALE, why(STALE)))
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
            self.views[side].note_step(logged, intent)
            rows.append(self._row("act", side, entry.action, entry.t_ms, cid, ack))
            pair = self._version("illegal", side, ack=ack, cid=cid, move=entry.action, ok=False, reason=exc.reason)
            out.append(pair)
            return pair[side]
        except (BadInputError, GameOverError) as exc:
            return error_reply("bad_move", str(exc), ack)
        entry = session.log[-1]
        self.views[side].note_step(logged, intent)  # fair play's evidence: kept in memory, written at the end
        rows.append(self._row("act", side, entry.action, entry.t_ms, cid, ack))
        kind = entry.action if entry.action in ("undo", "giveup") else "move"
        pair = self._version(kind, side, ack=ack, cid=cid, move=entry.action, moved=kind != "giveup")
        out.append(pair)
        return pair[side]

    def give_up_for(self, sides: Iterable[int], rows: list[MoveRow], out: list[tuple[bytes, bytes]]) -> None:
        """The server gives up the games of ``sides`` still going on (a mark: no intent of a page), each a
        logged version like a page's give-up."""
        for side in sides:
            if self.match.is_over or self.match.sessions[side].is_over:
                continue
            self.match.act(side, "giveup")
            entry = self.match.sessions[side].log[-1]
            rows.append(self._row("act", side, entry.action, entry.t_ms))
            out.append(self._version("giveup", side, move=entry.action))

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
        sent = False
        for pair in out:
            sent = True
            for side in (0, 1):
                for conn in self.conns[side]:
                    conn.send(pair[side])
        if sent and self.watchers:  # spectators: the figures now, once for all the versions just sent
            view = encode(self.watch_view())
            for watcher in list(self.watchers):
                watcher.send(view)


def error_reply(code: str, message: str, ack: int | None = None) -> bytes:
    return encode(ErrorMsg(code, message, ack))
