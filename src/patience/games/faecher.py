"""Der Fächer ("The Fan"): foundations from the 2s up to the Ace (RULES.md §3).

Ranks run 2..10, J, Q, K, A. The four 2s start the foundations; 9 cards lie face up in the
fan (each playable on its own, a used place stays empty), 4 reserve piles hold one card
each and build down in suit (so a King goes on an Ace), and the other 35 cards are the
talon, turned one at a time onto the waste, twice through in all.

Piles: ``v1``..``v9`` the fan (v for *ventaglio*: ``f`` is the foundation), ``r1``..``r4`` the
reserve piles, ``s`` talon, ``w`` waste, ``fs fh fd fc`` foundations. Moves: ``v3>f``,
``v3>r2``, ``r1>r4``, ``r2>f`` (top card) or ``r2>f:3`` (the whole pile), ``w>f``, ``draw``,
``redeal``.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from patience.cards import CARDS, Card
from patience.errors import BadInputError
from patience.games.base import DRAW, REDEAL, Event, GameInfo, Move, PileCards, read_counter, read_piles
from patience.games.common import FOUNDATION_NAMES, SUIT_OF_FOUNDATION, FoundationsStockWaste
from patience.options import option
from patience.rng import Seed, check_seed, shuffled

__all__ = ["Faecher", "FaecherOptions", "fan_order"]

FAN = tuple(f"v{i}" for i in range(1, 10))
RESERVES = tuple(f"r{i}" for i in range(1, 5))
_FAN_INDEX = {name: i for i, name in enumerate(FAN)}
_RESERVE_INDEX = {name: i for i, name in enumerate(RESERVES)}
_EMPTY = -1


def fan_order(card: int) -> int:
    """A card's place in Der Fächer's rank order: 2 → 0, ..., K → 11, A → 12."""
    return (card % 13 + 12) % 13


def _fits_reserve(card: int, top: int) -> bool:
    """Reserve piles build down in suit: ``card`` goes on ``top`` of its suit, one lower."""
    return card // 13 == top // 13 and fan_order(top) == fan_order(card) + 1


@dataclass(frozen=True)
class FaecherOptions:
    """Options of Der Fächer: the talon, the time and the score table."""

    passes: int = option(2, "passes through the talon (two: one redeal)", low=1, high=9)
    time_limit: int = option(600, "time limit in seconds; the pool drains to 0 over it (Decision: 10 min)",
                             low=1, high=86400)
    pool: int = option(1500, "the starting pool; what is left at the end is added", low=0, high=1000000)
    pool_drain: str = option("linear", "how the pool drains (Decision: linearly to 0 over the time limit)",
                             choices=("linear", "none"))
    pool_until: str = option("game", "the pool drains until this game ends, or until the match ends (both games; "
                             "Decision: duels, so ending early saves nothing)", choices=("game", "match"))
    foundation_points: int = option(150, "a card onto a foundation", low=-10000, high=10000)
    from_reserve_points: int = option(75, "a card onto a foundation from a reserve pile (Decision)",
                                      low=-10000, high=10000)
    illegal_points: int = option(-50, "an attempted illegal move (a wrong click)", low=-10000, high=10000)
    fan_emptied_points: int = option(300, "the fan emptied", low=-10000, high=10000)
    solved_points: int = option(500, "game solved", low=-10000, high=100000)
    undo_limit: int = option(0, "undos in store at most (each move adds one, each undo uses one; the source "
                             "game has none)", low=0, high=1000)


INFO = GameInfo(
    id="faecher",
    names={"de": "Der Fächer", "it": "Il Ventaglio (Der Fächer)", "en": "The Fan (Der Fächer)"},
    aliases=("faecher", "fächer", "facher", "fan", "derfaecher", "der-faecher", "ventaglio", "fächer"),
    options=FaecherOptions,
    variants={"standard": {}, "with-undo": {"undo_limit": 3}, "one-pass": {"passes": 1}},
)


class Faecher(FoundationsStockWaste):
    """A position of Der Fächer."""

    INFO = INFO
    RANK_SEQUENCE: ClassVar[tuple[int, ...]] = (*range(2, 14), 1)
    PILE_ALIASES: ClassVar[dict[str, str]] = {f"fan{i}": f"v{i}" for i in range(1, 10)}
    __slots__ = ("fan", "reserves")

    options: FaecherOptions
    fan: list[int]  # card in each fan place, -1 once it is used
    reserves: list[list[Card]]  # bottom to top

    def _max_passes(self) -> int:
        return self.options.passes

    # -- creating --------------------------------------------------------------------------

    @classmethod
    def deal(cls, seed: Seed, options: Any = None) -> Self:
        """The 2s start the foundations; of the 48 shuffled cards the first 9 make the fan, the
        next 4 the reserve piles, and the talon's top is the card dealt after them."""
        opts = cls.make_options(options)
        deck = shuffled([c for c in CARDS if c.rank != 2], check_seed(seed), salt=INFO.id)
        return cls._make(opts, deck[:9], [[c] for c in deck[9:13]], deck[13:][::-1], [], [1] * 4, 1)

    @classmethod
    def _make(cls, opts: FaecherOptions, fan: Sequence[int], reserves: list[list[Card]], stock: list[Card],
              waste: list[Card], heights: list[int], passes_used: int) -> Self:
        self = cls.__new__(cls)
        self._init_common(opts, stock, waste, heights, passes_used)
        self.fan = list(fan)
        self.reserves = [list(p) for p in reserves]
        return self

    @classmethod
    def from_position(cls, position: Mapping[str, Any]) -> Self:
        opts = cls.make_options(position.get("options"))
        piles = read_piles(position, [*FOUNDATION_NAMES, *FAN, *RESERVES, "s", "w"])
        heights = cls._read_foundations(piles)
        if min(heights) < 1:
            raise BadInputError("the four 2s start the foundations in Der Fächer")
        fan: list[int] = []
        for name in FAN:
            place = piles[name]
            if len(place) > 1:
                raise BadInputError(f"fan place {name} holds one card at most")
            fan.append(place[0][0] if place else _EMPTY)
        reserves = []
        for name in RESERVES:
            cards = [c for c, _ in piles[name]]
            if any(not _fits_reserve(a, b) for b, a in itertools.pairwise(cards)):
                raise BadInputError(f"reserve pile {name} must build down in suit")
            reserves.append(cards)
        passes = read_counter(position, "passes", 1, opts.passes)
        return cls._make(opts, fan, reserves, [c for c, _ in piles["s"]], [c for c, _ in piles["w"]],
                         heights, passes)

    def copy(self) -> Self:
        """An independent copy of the position (its move stack is not copied)."""
        return self._make(self.options, self.fan, self.reserves, self.stock, self.waste, self.height,
                          self.passes_used)

    # -- the rules -------------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        moves: list[Move] = []
        height = self.height
        seq = self.RANK_SEQUENCE
        tops = [p[-1] if p else _EMPTY for p in self.reserves]

        def targets(src: str, card: int, skip: int = -1) -> None:
            suit = card // 13
            if height[suit] < 13 and seq[height[suit]] == card % 13 + 1:
                moves.append(Move(src, "f"))
            for k in range(4):
                if k != skip and (tops[k] == _EMPTY or _fits_reserve(card, tops[k])):
                    moves.append(Move(src, RESERVES[k]))

        for i, card in enumerate(self.fan):
            if card != _EMPTY:
                targets(FAN[i], card)
        for i, pile in enumerate(self.reserves):
            if pile:
                targets(RESERVES[i], pile[-1], skip=i)
                if len(pile) > 1 and self.fits_foundation(pile[-1]):
                    moves.append(Move(RESERVES[i], "f", len(pile)))
        if self.waste:
            targets("w", self.waste[-1])
        moves.extend(self.stock_moves())
        return moves

    def useful_moves(self) -> list[Move]:
        """Legal moves less a reserve pile's top card going to an empty reserve pile, which could
        be repeated forever. Leaving it out never ends a game early: while a reserve pile is
        empty a fan card, the waste's top or a draw can go there, and with fan, waste and talon
        empty every suit's next card is a reserve pile's top (piles build down in suit). It is
        still a real move in play: the card it uncovers may join another pile and free one."""
        return [m for m in self.legal_moves()
                if not (m.src in _RESERVE_INDEX and m.dst in _RESERVE_INDEX
                        and not self.reserves[_RESERVE_INDEX[m.dst]])]

    def check(self, move: Move) -> str | None:
        if move in (DRAW, REDEAL):
            return self.stock_reason(move)
        src, dst, n = move
        if src == dst:
            return "a card cannot move onto its own pile"
        if src in _FAN_INDEX:
            card = self.fan[_FAN_INDEX[src]]
            if card == _EMPTY:
                return f"fan place {src} is empty (used places are not refilled)"
        elif src in _RESERVE_INDEX:
            pile = self.reserves[_RESERVE_INDEX[src]]
            if not pile:
                return f"reserve pile {src} is empty"
            card = pile[-1]
            if n != 1:
                if dst not in ("f", *SUIT_OF_FOUNDATION):
                    return "only a reserve pile's top card moves to another reserve pile"
                if n != len(pile):
                    return f"a reserve pile goes to the foundation whole ({len(pile)} cards) or by its top card"
        elif src == "w":
            if not self.waste:
                return "the waste is empty"
            card = self.waste[-1]
        elif src == "s":
            return "talon cards are turned onto the waste first (draw)"
        elif src in SUIT_OF_FOUNDATION or src == "f":
            return "cards never leave the foundations in Der Fächer"
        else:
            return f"no pile {src!r} in Der Fächer"
        if n != 1 and src not in _RESERVE_INDEX:
            return "cards move one at a time here"
        card = CARDS[card]
        if dst == "f" or dst in SUIT_OF_FOUNDATION:
            return self.foundation_reason(card, dst)
        if dst in _RESERVE_INDEX:
            pile = self.reserves[_RESERVE_INDEX[dst]]
            if pile and not _fits_reserve(card, pile[-1]):
                top = pile[-1]
                if card // 13 != top // 13:
                    return f"{card.display} cannot go on {top.display}: reserve piles build in suit"
                return f"{card.display} cannot go on {top.display}: reserve piles build down by one rank"
            return None
        if dst in _FAN_INDEX:
            return "cards never go back to the fan"
        if dst in ("w", "s"):
            return "no card may be put on the talon or the waste"
        return f"no pile {dst!r} in Der Fächer"

    def _apply(self, move: Move) -> tuple[Event, ...]:
        if move == DRAW:
            self._draw()
            self._history.append((move, None))
            return ()
        if move == REDEAL:
            self._redeal()
            self._history.append((move, None))
            return (Event(Event.REDEAL),)
        src, dst, n = move
        if src in _FAN_INDEX:
            i = _FAN_INDEX[src]
            cards = [CARDS[self.fan[i]]]
            self.fan[i] = _EMPTY
            kind = "fan"
        elif src in _RESERVE_INDEX:
            pile = self.reserves[_RESERVE_INDEX[src]]
            cards = pile[-n:][::-1]  # top card first: that is the order they reach the foundation
            del pile[-n:]
            kind = "reserve"
        else:
            cards = [self.waste.pop()]
            kind = "waste"
        events: list[Event] = []
        if dst in _RESERVE_INDEX:
            self.reserves[_RESERVE_INDEX[dst]].append(cards[0])
        else:
            for card in cards:
                self.height[card // 13] += 1
                events.append(Event(Event.FOUNDATION, card, kind))
        if kind == "fan" and all(c == _EMPTY for c in self.fan):
            events.append(Event(Event.FAN_EMPTIED))
        self._history.append((move, cards))
        return tuple(events)

    def pop(self) -> Move:
        move, cards = self._history.pop()
        if move == DRAW:
            self._undraw()
            return move
        if move == REDEAL:
            self._unredeal()
            return move
        src, dst, _ = move
        if dst in _RESERVE_INDEX:
            self.reserves[_RESERVE_INDEX[dst]].pop()
        else:
            for card in cards:
                self.height[card // 13] -= 1
        if src in _FAN_INDEX:
            self.fan[_FAN_INDEX[src]] = cards[0]
        elif src in _RESERVE_INDEX:
            self.reserves[_RESERVE_INDEX[src]].extend(reversed(cards))
        else:
            self.waste.append(cards[0])
        return move

    def is_won(self) -> bool:
        return self.height == [13, 13, 13, 13]

    def key(self) -> Hashable:
        return (
            bytes(c + 1 for c in self.fan),
            b"|".join(bytes(p) for p in self.reserves),
            bytes(self.stock),
            bytes(self.waste),
            self.passes_used,
        )

    def piles(self) -> dict[str, PileCards]:
        out = self.foundation_piles()
        for name, card in zip(FAN, self.fan, strict=True):
            out[name] = [] if card == _EMPTY else [(CARDS[card], True)]
        for name, pile in zip(RESERVES, self.reserves, strict=True):
            out[name] = [(c, True) for c in pile]
        out.update(self.stock_piles())
        return out

    def counters(self) -> dict[str, int]:
        return {"passes": self.passes_used}
