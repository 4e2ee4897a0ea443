"""A game being played: moves with their times, undo under the game's policy, the score ledger.

The session is the only place where time enters the rules. Time is kept in whole
milliseconds from the start, read from an injectable clock, so time penalties, the draining
pool and time limits are exact in tests and in replays::

    clock = ManualClock()
    session = Session("reloaded", seed=7, clock=clock)
    session.play("draw")
    clock.advance(12.5)
    session.tick()            # one full 10 s period: −2
    [line.reason for line in session.ledger]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from patience.cards import Card
from patience.errors import GameOverError, IllegalMoveError
from patience.games import Move, Outcome, State, get_game
from patience.options import options_to_dict
from patience.rng import Seed, check_seed
from patience.scoring import ScoreTable, score_table_for

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "LedgerEntry", "LogEntry", "ManualClock", "Session"]

RECORD_FORMAT = "patience-record"
RECORD_VERSION = 1
"""A game record's format and version (docs/notation.md; read by :mod:`patience.record`)."""

Clock = Callable[[], float]


class ManualClock:
    """A clock that moves only when told to: for tests, replays and simulations."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock does not go back")
        self.now += seconds

    def set_ms(self, ms: int) -> None:
        self.now = ms / 1000


@dataclass(frozen=True)
class LedgerEntry:
    """One change of the score: when, why, the table's points and what it really changed."""

    t_ms: int
    kind: str
    points: int
    applied: int  # the change after the floor was applied
    total: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"t": self.t_ms, "kind": self.kind, "points": self.points, "applied": self.applied,
                "total": self.total, "reason": self.reason}


@dataclass(frozen=True)
class LogEntry:
    """One action of the player, as a record keeps it: a move, an undo, a rejected move, give up."""

    t_ms: int
    action: str  # move text, "undo", "giveup"
    illegal: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"m": self.action, "t": self.t_ms}
        if self.illegal:
            out["illegal"] = True
        return out


@dataclass
class _Played:
    move: Move
    entries: list[LedgerEntry] = field(default_factory=list)
    scored: frozenset[Card] = frozenset()  # the cards that earned their foundation points by this move


