"""Teppich / Tappeto / Carpet: a grid of face-up cards played to four suit foundations.

The base game (RULES.md §1): the aces start the foundations, 20 cards lie face up in a 4 × 5
carpet, 28 stay in the stock. A carpet card that is next on its suit's foundation goes
there, and its gap is filled at once from the stock. Options give the 5 × 6 carpet and the
waste-pile variant, where all 52 cards are dealt and the stock is turned onto a waste.

>>> state = Carpet.deal(seed=1)
>>> state.legal_moves()
[Move(src='c2', dst='f', n=1)]
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

from patience.cards import CARDS, Card
from patience.errors import BadInputError
from patience.games.base import DRAW, REDEAL, Event, GameInfo, Move, PileCards, read_counter, read_piles
from patience.games.common import FOUNDATION_NAMES, FoundationsStockWaste
from patience.options import option
from patience.rng import Seed, check_seed, shuffled

__all__ = ["Carpet", "CarpetOptions"]

_EMPTY = -1


@dataclass(frozen=True)
class CarpetOptions:
    """Options of Teppich. ``rows=5 cols=6`` is the larger carpet; ``waste=yes`` the waste-pile variant;
    ``time_limit`` and ``undo_limit`` are what a duel sets (the game itself has neither a clock nor an undo limit)."""

    rows: int = option(4, "rows of the carpet", low=1, high=8)
    cols: int = option(5, "columns of the carpet", low=1, high=8)
    waste: bool = option(False, "waste-pile variant: aces are dealt too; the stock is turned onto a waste")
    waste_passes: int = option(
        1, "waste variant: passes through the stock (Decision: one pass only)", low=1, high=9
    )
    fill_from: str = option(
        "waste", "waste variant: what fills a carpet gap first (Decision: the waste's top card)",
        choices=("waste", "stock"),
    )
    time_limit: int = option(0, "time limit in seconds, 0 for none (duels: the match's limit)", low=0, high=86400)
    undo_limit: int = option(-1, "undos in store at most (each move adds one, each undo uses one), "
                             "-1 for any number (duels: 3)", low=-1, high=1000)

    def check(self) -> None:
        cells = self.rows * self.cols
        if cells > (52 if self.waste else 48):
            raise BadInputError(f"a {self.rows}x{self.cols} carpet needs more cards than the deck has")


INFO = GameInfo(
    id="teppich",
    names={"de": "Teppich", "it": "Tappeto", "en": "Carpet"},
    aliases=("carpet", "tappeto", "teppich", "tapis"),
    options=CarpetOptions,
    variants={
        "4x5": {},
        "5x6": {"rows": 5, "cols": 6},
        "waste": {"waste": True},
        "5x6-waste": {"rows": 5, "cols": 6, "waste": True},
    },
)

class Carpet(FoundationsStockWaste):
    """A position of Teppich. Carpet places are ``c1``..``c20`` row by row; ``f`` the foundations."""

    INFO = INFO
    __slots__ = ("carpet", "where")

    options: CarpetOptions
    carpet: list[int]  # card number in each place, -1 for a gap
    where: list[int]  # carpet place of each card, -1 when it is not in the carpet

    def _max_passes(self) -> int:
        return self.options.waste_passes if self.options.waste else 0

    # -- creating --------------------------------------------------------------------------

    @classmethod
    def deal(cls, seed: Seed, options: Any = None) -> Self:
        opts = cls.make_options(options)
        seed = check_seed(seed)
        cells = opts.rows * opts.cols
        if opts.waste:
            deck = shuffled(list(CARDS), seed, salt=INFO.id)
            heights = [0, 0, 0, 0]
        else:
            deck = shuffled([c for c in CARDS if c.rank != 1], seed, salt=INFO.id)
            heights = [1, 1, 1, 1]
        # the stock's top (drawn first) is the card dealt right after the carpet
        return cls._make(opts, deck[:cells], deck[cells:][::-1], [], heights, 1)

    @classmethod
    def _make(cls, opts: CarpetOptions, carpet: Sequence[int], stock: list[Card], waste: list[Card],
              heights: list[int], passes_used: int) -> Self:
        self = cls.__new__(cls)
        self._init_common(opts, stock, waste, heights, passes_used)
        self.carpet = list(carpet)
        self.where = [_EMPTY] * 52
        for place, card in enumerate(self.carpet):
            if card != _EMPTY:
                self.where[card] = place
        return self

    @classmethod
    def from_position(cls, position: Mapping[str, Any]) -> Self:
        opts = cls.make_options(position.get("options"))
        names = cls._pile_layout(opts)
        piles = read_piles(position, names)
        heights = cls._read_foundations(piles)
        carpet: list[int] = []
        for place in range(opts.rows * opts.cols):
            cards = piles[f"c{place + 1}"]
            if len(cards) > 1:
                raise BadInputError(f"carpet place c{place + 1} holds one card at most")
            carpet.append(cards[0][0] if cards else _EMPTY)
        waste = [c for c, _ in piles["w"]] if opts.waste else []
        passes = read_counter(position, "passes", 1, opts.waste_passes) if opts.waste else 1
        return cls._make(opts, carpet, [c for c, _ in piles["s"]], waste, heights, passes)

    @staticmethod
    def _pile_layout(opts: CarpetOptions) -> list[str]:
        names = [*FOUNDATION_NAMES, *(f"c{i + 1}" for i in range(opts.rows * opts.cols)), "s"]
        return [*names, "w"] if opts.waste else names

    def copy(self) -> Self:
        """An independent copy of the position (its move stack is not copied)."""
        return self._make(self.options, self.carpet, self.stock, self.waste, self.height, self.passes_used)

    # -- the rules -------------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        moves = []
        where = self.where
        for suit in range(4):
            need = self.needed(suit)
            if need is not None and where[need] != _EMPTY:
                moves.append(_place_move(where[need]))
        if self.options.waste:
            if self.waste and self.fits_foundation(self.waste[-1]):
                moves.append(Move("w", "f"))
            moves.extend(self.stock_moves())
        return moves

    def check(self, move: Move) -> str | None:
        if move in (DRAW, REDEAL):
            if not self.options.waste:
                return "the stock only fills carpet gaps in this game (no drawing)"
            return self.stock_reason(move)
        src, dst = move.src, move.dst
        if move.n != 1:
            return "cards move one at a time in Teppich"
        if dst != "f" and dst not in FOUNDATION_NAMES:
            return "cards go only to the foundations in Teppich, never onto each other"
        if src == "w":
            if not self.options.waste:
                return "this game has no waste pile (option waste=yes adds it)"
            if not self.waste:
                return "the waste is empty"
            return self.foundation_reason(self.waste[-1], dst)
        place = _place_index(src)
        if place is None or place >= len(self.carpet):
            return f"no carpet place {src!r} (c1..c{len(self.carpet)})"
        card = self.carpet[place]
        if card == _EMPTY:
            return f"carpet place {src} is empty"
        return self.foundation_reason(CARDS[card], dst)

    def _apply(self, move: Move) -> tuple[Event, ...]:
        if move == DRAW:
            self._draw()
            self._history.append((move, None, None))
            return ()
        if move == REDEAL:
            self._redeal()
            self._history.append((move, None, None))
            return ()
        if move.src == "w":
            card = self.waste.pop()
            self.height[card // 13] += 1
            self._history.append((move, card, None))
            return (Event(Event.FOUNDATION, card, "waste"),)
        place = int(move.src[1:]) - 1
        card = CARDS[self.carpet[place]]
        self.height[card // 13] += 1
        self.where[card] = _EMPTY
        source = self._fill_source()
        if source is None:
            self.carpet[place] = _EMPTY
            self._history.append((move, card, None))
            return (Event(Event.FOUNDATION, card, "carpet"),)
        fill = (self.waste if source == "w" else self.stock).pop()
        self.carpet[place] = fill
        self.where[fill] = place
        self._history.append((move, card, source))
        return (Event(Event.FOUNDATION, card, "carpet"), Event(Event.FILL, fill, source))

    def _fill_source(self) -> str | None:
        """Where a gap is filled from (RULES.md §1): "w", "s", or None when both are empty."""
        if self.options.waste and self.waste and (self.options.fill_from == "waste" or not self.stock):
            return "w"
        return "s" if self.stock else None

    def pop(self) -> Move:
        move, card, source = self._history.pop()
        if move == DRAW:
            self._undraw()
        elif move == REDEAL:
            self._unredeal()
        elif move.src == "w":
            self.height[card // 13] -= 1
            self.waste.append(card)
        else:
            place = int(move.src[1:]) - 1
            if source is not None:
                fill = self.carpet[place]
                self.where[fill] = _EMPTY
                (self.waste if source == "w" else self.stock).append(CARDS[fill])
            self.carpet[place] = card
            self.where[card] = place
            self.height[card // 13] -= 1
        return move

    def is_won(self) -> bool:
        return self.height == [13, 13, 13, 13]

    def key(self) -> Hashable:
        return (bytes(c + 1 for c in self.carpet), bytes(self.stock), bytes(self.waste), self.passes_used)

    def piles(self) -> dict[str, PileCards]:
        out = self.foundation_piles()
        for place, card in enumerate(self.carpet):
            out[f"c{place + 1}"] = [] if card == _EMPTY else [(CARDS[card], True)]
        out["s"] = [(c, False) for c in self.stock]
        if self.options.waste:
            out["w"] = [(c, True) for c in self.waste]
        return out

    def counters(self) -> dict[str, int]:
        return {"passes": self.passes_used} if self.options.waste else {}

    def _pile_name(self, token: str, text: str) -> str:
        return super()._pile_name(f"c{token}" if token.isdigit() else token, text)


def _place_index(name: str) -> int | None:
    if len(name) >= 2 and name[0] == "c" and name[1:].isdigit() and name[1] != "0":
        return int(name[1:]) - 1
    return None


_PLACE_MOVES = [Move(f"c{i + 1}", "f") for i in range(64)]


def _place_move(place: int) -> Move:
    return _PLACE_MOVES[place]

