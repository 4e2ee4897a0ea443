"""Solving Der Fächer: depth-first search with the moves that cannot hurt played at once.

Cards are renumbered ``suit * 13 + order`` with order 0 for the 2 up to 12 for the Ace, so
a card fits on a reserve top ``t`` exactly when ``t == card + 1`` within the suit, and a
suit's foundation needs the card of order ``height``.

What the search leaves out, and why that loses nothing:

- A card that fits its foundation goes there at once, from anywhere. Cards never leave a
  foundation, and nothing could be put on that card elsewhere (the card below it in its
  suit is on the foundation already), so keeping it back never helps.
- The reserve piles are interchangeable (the key sorts them) and so are the empty ones:
  a card goes to the first empty pile only. The fan's places are interchangeable too.
- A reserve pile's top card never goes to an empty pile for its own sake: the card it
  uncovers can only take that same card back, or move itself if it is the pile's bottom.
  The one thing splitting a pile achieves is to carry the whole pile onto the card one
  above its bottom card, which frees the pile: that is one move here ("relocate"), made of
  single moves through the empty piles (up to ``2**empty`` cards, as with towers).
- A fan card is always at hand, so it goes to a reserve pile only to take a card there at
  once, or to take another fan card that then does. Take a winning line in which the fan
  card c goes to pile p, and the first later move that puts a card on c or takes c off. The
  moves in between leave pile p alone (c lies on its top) and do not need c where it is, so
  they can be played first, with c still in the fan (p then shows the empty place or the card
  one above c that c went onto, which they did not use either), and c goes to p just before
  that move. If the move takes c off (to the foundation, onto another card one above it, to
  an empty pile), c could go there from the fan instead. So the move puts the card one below
  c on it, and that card is a talon card; or a reserve card, which is its pile's bottom
  (piles build down in suit and c was not in one), so the move carries that pile onto c
  (single moves through the empty piles, as above) and frees it; or the fan card one below
  c, to which the same holds in turn. So a fan move is a chain of fan cards, each one below
  the last, that ends in a talon card or a pile one below the chain's last card, all at
  once. (Taking only chains of one card called won deals lost: J♣ and 10♣ from the fan onto
  a reserve Q♣, then the waste's 9♣ onto them.) A chain put on an empty pile only to carry
  a pile onto it is left out: the pile with the chain beneath it can do nothing that the
  pile alone with the chain's cards kept in the fan cannot (where the pile is carried onto
  the card one above the chain, the chain goes there from the fan first; where the chain's
  cards come uncovered, they are played from the fan instead; and the empty piles are as
  many), and that is the position before the move, from which each move after it has its
  counterpart (a chain one longer where that pile is carried onto a card of the fan).
- Turning the talon does not branch: a move names the talon card it plays and turns the
  talon as far as needed, with at most one redeal (a card reached through a second redeal
  is reached through the first with a pass to spare).

Every move is one way (cards only leave the talon, the fan and the waste, and piles only
merge), so positions never repeat along a line: a position searched to the end is lost for
good, which lets searches with different move orders share what they learnt
(:func:`solve_faecher` tries four orders briefly, then the first without limit).

:class:`FanProblem` on :func:`patience.solve.search.depth_first` is the reference; the compiled
core ``patience.solve._faecher`` (``_core/faecher.cpp``, built by ``pip install``) runs the very
same portfolio, position for position, on an exact 128-bit key, some hundred times faster, and
:func:`solve_faecher` uses it when it is there. ``tests/test_faecher_core.py`` checks that both list
the same moves and search the same number of positions.
"""

from __future__ import annotations

from collections.abc import Hashable
from operator import itemgetter
from typing import Any

from patience.games.base import DRAW, REDEAL, Move
from patience.games.faecher import FAN, RESERVES, Faecher, fan_order
from patience.solve.search import Budget, SearchOutcome, Status, depth_first

__all__ = ["FanProblem", "core_arguments", "search_faecher", "solve_faecher"]

_NONE = -1
_F = -1  # a move's target: the foundation
_FIRST = itemgetter(0)
_REDEAL_COST = 100  # a card reached after the redeal sorts after every card of this pass