class Session:
    """A game of one player, from the deal to its end."""

    def __init__(
        self,
        game: str | type[State],
        seed: Seed,
        options: Any = None,
        *,
        clock: Clock | None = None,
    ) -> None:
        cls = get_game(game) if isinstance(game, str) else game
        self.seed = check_seed(seed)
        self.state: State = cls.deal(self.seed, options)
        self.options = self.state.options
        self.table: ScoreTable = score_table_for(self.state)
        self._clock: Clock = clock or time.monotonic
        self._t0 = self._clock()
        self.ledger: list[LedgerEntry] = []
        self.log: list[LogEntry] = []
        self.score = 0
        self.outcome: Outcome | None = None
        self.end_ms: int | None = None
        self.match_end_ms: int | None = None  # when the match ended, once settled (see settle)
        self.moves_made = 0
        self.undo_depth = 0  # moves that may be undone now, under a limited undo
        self._played: list[_Played] = []
        self.scored: set[Card] = set()  # cards that have earned their foundation points (moves not undone)
        self._periods_charged = 0
        for kind, points, reason in self.table.start(self.state):
            self._add(0, kind, points, reason)
        self._check_over(0)

    # -- reading -----------------------------------------------------------------------------

    @property
    def game_id(self) -> str:
        return self.state.INFO.id

    def elapsed_ms(self) -> int:
        """Milliseconds of play: from the start to now, or to the end once the game is over."""
        if self.end_ms is not None:
            return self.end_ms
        return self._clock_ms()

    def _clock_ms(self) -> int:
        # round, not int: 1.001 s is 1000.9999… ms in binary floating point
        return max(0, round((self._clock() - self._t0) * 1000))

    def time_left_ms(self) -> int | None:
        limit = self.table.time_limit_ms
        return None if limit is None else max(0, limit - self.elapsed_ms())

    @property
    def waits_for_match(self) -> bool:
        """The game is over, but some of its score waits for the end of the match (a duel's pool)."""
        return self.outcome is not None and self.table.settles and self.match_end_ms is None

    def pool_ms(self) -> int:
        """How long the pool has drained: the time played, and in a duel on until the match ends."""
        if self.match_end_ms is not None:
            return self.match_end_ms
        return self._clock_ms() if self.waits_for_match else self.elapsed_ms()

    def pool_left(self) -> int | None:
        return self.table.pool_left(self.pool_ms())

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    def undos_left(self) -> int | None:
        """Undos allowed now (None: no limit).

        A limited undo works like a buffer of the last ``undo_limit`` moves: each move adds one
        (up to the limit), each undo uses one. So 1 to 3 moves can be undone in a row, depending
        on the play since the last undo, and never more than 3 back (RULES.md §2).
        """
        if self.table.undo_limit is None:
            return None
        return min(self.undo_depth, len(self._played))

    def undo_reason(self) -> str | None:
        """Why an undo is not allowed now, or None."""
        limit = self.table.undo_limit
        if self.outcome is not None:
            return "the game is over"
        if limit == 0:
            return "this game has no undo"
        if not self._played:
            return "there is no move to undo"
        if limit is not None and self.undo_depth == 0:
            back = "1 move" if limit == 1 else f"{limit} moves"
            return f"at most {back} back: make a move first"
        return None

    # -- acting ------------------------------------------------------------------------------

    def tick(self) -> None:
        """Bring the score and the game up to the clock: time penalties, time out."""
        self._tick(self.elapsed_ms())

    def _tick(self, now: int) -> None:
        """:meth:`tick` at ``now``: each action reads the clock once, so the time it is brought up to
        and the time it is logged at are the same, and a replay at the logged times does the same."""
        if self.outcome is not None:
            return
        limit = self.table.time_limit_ms
        upto = now if limit is None else min(now, limit)
        self._charge_time(upto)
        if limit is not None and now >= limit:
            self._finish(Outcome.TIME_OUT, limit)

    def play(self, move: Move | str) -> Move:
        """Play a move (a Move or its text). Raises BadInputError for text that is no move or a
        move naming a pile the game lacks (neither is charged nor logged), IllegalMoveError (with
        the reason) for a move the rules forbid, GameOverError after the end. A rejected move
        changes nothing, except the charge some games make for it (Der Fächer)."""
        now = self.elapsed_ms()
        self._tick(now)
        if self.outcome is not None:
            raise GameOverError(f"the game is over ({self.outcome.value.replace('_', ' ')})")
        if isinstance(move, str):
            move = self.state.parse_move(move)
        else:
            self.state.check_names(move)
        reason = self.state.check(move)
        if reason is not None:
            if self.table.illegal_points:
                self.log.append(LogEntry(now, str(move), illegal=True))
                self._add(now, "illegal", self.table.illegal_points, f"illegal move {move}: {reason}")
            raise IllegalMoveError(str(move), reason)
        events = self.state._apply(move)
        self.log.append(LogEntry(now, str(move)))
        self.moves_made += 1
        if self.table.undo_limit is not None:
            self.undo_depth = min(self.undo_depth + 1, self.table.undo_limit)
        played = _Played(move)
        self._played.append(played)
        known = frozenset(self.scored)
        for kind, points, why in self.table.move(self.state, events, self.scored):
            played.entries.append(self._add(now, kind, points, why))
        played.scored = frozenset(self.scored) - known
        self._check_over(now)
        return move

    def undo(self) -> Move:
        """Take back the last move under the game's undo policy; its points go back too."""
        now = self.elapsed_ms()
        self._tick(now)
        reason = self.undo_reason()
        if reason is not None:
            if self.outcome is not None:
                raise GameOverError(f"cannot undo: {reason}")
            raise IllegalMoveError("undo", reason)
        played = self._played.pop()
        self.state.pop()
        self.scored -= played.scored  # an undone move never happened: its cards may earn their points again
        self.undo_depth -= 1
        self.log.append(LogEntry(now, "undo"))
        back = -sum(e.applied for e in played.entries)
        if back:
            self._add(now, "take_back", back, f"points of {played.move} taken back")
        if self.table.undo_points:
            self._add(now, "undo", self.table.undo_points, f"undo of {played.move}")
        return played.move

    def give_up(self) -> None:
        """End the game now; the score reached so far is the result."""
        now = self.elapsed_ms()
        self._tick(now)
        if self.outcome is not None:
            raise GameOverError(f"the game is over ({self.outcome.value.replace('_', ' ')})")
        self.log.append(LogEntry(now, "giveup"))
        self._finish(Outcome.GIVEN_UP, now)

    def settle(self, match_ms: int) -> None:
        """The match has ended ``match_ms`` after the start: add what waited for it (RULES.md §3, a duel's
        pool drains until both games have ended). Only for a game that is over and waits for it."""
        if not self.waits_for_match:
            raise GameOverError("only a game that is over and waits for its match can be settled")
        assert self.end_ms is not None
        if match_ms < self.end_ms:
            raise GameOverError(f"the match cannot end ({match_ms} ms) before this game ({self.end_ms} ms)")
        self.match_end_ms = match_ms
        for kind, points, reason in self.table.settle(self.state, match_ms):
            self._add(match_ms, kind, points, reason)

    def apply_action(self, action: str) -> None:
        """Carry out one logged action text: a move, ``undo`` or ``giveup`` (records, duels)."""
        if action == "undo":
            self.undo()
        elif action == "giveup":
            self.give_up()
        else:
            self.play(action)

    # -- internals ---------------------------------------------------------------------------

    def _add(self, t_ms: int, kind: str, points: int, reason: str) -> LedgerEntry:
        total = self.score + points
        if self.table.clamp_every and total < 0:
            total = 0
        entry = LedgerEntry(t_ms, kind, points, total - self.score, total, reason)
        self.score = total
        self.ledger.append(entry)
        return entry

    def _charge_time(self, upto_ms: int) -> None:
        if self.table.time_penalty is None:
            return
        points, every = self.table.time_penalty
        periods = upto_ms // every
        while self._periods_charged < periods:
            self._periods_charged += 1
            t = self._periods_charged * every
            self._add(t, "time", points, f"{t // 1000} s of play")

    def _check_over(self, now: int) -> None:
        outcome = self.state.outcome()
        if outcome is not None:
            self._charge_time(now)
            self._finish(outcome, now)

    def _finish(self, outcome: Outcome, t_ms: int) -> None:
        self.outcome = outcome
        self.end_ms = t_ms
        steps = self.moves_made if getattr(self.options, "steps", "made") == "made" else self.state.ply
        for kind, points, reason in self.table.end(self.state, outcome, t_ms, steps):
            self._add(t_ms, kind, points, reason)
        if self.table.clamp_end and self.score < 0:
            self._add(t_ms, "floor", -self.score, "the score never ends below 0")

    # -- records -----------------------------------------------------------------------------

    def record(self) -> dict[str, Any]:
        """This game as a record: the versioned JSON form that :func:`patience.record.replay` plays again."""
        record: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "game": self.game_id,
            "options": self.options_dict,
            "seed": self.seed,
            "actions": [entry.to_dict() for entry in self.log],
        }
        if self.outcome is not None:
            record["end"] = {"t": self.end_ms, "outcome": self.outcome.value}
            if self.match_end_ms is not None:
                record["end"]["match_t"] = self.match_end_ms  # a duel's pool drained until then
            record["result"] = self.summary()
        return record

    def summary(self) -> dict[str, Any]:
        """The result so far: outcome, score, moves, time, cards on the foundations."""
        return {
            "outcome": self.outcome.value if self.outcome else None,
            "score": self.score,
            "moves": self.moves_made,
            "ms": self.elapsed_ms(),
            "foundation_cards": self.state.foundation_cards(),
        }

    @property
    def options_dict(self) -> dict[str, Any]:
        return options_to_dict(self.options, only_changed=True)

