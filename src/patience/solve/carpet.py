"""Solving Teppich: one playout for the base game, a real search for the waste-pile variant.

Without a waste the order of play does not matter (RULES.md §1): after k moves the visible
cards are the carpet's plus the first k of the stock, whatever was played. So any playout
that plays while it can decides the deal, and a stuck playout proves it unwinnable.

With a waste it matters which card is on the waste when a gap opens, so the waste variant is
searched depth first (:mod:`patience.solve.search`). The carpet's places are folded away:
which place a card lies in never changes what can be played, so a position's key is the
foundations, the stock, the waste and the passes used (the carpet holds the other cards).

:func:`exact_rate` gives the exact share of won base-game deals of a carpet size by counting,
not sampling (see there).
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction

from patience.games.base import Move
from patience.games.carpet import Carpet
from patience.solve.search import Budget, SearchOutcome, Status, depth_first

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
    """The waste-pile variant as a search problem on the engine's own state."""

    def __init__(self, state: Carpet) -> None:
        self.state = state.copy()
        self.log: list[Move] = []

    def key(self) -> Hashable:
        s = self.state
        return (bytes(s.height), bytes(s.stock), bytes(s.waste), s.passes_used)

    def is_won(self) -> bool:
        return self.state.is_won()

    def moves(self) -> list[Move]:
        # the engine lists foundation moves first, turning the stock last: the order we want
        return self.state.legal_moves()

    def play(self, move: Move) -> None:
        self.state._apply(move)
        self.log.append(move)

    def undo(self) -> None:
        self.state.pop()
        self.log.pop()


def solve_carpet(state: Carpet, budget: Budget) -> tuple[SearchOutcome, list[Move]]:
    """Decide a Teppich position; the moves are the whole winning line when it is won."""
    if not state.options.waste:
        won, moves = playout(state)
        status = Status.WON if won else Status.UNWINNABLE
        reason = "a winning line" if won else "stuck, and the order of play does not matter in this game"
        return SearchOutcome(status, [], len(moves), 0.0, 0, 0, 0, reason), moves if won else []
    problem = CarpetWasteProblem(state)
    outcome = depth_first(problem, budget)
    return outcome, list(problem.log) if outcome.status is Status.WON else []


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
