"""Where only the hidden cards decide: a Solitaire Reloaded decision as the solver sees it with every
card known, against what the visible cards allow (fair play's clairvoyance test, docs/fairplay.md).

At a position with cards the player has not seen (:mod:`patience.solve.unseen`) the solver is asked
for its next move twice over: on the **real** deal (every card known, a small budget), and on deals
that look exactly like the table to the player (the unseen cards dealt at random). For a player who
decides on what the table shows, whatever their way of deciding, the real deal is one more such
deal: their move is the real solver's move about as often as it is the sampled deals' solver's move.
A player who knows the hidden cards (a scouted deal of the day, a leaked deal) and plays the solver's
line is right every time, also where the sampled deals disagree. :func:`hidden_decision` gives one
decision; :func:`patience.fairplay.tail_at_least` weighs a game's hits against the chances.

>>> from patience.games import get_game
>>> state = get_game("reloaded").deal(103)
>>> found = hidden_decision(state)
>>> found.hit(found.real), 0 < found.chance(found.real) < 1
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from patience.games import Reloaded
from patience.solve.unseen import unseen, visible_deals

__all__ = ["REAL_NODES", "SAMPLES", "SAMPLE_NODES", "HiddenDecision", "hidden_decision", "solver_move"]

SAMPLES = 12  # deals that look like the table, each solved once a decision
SAMPLE_NODES = 20_000  # positions a deal may search (most are decided in a few hundred)
REAL_NODES = 20_000  # ... the real deal, the same
MIN_SOLVED = 6  # a decision counts when at least this many sampled deals were solved (won)


@dataclass(frozen=True)
class HiddenDecision:
    """One decision: the solver's move on the real deal and on each sampled deal it won."""

    real: str
    samples: tuple[str, ...]

    def hit(self, move: str) -> bool:
        """Is ``move`` the real deal's solver move."""
        return move == self.real

    def chance(self, move: str) -> float:
        """The chance that ``move`` is the real deal's solver move for a player who sees only the table:
        the share of the sampled deals whose solver plays it (one more and one fewer, so never 0 or 1)."""
        return (sum(m == move for m in self.samples) + 1) / (len(self.samples) + 2)


def solver_move(state: Reloaded, nodes: int, deadline: float) -> str | None:
    """The first move of the solver's winning line from ``state`` (every card in it known), or None
    when it finds none within ``nodes`` positions or the deadline (CPU time of this thread)."""
    from patience.solve.klondike import abstract_to_moves, core_position

    core = core_position(state)
    found = core.solve(seconds=max(0.001, deadline - time.thread_time()), nodes=nodes, memory_mb=16.0)
    if found["status"] != "won":
        return None
    line = [*core.initial_auto, *found["line"]]
    return str(abstract_to_moves(state, line[:1])[0]) if line else None


def hidden_decision(state: Reloaded, *, deadline: float | None = None, samples: int = SAMPLES
                    ) -> HiddenDecision | None:
    """The decision at ``state``, or None where the hidden cards decide nothing or it cannot be told:
    nothing is unseen, the real deal is not won within its budget, fewer than :data:`MIN_SOLVED`
    sampled deals are, every sampled deal's solver plays the real deal's move (the table shows it),
    or the deadline (CPU time of this thread) passed."""
    deadline = time.thread_time() + 5.0 if deadline is None else deadline
    if state.is_won() or not unseen(state)[0]:
        return None
    real = solver_move(state, REAL_NODES, deadline)
    if real is None:
        return None
    moves = []
    for world in visible_deals(state, samples):
        if time.thread_time() > deadline:
            return None
        move = solver_move(world, SAMPLE_NODES, deadline)
        if move is not None:
            moves.append(move)
    if len(moves) < MIN_SOLVED or all(m == real for m in moves):
        return None
    return HiddenDecision(real, tuple(moves))
