"""The search every solver shares: depth-first search with a bounded transposition table.

A game's solver describes its positions as a :class:`Problem`: a compact mutable position
whose ``moves()`` are already pruned and ordered, whose ``play()`` also makes the provably
safe moves that follow (so they never branch), and whose ``key()`` is the same for positions
that play alike (symmetric piles folded together). :func:`depth_first` walks it.

The transposition table only holds positions that are on the current line or were searched
to the end without a win, so finding a key there means "nothing new below". A problem may
also name, for a position, the keys of stronger positions (``stronger_keys()``: positions
with every move this one has, and more); when one of those is in the table, so is all this
position could reach, and it is skipped too. When it grows
past its bound it is emptied (the current line's keys are put back, so cycles are still
caught): the search stays complete and its memory bounded, it may only repeat some work.
"""

from __future__ import annotations

import enum
import gc
import sys
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Budget", "Problem", "SearchOutcome", "Status", "depth_first"]


class Status(enum.StrEnum):
    """What a solver found out about a position."""

    WON = "won"  # a winning line was found
    UNWINNABLE = "unwinnable"  # every line was searched: none wins
    UNKNOWN = "unknown"  # the budget ran out first


@dataclass(frozen=True)
class Budget:
    """How much a search may spend: seconds, positions (nodes), transposition-table memory.

    The seconds are CPU time of the thread that searches (:func:`time.thread_time`, and
    ``CLOCK_THREAD_CPUTIME_ID`` in the compiled cores), not wall-clock time: a search gets as many
    positions on a busy machine as on a quiet one, so whether a deal comes out won, unwinnable or
    unknown does not depend on what else runs. ``None`` means no limit. The memory bound is not a
    stop condition: the table is emptied and refilled when it reaches it.
    """

    seconds: float | None = 10.0
    nodes: int | None = None
    memory_mb: float = 512.0


class Problem(Protocol):
    """A game position as a solver sees it (see the module docstring)."""

    def key(self) -> Hashable: ...

    def is_won(self) -> bool: ...

    def moves(self) -> Sequence[Any]: ...

    def play(self, move: Any) -> None: ...

    def undo(self) -> None: ...


@dataclass
class SearchOutcome:
    """The raw result of :func:`depth_first`: the abstract moves of a win, and what it cost."""

    status: Status
    line: list[Any] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0
    table_peak: int = 0  # most positions held in the transposition table at once
    table_bytes: int = 0  # estimated memory of the table at its largest
    table_resets: int = 0
    reason: str = ""
    # positions searched to the end without a win: valid "known lost" input for another
    # search of the same problem when the problem has no cycles (every move is one-way)
    lost: set[Hashable] | None = None


_CHECK_EVERY = 1024


def _entry_bytes(key: Hashable) -> int:
    """Rough memory one table entry costs: the key object(s) plus the hash-set slot."""
    size = sys.getsizeof(key)
    if isinstance(key, tuple):
        size += sum(sys.getsizeof(part) for part in key)
    return size + 2 * 8 * 2  # a set keeps a hash and a pointer per slot, at most half full


def depth_first(problem: Problem, budget: Budget | None = None, lost: set[Hashable] | None = None) -> SearchOutcome:
    """Search ``problem`` depth first for a won position; see the module docstring.

    ``lost`` may give positions already known to be lost (from an earlier search of the same
    problem with other move orders, see :attr:`SearchOutcome.lost`); the search adds to it.
    """
    budget = budget or Budget()
    collecting = gc.isenabled()
    gc.disable()  # the table holds millions of objects that are never garbage: skip scanning them
    try:
        return _depth_first(problem, budget, lost)
    finally:
        if collecting:
            gc.enable()


def _depth_first(problem: Problem, budget: Budget, lost: set[Hashable] | None) -> SearchOutcome:
    start = time.thread_time()
    deadline = None if budget.seconds is None else start + budget.seconds
    max_nodes = budget.nodes
    stronger = getattr(problem, "stronger_keys", None)
    if problem.is_won():
        return SearchOutcome(Status.WON, [], 0, time.thread_time() - start)
    root = problem.key()
    per_entry = _entry_bytes(root)
    table_cap = max(1024, int(budget.memory_mb * 1024 * 1024 / per_entry))
    table: set[Hashable] = lost if lost is not None else set()
    if root in table:
        return SearchOutcome(Status.UNWINNABLE, [], 0, time.thread_time() - start, len(table),
                             len(table) * per_entry, 0, "every line searched", table)
    table.add(root)
    path_keys: list[Hashable] = [root]
    line: list[Any] = []
    frames = [iter(problem.moves())]
    nodes = 0
    peak = 1
    resets = 0
    status = Status.UNWINNABLE
    reason = "every line searched"
    while frames:
        move = next(frames[-1], None)
        if move is None:
            frames.pop()
            path_keys.pop()
            if line:
                line.pop()
                problem.undo()
            continue
        problem.play(move)
        nodes += 1
        if problem.is_won():
            line.append(move)
            status, reason = Status.WON, "a winning line"
            break
        key = problem.key()
        if key in table or (stronger is not None and any(k in table for k in stronger())):
            problem.undo()
        else:
            if len(table) >= table_cap:
                peak = max(peak, len(table))
                table.clear()
                table.update(path_keys)
                resets += 1
            table.add(key)
            path_keys.append(key)
            line.append(move)
            frames.append(iter(problem.moves()))
        if nodes % _CHECK_EVERY == 0 and deadline is not None and time.thread_time() > deadline:
            status, reason = Status.UNKNOWN, "time"
            break
        if max_nodes is not None and nodes >= max_nodes:
            status, reason = Status.UNKNOWN, "nodes"
            break
    peak = max(peak, len(table))
    if status is Status.UNKNOWN:
        # what is left in the table besides the current line was searched to the end
        table.difference_update(path_keys)
    return SearchOutcome(
        status,
        line if status is Status.WON else [],
        nodes,
        time.thread_time() - start,
        peak,
        peak * per_entry,
        resets,
        reason,
        table if status is not Status.WON else None,
    )
