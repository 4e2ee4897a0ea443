"""Pile behaviour the three games share, written once.

- Foundations by suit, built in a rank sequence: A..K (Carpet, Klondike) or 2..K, A (Der
  Fächer). A foundation is stored as its height; the next card follows from the sequence.
- A stock turned one card at a time onto a waste, with a number of passes (Carpet's waste
  variant: 1; Der Fächer: 2; Klondike: unlimited).
"""

from __future__ import annotations

from typing import ClassVar

from patience.cards import CARDS, Card, Suit
from patience.errors import BadInputError
from patience.games.base import DRAW, REDEAL, Move, PileCards, State

__all__ = ["FOUNDATION_NAMES", "SUIT_OF_FOUNDATION", "FoundationsStockWaste"]

FOUNDATION_NAMES = ("fs", "fh", "fd", "fc")
SUIT_OF_FOUNDATION = {name: suit for suit, name in enumerate(FOUNDATION_NAMES)}

UNLIMITED = -1


class FoundationsStockWaste(State):
    """A state with four suit foundations and a stock/waste; subclasses add their own piles."""

    RANK_SEQUENCE: ClassVar[tuple[int, ...]] = tuple(range(1, 14))
    __slots__ = ("height", "passes_used", "stock", "waste")

    height: list[int]  # cards on each suit's foundation
    stock: list[Card]  # face down, top is the last
    waste: list[Card]  # face up, top is the last
    passes_used: int  # passes through the stock begun so far (1 at the start)

    def _init_common(self, options: object, stock: list[Card], waste: list[Card], heights: list[int],
                     passes_used: int) -> None:
        """Set what every game of this family has: options, an empty move stack, stock, waste,
        foundation heights and passes begun (lists are copied)."""
        self.options = options
        self._history = []
        self.stock = list(stock)
        self.waste = list(waste)
        self.height = list(heights)
        self.passes_used = passes_used

    def _max_passes(self) -> int:
        """How many passes through the stock the game allows (UNLIMITED for no limit)."""
        return UNLIMITED

    # -- foundations -----------------------------------------------------------------------

    def needed(self, suit: int) -> Card | None:
        """The card that goes next on ``suit``'s foundation (None when it is complete)."""
        h = self.height[suit]
        return CARDS[suit * 13 + self.RANK_SEQUENCE[h] - 1] if h < 13 else None

    def fits_foundation(self, card: Card) -> bool:
        return self.needed(card // 13) == card

    def foundation_reason(self, card: Card, dst: str) -> str | None:
        """Why ``card`` may not go to foundation ``dst`` (``f`` or ``fs``..``fc``), or None."""
        suit = card // 13
        if dst != "f" and SUIT_OF_FOUNDATION.get(dst) != suit:
            return f"{card.display} goes only on the {Suit(suit).symbol} foundation"
        need = self.needed(suit)
        if need == card:
            return None
        if need is None:
            return f"the {Suit(suit).symbol} foundation is complete"
        if self.height[suit] == 0:
            return f"{card.display} cannot start a foundation: it starts with {need.display}"
        return f"{card.display} cannot go on the foundation: {need.display} comes next"

    def foundation_piles(self) -> dict[str, PileCards]:
        return {
            name: [(CARDS[suit * 13 + r - 1], True) for r in self.RANK_SEQUENCE[: self.height[suit]]]
            for suit, name in enumerate(FOUNDATION_NAMES)
        }

    def foundation_cards(self) -> int:
        """How many cards lie on the foundations."""
        return sum(self.height)

    @classmethod
    def _read_foundations(cls, piles: dict[str, PileCards]) -> list[int]:
        """The foundation heights of a position's piles; BadInputError if one is out of sequence."""
        heights = []
        for suit, name in enumerate(FOUNDATION_NAMES):
            cards = [c for c, _ in piles[name]]
            expect = [CARDS[suit * 13 + r - 1] for r in cls.RANK_SEQUENCE[: len(cards)]]
            if cards != expect:
                raise BadInputError(f"foundation {name} must hold {', '.join(c.text for c in expect)}")
            heights.append(len(cards))
        return heights

    # -- stock and waste -------------------------------------------------------------------

    def stock_reason(self, move: Move) -> str | None:
        """Why DRAW or REDEAL is illegal now, or None."""
        if move == DRAW:
            if not self.stock:
                left = self._max_passes()
                if self.waste and (left == UNLIMITED or self.passes_used < left):
                    return "the stock is empty: redeal to turn the waste over"
                return "the stock is empty"
            return None
        if self.stock:
            return "the stock is not empty yet"
        if not self.waste:
            return "the waste is empty: nothing to turn over"
        limit = self._max_passes()
        if limit != UNLIMITED and self.passes_used >= limit:
            return f"the stock may be gone through {limit} time{'s' if limit > 1 else ''} only"
        return None

    def stock_moves(self) -> list[Move]:
        if self.stock:
            return [DRAW]
        limit = self._max_passes()
        if self.waste and (limit == UNLIMITED or self.passes_used < limit):
            return [REDEAL]
        return []

    def _draw(self) -> None:
        self.waste.append(self.stock.pop())

    def _undraw(self) -> None:
        self.stock.append(self.waste.pop())

    def _redeal(self) -> None:
        self.waste.reverse()
        self.stock, self.waste = self.waste, self.stock
        self.passes_used += 1

    def _unredeal(self) -> None:
        self.stock.reverse()
        self.stock, self.waste = self.waste, self.stock
        self.passes_used -= 1

    def stock_piles(self) -> dict[str, PileCards]:
        return {"s": [(c, False) for c in self.stock], "w": [(c, True) for c in self.waste]}
