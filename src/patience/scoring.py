"""Score tables (RULES.md): what each game pays for what happened.

A score table turns the engine's events into ledger lines ``(kind, points, reason)``. The
session adds them to its ledger, applies the time rules and clamps where the game says so. What a
table must remember of the game so far (the cards that have earned their foundation points) the
session keeps and hands in, so that an undo takes it back and a replay builds it again.
The numbers come from the game's options, so every line of a table is configurable.
"""

from __future__ import annotations

from typing import Any, ClassVar

from patience.cards import Card
from patience.games.base import Event, Outcome, State

__all__ = ["Line", "ScoreTable", "match_bonus", "match_result", "score_table_for"]

Line = tuple[str, int, str]  # kind, points, reason


class ScoreTable:
    """The default table: no points at all. Subclasses fill in their game's rules."""

    game: ClassVar[str] = ""
    clamp_every: bool = False  # keep the running total at 0 or more after every change
    clamp_end: bool = False
    undo_limit: int | None = None  # undos in store at most (each move adds one, each undo uses one); None: any
    undo_points: int = 0
    illegal_points: int = 0  # charged for a well-formed move the rules reject
    time_limit_ms: int | None = None
    time_penalty: tuple[int, int] | None = None  # (points, every ms)
    settles: bool = False  # some lines wait for the end of the match (see settle)

    def __init__(self, options: Any) -> None:
        self.options = options

    def start(self, state: State) -> list[Line]:
        return []

    def move(self, state: State, events: tuple[Event, ...], scored: set[Card]) -> list[Line]:
        """The lines of a move's events. ``scored`` holds the cards that have earned their foundation
        points so far in the game (moves undone left out); a table adds the cards it pays for."""
        return []

    def end(self, state: State, outcome: Outcome, elapsed_ms: int, steps: int) -> list[Line]:
        return []

    def settle(self, state: State, match_ms: int) -> list[Line]:
        """The lines that wait for the end of the match, which came ``match_ms`` after the start."""
        return []

    def pool_left(self, elapsed_ms: int) -> int | None:
        """A draining pool's value now, for games that have one."""
        return None


class CarpetScore(ScoreTable):
    """Teppich: the score is the number of cards on the foundations (4..52, or 0..52)."""

    game = "teppich"

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        self.undo_limit = None if options.undo_limit < 0 else options.undo_limit
        self.time_limit_ms = options.time_limit * 1000 if options.time_limit else None

    def start(self, state: State) -> list[Line]:
        on = state.foundation_cards()  # type: ignore[attr-defined]
        return [("start", on, f"{on} aces start the foundations")] if on else []

    def move(self, state: State, events: tuple[Event, ...], scored: set[Card]) -> list[Line]:
        return [("foundation", 1, f"{e.card.display} onto its foundation")
                for e in events if e.kind == Event.FOUNDATION and e.card is not None]


def _value(card: Card) -> int:
    return card % 13 + 1


class ReloadedScore(ScoreTable):
    """Solitaire Reloaded's table (RULES.md §2); every number is an option."""

    game = "reloaded"

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        o = options
        self.clamp_every = o.clamp == "every"
        self.clamp_end = o.clamp == "end"
        self.undo_limit = o.undo_limit
        self.undo_points = o.undo_points
        self.time_limit_ms = o.time_limit * 1000 if o.time_limit else None
        self.time_penalty = (o.time_penalty_points, o.time_penalty_seconds * 1000)

    def move(self, state: State, events: tuple[Event, ...], scored: set[Card]) -> list[Line]:
        o = self.options
        lines: list[Line] = []
        for e in events:
            card = e.card
            if e.kind == Event.FOUNDATION and card is not None:
                # Decision (foundation_once): a card pays only the first time it goes up, else taking
                # it back (−15) and putting it up again (+10 × value) would be a loop that earns
                if o.foundation_once and card in scored:
                    continue
                scored.add(card)
                lines.append(("foundation", o.foundation_points * _value(card),
                              f"{card.display} onto a foundation ({o.foundation_points} × {_value(card)})"))
            elif e.kind == Event.REVEAL and card is not None:
                lines.append(("reveal", o.reveal_points, f"{card.display} turned face up"))
            elif e.kind == Event.WASTE_TO_TABLEAU and card is not None:
                lines.append(("waste_to_tableau", o.waste_to_tableau_points * _value(card),
                              f"{card.display} from the waste onto the tableau "
                              f"({o.waste_to_tableau_points} × {_value(card)})"))
            elif e.kind == Event.FROM_FOUNDATION and card is not None:
                lines.append(("from_foundation", o.from_foundation_points,
                              f"{card.display} back from a foundation"))
            elif e.kind == Event.REDEAL:
                lines.append(("redeal", o.redeal_points, "the stock turned over again"))
        return lines

    def end(self, state: State, outcome: Outcome, elapsed_ms: int, steps: int) -> list[Line]:
        if outcome != Outcome.WON:
            return []
        o = self.options
        bonus = o.solved_points + o.solved_step_points // max(steps, 1)
        return [("solved", bonus, f"solved in {steps} steps: {o.solved_points} + "
                                  f"{o.solved_step_points} / {steps}")]


