"""Solving a position or a deal: the search of each game, the winning line checked by the rules
engine, and the :class:`Solution` with its record (re-exported by :mod:`patience.solve`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from patience.errors import PatienceError
from patience.games import Carpet, Faecher, Move, Reloaded, State, get_game
from patience.options import options_to_dict
from patience.rng import Seed
from patience.solve.search import Budget, SearchOutcome, Status

if TYPE_CHECKING:
    from patience.session import Session

__all__ = ["Solution", "SolverError", "solve", "solve_deal"]


class SolverError(PatienceError):
    """A solver could not handle a position (or, never expected, found a line that does not replay)."""


@dataclass
class Solution:
    """What a solver found for one position. ``moves`` is the whole winning line when won."""

    game: str
    options: dict[str, Any]
    status: Status
    moves: list[Move]
    nodes: int
    seconds: float  # CPU time of the thread that searched (what a Budget's seconds count)
    memory_mb: float  # the transposition table at its largest (an estimate)
    reason: str
    position: str  # the position solved, as text
    seed: Seed | None = None
    prefix: list[dict[str, Any]] = field(default_factory=list)  # actions from the deal to the position

    @property
    def won(self) -> bool:
        return self.status is Status.WON

    def start_state(self) -> State:
        from patience.notation import parse_position_text

        return get_game(self.game).from_position(parse_position_text(self.position))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: status, the move texts, what the search cost and the position."""
        out: dict[str, Any] = {
            "game": self.game,
            "options": self.options,
            "seed": self.seed,
            "status": self.status.value,
            "moves": [str(m) for m in self.moves],
            "nodes": self.nodes,
            "seconds": round(self.seconds, 4),
            "memory_mb": round(self.memory_mb, 1),
            "reason": self.reason,
            "position": self.position,
        }
        if self.seed is not None and self.won:
            out["record"] = self.record()
        return out

    def session(self) -> Session:
        """The game replayed through :class:`~patience.session.Session`: the deal, the actions
        that led to the position, then the solution's moves (all at the last action's time)."""
        from patience.session import ManualClock, Session

        if self.seed is None:
            raise SolverError("this position has no seed: its moves replay on the position only (check())")
        clock = ManualClock()
        session = Session(self.game, self.seed, self.options, clock=clock)
        last = 0
        for action in self.prefix:
            last = int(action.get("t", 0))
            clock.set_ms(last)
            try:
                session.apply_action(str(action["m"]))
            except PatienceError:
                if not action.get("illegal"):
                    raise
        for move in self.moves:
            session.play(move)
        return session

    def record(self) -> dict[str, Any]:
        """A game record of the deal played to the end along the solution (see :mod:`patience.record`)."""
        return self.session().record()

    def check(self) -> None:
        """Replay the line through the rules engine; raise SolverError unless it wins."""
        if not self.won:
            return
        _check_line(self.start_state(), self.moves)
        if self.seed is not None:
            session = self.session()
            if session.outcome is None or session.outcome.value != "won":
                raise SolverError("the solution does not replay as a won game")


def _solve_state(state: State, budget: Budget) -> tuple[SearchOutcome, list[Move]]:
    if isinstance(state, Carpet):
        from patience.solve.carpet import solve_carpet

        return solve_carpet(state, budget)
    if isinstance(state, Faecher):
        from patience.solve.faecher import solve_faecher

        return solve_faecher(state, budget)
    if isinstance(state, Reloaded):
        from patience.solve.klondike import solve_klondike

        return solve_klondike(state, budget)
    raise SolverError(f"no solver for {type(state).__name__}")


def solve(target: State | Session, budget: Budget | None = None) -> Solution:
    """Solve the position of a state or of a session (from its current position on)."""
    budget = budget or Budget()
    seed: Seed | None = None
    prefix: list[dict[str, Any]] = []
    if not isinstance(target, State):  # a Session (not imported for a state: solving a deal needs none)
        seed = target.seed
        prefix = [entry.to_dict() for entry in target.log]
        state = target.state
    else:
        state = target
    started = time.thread_time()  # what the budget counts: this thread's CPU time (see Budget)
    outcome, moves = _solve_state(state, budget)
    if outcome.status is Status.WON:
        _check_line(state, moves)
    seconds = max(outcome.seconds, time.thread_time() - started)
    return Solution(
        game=state.INFO.id,
        options=options_to_dict(state.options, only_changed=True),
        status=outcome.status,
        moves=list(moves),
        nodes=outcome.nodes,
        seconds=seconds,
        memory_mb=outcome.table_bytes / (1024 * 1024),
        reason=outcome.reason,
        position=str(state),
        seed=seed,
        prefix=prefix,
    )


def _check_line(state: State, moves: Sequence[Move]) -> None:
    """The rules engine plays a winning line through, move by move, before it is reported."""
    s = state.copy()
    for number, move in enumerate(moves, 1):
        reason = s.check(move)
        if reason is not None:
            raise SolverError(f"move {number} of the solver's line, {move}, is illegal: {reason}")
        s.push(move)
    if not s.is_won():
        raise SolverError("the solver's line does not end in a won game")


def solve_deal(game: str, seed: Seed, options: Mapping[str, Any] | Sequence[str] | Any = None,
               budget: Budget | None = None) -> Solution:
    """Solve deal ``seed`` of ``game`` under ``options`` from its start."""
    cls = get_game(game)
    state = cls.deal(seed, options)
    solution = solve(state, budget)
    solution.seed = seed
    return solution
