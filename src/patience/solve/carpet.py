"""Solving Teppich: one playout for the base game, a real search for the waste-pile variant.

Without a waste the order of play does not matter (RULES.md §1): a card that becomes playable
stays playable until it is played, and after k moves the cards seen so far are the dealt
carpet's plus the first k of the stock, whatever was played (the carpets may differ). So any
playout that plays while it can decides the deal, and a stuck playout proves it unwinnable.

With a waste it matters which card is on the waste when a gap opens, so the waste variant is
searched depth first. The carpet's places are folded away: which place a card lies in never
changes what can be played, so a position's key is the foundations, the stock, the waste and
the passes used (the carpet holds the other cards). :class:`CarpetWasteProblem` is that
search in Python on :func:`patience.solve.search.depth_first`, the reference; the compiled
core ``patience.solve._carpet`` (``_core/carpet.cpp``, built by ``pip install``) runs the very
same search, move for move, on a position packed into an exact 128-bit key, some hundred
times faster, and :func:`solve_carpet` uses it. A test checks that both list the same moves
and search the same number of positions.

:func:`exact_rate` gives the exact share of won base-game deals of a carpet size by counting,
not sampling (see there).
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction
from typing import Any

import patience.solve._carpet as _carpet  # type: ignore[import-untyped]  # compiled core: no stubs
from patience.games.base import DRAW, REDEAL, Move
from patience.games.carpet import Carpet
from patience.solve.search import Budget, SearchOutcome, Status

__all__ = ["CarpetWasteProblem", "exact_rate", "playout", "solve_carpet"]


def playout(state: Carpet) -> tuple[bool, list[Move]]:
    """Play the base game from ``state`` (a copy) while a card can move: (won, moves)."""
    s = state.copy()
    moves: list[Move] = []
    while True:
        legal = s.legal_moves()
        if not legal:
            return s.is_won(), moves
        s._apply(legal[0])
        moves.append(legal[0])


class CarpetWasteProblem:
    """The waste-pile variant as a search problem, in numbers (see the module docstring).

    Abstract moves: ``("c", card)`` a carpet card to its foundation (the gap takes the
    waste's top, or the stock's), ``("w",)`` the waste's top to its foundation, ``("d",)``
    turn a card, ``("r",)`` redeal. With the gap filled from the waste first, a carpet card
    is not played while the waste is empty and the stock is not: turning a card first and
    then playing it leads to the very same position, so that order is enough.

    Once no card is left to turn and no pass is left, the waste's top card goes to its
    foundation at once when it fits, without branching. Proof sketch: let X be the position
    and Y the same with that card played. Whatever X does next, Y can follow so that Y's
    waste stays a bottom part of X's, every card of X's carpet is in Y's carpet or on Y's
    foundations, and Y's foundations hold all of X's: Y plays the same card when it still
    has it (from the waste, or from its carpet where X took it from the waste), and does
    nothing for a card it played already. When X lays its waste's top card into a gap, Y
    has that card too (it is then Y's top card as well, and Y plays the same carpet card), or
    has it in its carpet or on its foundations: for if both wastes are alike, both have had
    cards all along, so every gap either made was filled at once, both carpets hold as many
    cards, and so do both foundations, so the carpet card X plays cannot be one Y played
    already. So when X wins, so does Y (``test_carpet_core`` also checks it by brute force).
    """

    def __init__(self, state: Carpet) -> None:
        self.height = list(state.height)
        self.in_carpet = bytearray(52)
        for card in state.carpet:
            if card >= 0:
                self.in_carpet[card] = 1
        self.stock = [int(c) for c in state.stock]
        self.waste = [int(c) for c in state.waste]
        self.passes = state.passes_used
        self.max_passes = state.options.waste_passes
        self.waste_first = state.options.fill_from == "waste"
        self._undo: list[tuple[Any, ...]] = []

    def key(self) -> Hashable:
        return (bytes(self.height), bytes(self.stock), bytes(self.waste), self.passes)

    def is_won(self) -> bool:
        return self.height == [13, 13, 13, 13]

    def moves(self) -> list[tuple[Any, ...]]:
        height, carpet = self.height, self.in_carpet
        moves: list[tuple[Any, ...]] = []
        if self.waste:
            top = self.waste[-1]
            if top % 13 == height[top // 13]:
                if not self.stock and self.passes >= self.max_passes:
                    return [("w",)]  # safe: see the class docstring
                moves.append(("w",))
        if self.waste or not self.stock or not self.waste_first:
            for suit in range(4):
                h = height[suit]
                if h < 13 and carpet[suit * 13 + h]:
                    moves.append(("c", suit * 13 + h))
        if self.stock:
            moves.append(("d",))
        elif self.waste and self.passes < self.max_passes:
            moves.append(("r",))
        return moves

    def play(self, move: tuple[Any, ...]) -> None:
        kind = move[0]
        if kind == "c":
            card = move[1]
            self.in_carpet[card] = 0
            self.height[card // 13] += 1
            if self.waste and (self.waste_first or not self.stock):
                fill, source = self.waste.pop(), 1
            elif self.stock:
                fill, source = self.stock.pop(), 2
            else:
                fill, source = -1, 0
            if fill >= 0:
                self.in_carpet[fill] = 1
            self._undo.append((kind, card, fill, source))
        elif kind == "w":
            card = self.waste.pop()
            self.height[card // 13] += 1
            self._undo.append((kind, card))
        elif kind == "d":
            self.waste.append(self.stock.pop())
            self._undo.append((kind,))
        else:
            self.waste.reverse()
            self.stock, self.waste = self.waste, self.stock
            self.passes += 1
            self._undo.append((kind,))

    def undo(self) -> None:
        entry = self._undo.pop()
        kind = entry[0]
        if kind == "c":
            _, card, fill, source = entry
            if fill >= 0:
                self.in_carpet[fill] = 0
                (self.waste if source == 1 else self.stock).append(fill)
            self.in_carpet[card] = 1
            self.height[card // 13] -= 1
        elif kind == "w":
            card = entry[1]
            self.waste.append(card)
            self.height[card // 13] -= 1
        elif kind == "d":
            self.stock.append(self.waste.pop())
        else:
            self.stock.reverse()
            self.stock, self.waste = self.waste, self.stock
            self.passes -= 1


def _engine_moves(state: Carpet, line: list[tuple[Any, ...]]) -> list[Move]:
    """The engine moves of an abstract line, played from (a copy of) ``state``."""
    s = state.copy()
    out: list[Move] = []
    for move in line:
        kind = move[0]
        if kind == "c":
            engine_move = Move(f"c{s.where[move[1]] + 1}", "f")
        elif kind == "w":
            engine_move = Move("w", "f")
        else:
            engine_move = DRAW if kind == "d" else REDEAL
        s._apply(engine_move)
        out.append(engine_move)
    return out


def solve_carpet(state: Carpet, budget: Budget) -> tuple[SearchOutcome, list[Move]]:
    """Decide a Teppich position; the moves are the whole winning line when it is won."""
    if not state.options.waste:
        won, moves = playout(state)
        status = Status.WON if won else Status.UNWINNABLE
        reason = "a winning line" if won else "stuck, and the order of play does not matter in this game"
        return SearchOutcome(status, [], len(moves), 0.0, 0, 0, 0, reason), moves if won else []
    outcome = search_waste(state, budget, probes=True)
    return outcome, _engine_moves(state, outcome.line) if outcome.status is Status.WON else []


_STATUS = (Status.WON, Status.UNWINNABLE, Status.UNKNOWN)


def core_arguments(state: Carpet) -> tuple[list[int], list[int], list[int], list[int], int, int, bool]:
    """A waste-variant position as the compiled core takes it."""
    return (list(state.carpet), [int(c) for c in state.stock], [int(c) for c in state.waste], list(state.height),
            state.passes_used, state.options.waste_passes, state.options.fill_from == "waste")


def search_waste(state: Carpet, budget: Budget, *, probes: bool = False) -> SearchOutcome:
    """The waste variant's search (:class:`CarpetWasteProblem`'s), run by the compiled core.

    With ``probes``, after two million positions the core tries a few other move orders briefly
    before it goes on with its own, all sharing one table (no line comes back to a position, so
    what one search found lost stays lost): a win the reference order meets late is often found
    at once in another order."""
    seconds = -1.0 if budget.seconds is None else budget.seconds
    nodes = -1 if budget.nodes is None else budget.nodes
    status, reason, line, searched, peak, table_bytes, resets = _carpet.solve(
        *core_arguments(state), seconds, nodes, float(budget.memory_mb), probes)
    abstract = [(kind,) if card < 0 else (kind, card) for kind, card in line]
    return SearchOutcome(_STATUS[status], abstract, searched, 0.0, peak, table_bytes, resets, reason)


def exact_rate(rows: int, cols: int) -> Fraction:
    """The exact share of won base-game deals of a ``rows`` × ``cols`` carpet.

    The 48 cards lie in a uniformly random order, the carpet being its first ``rows*cols``.
    A card can be played once it and the lower cards of its suit are visible, so each suit
    is held up by its lowest card still in the stock. Playing stops after ``m`` moves exactly
    when fewer than ``m + 1`` cards lie below those lowest stock cards, counting the stock
    from its ``m``-th card on. So the outcome depends only on, for each suit, how many of
    its cards lie in the stock from place ``m`` on and the lowest of them; this counts the
    stock orders by those numbers from the bottom of the stock up, with exact integers.

    >>> exact_rate(6, 8)
    Fraction(1, 1)
    """
    stock = 48 - rows * cols
    if stock < 0:
        raise ValueError("a carpet has at most 48 places in the base game")
    return _exact_rate_for_stock(stock)


def _exact_rate_for_stock(stock: int) -> Fraction:
    """:func:`exact_rate` for a stock of ``stock`` cards (the carpet holds the other 48 - stock)."""
    # a suit's state: (cards of the suit in the stock from here on, lowest rank among them);
    # ranks 2..13, and 14 stands for "none in the stock". Suits are kept sorted (symmetry).
    none = (0, 14)
    steps: dict[tuple[int, int], list[tuple[tuple[int, int], int]]] = {}
    for j in range(13):
        for low in range(2, 15):
            # a new card of the suit, lower than its lowest: one way per rank; or any unused
            # rank above the lowest, which leaves the lowest as it is
            out = [((j + 1, rank), 1) for rank in range(2, min(low, 14))]
            above = 13 - low - (j - 1) if j else 0
            if above > 0:
                out.append(((j + 1, low), above))
            steps[(j, low)] = out
    layer: dict[tuple[tuple[int, int], ...], int] = {(none, none, none, none): 1}
    for m in range(stock - 1, -1, -1):
        nxt: dict[tuple[tuple[int, int], ...], int] = {}
        get = nxt.get
        for suits, ways in layer.items():
            free_others = sum(lo for _, lo in suits) - 8
            for i in range(4):
                suit = suits[i]
                if i and suits[i - 1] == suit:
                    continue  # an equal suit was counted with its multiplicity
                weight = ways * suits.count(suit)
                rest = free_others - suit[1]
                for new, count in steps[suit]:
                    # cards playable below every suit's lowest stock card, from place m on
                    if rest + new[1] < m + 1:
                        continue
                    key = tuple(sorted((*suits[:i], new, *suits[i + 1:])))
                    nxt[key] = get(key, 0) + weight * count
        layer = nxt
    won = sum(layer.values())
    total = 1
    for k in range(stock):
        total *= 48 - k
    return Fraction(won, total)