class FaecherScore(ScoreTable):
    """Der Fächer's table (RULES.md §3): a draining pool, +150/+75, −50, +300, +500."""

    game = "faecher"

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        o = options
        self.undo_limit = o.undo_limit
        self.illegal_points = o.illegal_points
        self.time_limit_ms = o.time_limit * 1000
        # Decision (pool_until=match, duels): the pool drains until both games have ended
        self.settles = o.pool_until == "match"

    def pool_left(self, elapsed_ms: int) -> int:
        o = self.options
        if o.pool_drain == "none":
            return o.pool
        limit = o.time_limit * 1000
        return o.pool * max(0, limit - elapsed_ms) // limit

    def move(self, state: State, events: tuple[Event, ...], scored: set[Card]) -> list[Line]:
        o = self.options
        lines: list[Line] = []
        for e in events:
            card = e.card
            if e.kind == Event.FOUNDATION and card is not None:
                if e.src == "reserve":
                    lines.append(("foundation", o.from_reserve_points,
                                  f"{card.display} onto a foundation from a reserve pile"))
                else:
                    lines.append(("foundation", o.foundation_points, f"{card.display} onto a foundation"))
            elif e.kind == Event.FAN_EMPTIED:
                lines.append(("fan_emptied", o.fan_emptied_points, "the fan emptied"))
        return lines

    def end(self, state: State, outcome: Outcome, elapsed_ms: int, steps: int) -> list[Line]:
        lines: list[Line] = []
        if outcome == Outcome.WON:
            lines.append(("solved", self.options.solved_points, "solved"))
        if not self.settles:
            lines.extend(self.settle(state, elapsed_ms))
        return lines

    def settle(self, state: State, match_ms: int) -> list[Line]:
        pool = self.pool_left(match_ms)
        return [("pool", pool, f"what is left of the pool after {match_ms // 1000} s")]


_TABLES: dict[str, type[ScoreTable]] = {t.game: t for t in (CarpetScore, ReloadedScore, FaecherScore)}


def score_table_for(state: State) -> ScoreTable:
    """The score table of ``state``'s game, set up from its options."""
    return _TABLES.get(state.INFO.id, ScoreTable)(state.options)


def match_bonus(winner_score: int, options: Any) -> int:
    """The match winner's bonus (RULES.md §2, Match): a percentage of the score, at least a minimum."""
    return max(winner_score * options.match_bonus_percent // 100, options.match_bonus_min)


def match_result(scores: tuple[int, int], options: Any) -> tuple[int | None, tuple[int, int]]:
    """Who won a match of two final scores, and the final scores with the winner's bonus.

    Returns ``(winner, (final_a, final_b))``: winner 0 or 1, or None for a draw (equal scores).

    >>> from patience.games.reloaded import ReloadedOptions
    >>> match_result((1200, 800), ReloadedOptions())
    (0, (1320, 800))
    >>> match_result((50, 50), ReloadedOptions())
    (None, (50, 50))
    """
    a, b = scores
    if a == b:
        return None, (a, b)
    winner = 0 if a > b else 1
    finals = [a, b]
    finals[winner] += match_bonus(finals[winner], options)
    return winner, (finals[0], finals[1])