# The kinds of abstract moves:
#   ("talon", draws, redeal, draws_after, target)   turn the talon, play the waste's top
#   ("fan", places, target, then)                    fan cards to a pile, each onto the last, then `then`
#   ("relocate", pile, onto)                         carry a whole pile onto another
# where target is a reserve index or _F, and `then` is ("talon", d, redeal, d2) or ("relocate", q).
_TO_FOUNDATION, _RELOCATE, _ONTO, _FAN_BASE, _TO_EMPTY = range(5)


def _inner(card: int) -> int:
    return card // 13 * 13 + fan_order(card)


class FanProblem:
    """A Der Fächer position in the solver's numbering (see the module docstring).

    ``order`` chooses the move order: ``"near"`` plays the nearest talon cards first (like
    going through the talon by hand), ``"sparing"`` too but fills empty piles last, ``"fan"``
    tries the fan's cards first, ``"kind"`` tries the kinds of moves in turn.
    """

    def __init__(self, state: Faecher, order: str = "near", log: bool = False) -> None:
        self.fan = [_inner(c) if c != _NONE else _NONE for c in state.fan]
        self.res = [[_inner(c) for c in pile] for pile in state.reserves]
        self.stock = [_inner(c) for c in state.stock]
        self.waste = [_inner(c) for c in state.waste]
        self.height = list(state.height)
        self.passes = state.passes_used
        self.max_passes = state.options.passes
        self.order = order
        self.log: list[Move] | None = [] if log else None
        self._undo: list[Any] = []
        self._settle()

    # -- the search interface ----------------------------------------------------------

    def key(self) -> Hashable:
        return (
            bytes(sorted(c for c in self.fan if c != _NONE)),
            b"\xff".join(sorted(bytes(p) for p in self.res)),
            bytes(self.stock),
            bytes(self.waste),
            self.passes,
        )

    def is_won(self) -> bool:
        return self.height == [13, 13, 13, 13]

    def moves(self) -> list[tuple[Any, ...]]:
        res = self.res
        tops = [p[-1] if p else _NONE for p in res]
        empties = sum(1 for p in res if not p)
        first_empty = next((k for k in range(4) if not res[k]), _NONE)
        capacity = 1 << empties
        height = self.height
        items: list[tuple[int, tuple[Any, ...]]] = []
        add = items.append

        order = self.order

        def rank(kind: int, dist: int, empty: bool = False, fan: bool = False) -> int:
            if order == "kind":
                return kind * 1000 + dist
            base = dist * 8 + kind
            if order == "sparing":
                return base + (100_000 if empty else 0)
            if order == "fan":
                return base + (0 if fan else 100_000)
            return base

        # whole piles carried onto the card one above their bottom card
        for q in range(4):
            pile = res[q]
            if pile and pile[0] % 13 != 12:
                up = pile[0] + 1
                for k in range(4):
                    if tops[k] == up and len(pile) <= capacity:
                        add((rank(_RELOCATE, 0), ("relocate", q, k)))
        # talon cards: the waste's top, each card the talon turns up, then after a redeal
        reach: list[tuple[int, int, bool, int]] = []  # (card, draws, redeal, draws after)
        if self.waste:
            reach.append((self.waste[-1], 0, False, 0))
        stock = self.stock
        n = len(stock)
        for d in range(1, n + 1):
            reach.append((stock[-d], d, False, 0))
        if self.passes < self.max_passes:
            cycle = self.waste + stock[::-1]
            for d2 in range(1, len(cycle) + 1):
                reach.append((cycle[d2 - 1], n, True, d2))
        where: dict[int, tuple[int, bool, int]] = {}
        for card, d, redeal, d2 in reach:
            dist = d2 + _REDEAL_COST if redeal else d
            if card not in where:
                where[card] = (d, redeal, d2)
            if card % 13 == height[card // 13]:
                add((rank(_TO_FOUNDATION, dist), ("talon", d, redeal, d2, _F)))
                continue
            if card % 13 != 12:
                up = card + 1
                for k in range(4):
                    if tops[k] == up:
                        add((rank(_ONTO, dist), ("talon", d, redeal, d2, k)))
            if first_empty != _NONE:
                add((rank(_TO_EMPTY, dist, empty=True), ("talon", d, redeal, d2, first_empty)))
        # fan cards as a base for a card one below, taken at once: a chain of fan cards, each
        # one below the last, then a talon card or a pile one below the chain's last card
        in_fan = {card: i for i, card in enumerate(self.fan) if card != _NONE}
        for i, card in enumerate(self.fan):
            if card == _NONE or card % 13 == 0:
                continue
            fit = _NONE
            if card % 13 != 12:
                for k in range(4):
                    if tops[k] == card + 1:
                        fit = k
            for slot in (fit, first_empty):
                if slot == _NONE:
                    continue
                places: tuple[int, ...] = (i,)
                below = card - 1
                while True:
                    for c2, d, redeal, d2 in reach:
                        if c2 == below:
                            dist = d2 + _REDEAL_COST if redeal else d
                            add((rank(_FAN_BASE, dist, slot != fit, True),
                                 ("fan", places, slot, ("talon", d, redeal, d2))))
                    if slot == fit:
                        for q in range(4):
                            pile = res[q]
                            if q != fit and pile and pile[0] == below and len(pile) <= capacity:
                                add((rank(_RELOCATE, 0, False, True), ("fan", places, slot, ("relocate", q))))
                    if below % 13 == 0 or below not in in_fan:
                        break
                    places += (in_fan[below],)
                    below -= 1
        items.sort(key=_FIRST)
        return [m for _, m in items]

    def play(self, move: tuple[Any, ...]) -> None:
        self._undo.append((self.fan[:], [p[:] for p in self.res], self.stock[:], self.waste[:],
                           self.height[:], self.passes))
        kind = move[0]
        if kind == "talon":
            self._talon(move[1], move[2], move[3], move[4])
        elif kind == "fan":
            _, places, target, then = move
            for i in places:
                self.res[target].append(self.fan[i])
                self.fan[i] = _NONE
                if self.log is not None:
                    self.log.append(Move(FAN[i], RESERVES[target]))
            if then[0] == "talon":
                self._talon(then[1], then[2], then[3], target)
            else:
                q = then[1]
                self._carry(q, target, len(self.res[q]), [x for x in range(4) if not self.res[x]])
        else:
            _, q, k = move
            self._carry(q, k, len(self.res[q]), [x for x in range(4) if not self.res[x]])
        self._settle()

    def undo(self) -> None:
        self.fan, self.res, self.stock, self.waste, self.height, self.passes = self._undo.pop()

    # -- helpers -----------------------------------------------------------------------

    def _talon(self, d: int, redeal: bool, d2: int, target: int) -> None:
        """Turn the talon ``d`` times (then redeal and turn ``d2`` times) and play the waste's top."""
        stock, waste = self.stock, self.waste
        for _ in range(d):
            waste.append(stock.pop())
        log = self.log
        if log is not None:
            log.extend([DRAW] * d)
        if redeal:
            waste.reverse()
            self.stock, self.waste = waste, stock
            stock, waste = self.stock, self.waste
            self.passes += 1
            for _ in range(d2):
                waste.append(stock.pop())
            if log is not None:
                log.append(REDEAL)
                log.extend([DRAW] * d2)
        card = waste.pop()
        if target == _F:
            self.height[card // 13] += 1
        else:
            self.res[target].append(card)
        if log is not None:
            log.append(Move("w", "f" if target == _F else RESERVES[target]))

    def _carry(self, src: int, dst: int, n: int, free: list[int]) -> None:
        """Move the top ``n`` cards of reserve ``src`` onto ``dst`` through the ``free`` piles."""
        if n == 1:
            self.res[dst].append(self.res[src].pop())
            if self.log is not None:
                self.log.append(Move(RESERVES[src], RESERVES[dst]))
            return
        spare, rest = free[0], free[1:]
        half = n // 2
        self._carry(src, spare, half, rest)
        self._carry(src, dst, n - half, rest)
        self._carry(spare, dst, half, rest)

    def _settle(self) -> None:
        """Play every card that fits its foundation, wherever it lies (see the docstring)."""
        height, fan, res, waste, log = self.height, self.fan, self.res, self.waste, self.log
        changed = True
        while changed:
            changed = False
            for suit in range(4):
                while height[suit] < 13:
                    need = suit * 13 + height[suit]
                    if need in fan:
                        i = fan.index(need)
                        fan[i] = _NONE
                        src = FAN[i]
                    elif waste and waste[-1] == need:
                        waste.pop()
                        src = "w"
                    else:
                        for k in range(4):
                            if res[k] and res[k][-1] == need:
                                res[k].pop()
                                src = RESERVES[k]
                                break
                        else:
                            break
                    if log is not None:
                        log.append(Move(src, "f"))
                    height[suit] += 1
                    changed = True


# (order, positions) of the searches solve_faecher runs in turn; the last one has no limit
_PORTFOLIO = (("near", 20_000), ("sparing", 20_000), ("fan", 20_000), ("kind", 60_000), ("near", None))


def solve_faecher(state: Faecher, budget: Budget, *, core: bool = True) -> tuple[SearchOutcome, list[Move]]:
    """Decide a Der Fächer position; the moves are the whole winning line when it is won.

    A few short searches with different move orders find most wins quickly; what they
    searched to the end is kept, and the last search goes on until the budget is spent. The
    compiled core runs them when it is there (and ``core`` is true), else :func:`search_faecher`.
    """
    outcome = None
    if core:
        try:
            import patience.solve._faecher as compiled  # type: ignore[import-untyped]  # compiled core: no stubs
        except ImportError:  # a source tree without the built core: the Python search decides alike
            compiled = None
        if compiled is not None:
            outcome = _search_core(compiled, state, budget)
    if outcome is None:
        outcome = search_faecher(state, budget)
    if outcome.status is not Status.WON:
        return outcome, []
    replay = FanProblem(state, log=True)
    for move in outcome.line:
        replay.play(move)
    assert replay.log is not None and replay.is_won()
    return outcome, replay.log


_STATUS = (Status.WON, Status.UNWINNABLE, Status.UNKNOWN)


def core_arguments(state: Faecher) -> tuple[list[int], list[list[int]], list[int], list[int], list[int], int, int]:
    """A position as the compiled core takes it, in the solver's numbering (not yet settled)."""
    return ([_inner(c) if c != _NONE else _NONE for c in state.fan], [[_inner(c) for c in p] for p in state.reserves],
            [_inner(c) for c in state.stock], [_inner(c) for c in state.waste], list(state.height),
            state.passes_used, state.options.passes)


def _search_core(core: Any, state: Faecher, budget: Budget) -> SearchOutcome:
    seconds = -1.0 if budget.seconds is None else budget.seconds
    nodes = -1 if budget.nodes is None else budget.nodes
    portfolio = [(order, -1 if cap is None else cap) for order, cap in _PORTFOLIO]
    status, reason, line, searched, spent, peak, table_bytes, resets = core.solve(
        *core_arguments(state), portfolio, seconds, nodes, float(budget.memory_mb))
    return SearchOutcome(_STATUS[status], list(line), searched, spent, peak, table_bytes, resets, reason)


def search_faecher(state: Faecher, budget: Budget) -> SearchOutcome:
    """The portfolio of searches in Python (the reference of the compiled core); the line is abstract."""
    lost: set[Hashable] = set()
    total_nodes = 0
    spent = 0.0
    outcome: SearchOutcome | None = None
    for order, cap in _PORTFOLIO:
        left_s = None if budget.seconds is None else max(0.0, budget.seconds - spent)
        left_n = None if budget.nodes is None else max(0, budget.nodes - total_nodes)
        nodes = left_n if cap is None else (cap if left_n is None else min(cap, left_n))
        outcome = depth_first(FanProblem(state, order), Budget(left_s, nodes, budget.memory_mb), lost)
        total_nodes += outcome.nodes
        spent += outcome.seconds
        if outcome.status is not Status.UNKNOWN or outcome.reason != "nodes" or nodes == left_n:
            break
        lost = outcome.lost if outcome.lost is not None else set()
    assert outcome is not None
    outcome.nodes, outcome.seconds = total_nodes, spent
    outcome.lost = None
    return outcome
