"""Cards, suits and ranks, with a short text form (``QH``, ``10S``) and a display form (``Q♥``).

A card is an ``int`` from 0 to 51 (``suit * 13 + rank - 1``) so that the engines and the
solvers can index lists with it; :data:`CARDS` holds the 52 singletons, and ``Card(n)`` hands
back the same objects.

>>> card = parse_card("QH")
>>> card.rank, card.suit.symbol, card.display
(12, '♥', 'Q♥')
"""

from __future__ import annotations

from enum import IntEnum

from patience.errors import BadInputError

__all__ = [
    "CARDS",
    "RANK_TEXT",
    "Card",
    "Suit",
    "card_of",
    "parse_card",
    "parse_cards",
]


class Suit(IntEnum):
    """The four suits, in the order the engines use: ♠ ♥ ♦ ♣."""

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        return "SHDC"[self]

    @property
    def symbol(self) -> str:
        return "♠♥♦♣"[self]

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)


RANK_TEXT = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
_RANK_PARSE = {text: rank for rank, text in enumerate(RANK_TEXT) if text}
_RANK_PARSE.update({"T": 10, "1": 1, "B": 11, "D": 12, "R": 13, "AS": 1})
_SUIT_PARSE = {
    "S": Suit.SPADES, "♠": Suit.SPADES, "♤": Suit.SPADES,
    "H": Suit.HEARTS, "♥": Suit.HEARTS, "♡": Suit.HEARTS,
    "D": Suit.DIAMONDS, "♦": Suit.DIAMONDS, "♢": Suit.DIAMONDS,
    "C": Suit.CLUBS, "♣": Suit.CLUBS, "♧": Suit.CLUBS,
}


class Card(int):
    """One of the 52 cards. ``rank`` is 1 (Ace) to 13 (King); ``suit`` a :class:`Suit`."""

    __slots__ = ()

    def __new__(cls, value: int) -> Card:
        if type(value) is Card:
            return value
        if not 0 <= value < 52:
            raise BadInputError(f"no card has the number {value} (0..51)")
        try:
            return CARDS[value]
        except NameError:  # while CARDS itself is being built
            return int.__new__(cls, value)

    @property
    def suit(self) -> Suit:
        return Suit(self // 13)

    @property
    def rank(self) -> int:
        return self % 13 + 1

    @property
    def is_red(self) -> bool:
        return 13 <= self < 39

    @property
    def text(self) -> str:
        """Short text form: ``AS``, ``10H``, ``QD``."""
        return RANK_TEXT[self.rank] + "SHDC"[self // 13]

    @property
    def display(self) -> str:
        """Display form with the suit symbol: ``A♠``, ``10♥``."""
        return RANK_TEXT[self.rank] + "♠♥♦♣"[self // 13]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card({self.text})"


CARDS: tuple[Card, ...] = tuple(Card(n) for n in range(52))


def card_of(rank: int, suit: int) -> Card:
    """The card of that rank (1..13) and suit."""
    return CARDS[suit * 13 + rank - 1]


def parse_card(text: str) -> Card:
    """Read a card from ``QH``, ``q♥``, ``10s``, ``Ts`` or ``♥Q``; raise BadInputError otherwise."""
    raw = text.strip().upper()
    if len(raw) >= 2:
        for rank_part, suit_part in ((raw[:-1], raw[-1]), (raw[1:], raw[0])):
            if suit_part in _SUIT_PARSE and rank_part in _RANK_PARSE:
                return card_of(_RANK_PARSE[rank_part], _SUIT_PARSE[suit_part])
    raise BadInputError(f"not a card: {text!r} (write e.g. QH, 10S, A♦)")


def parse_cards(text: str) -> list[Card]:
    """Read a comma- or space-separated list of cards."""
    return [parse_card(part) for part in text.replace(",", " ").split()]
