"""Solitaire Reloaded: Klondike draw-one, played for points (RULES.md §2).

Seven tableau piles of 1..7 cards (only the top face up), 24 cards in the stock. Cards are
turned one at a time onto the waste; the waste may be turned over as often as wanted. The
tableau builds down in alternating colours, any face-up run moves as a unit, only a King
(or a run headed by one) fills an empty pile, and a foundation's top card may come back.

Piles: ``t1``..``t7`` tableau, ``s`` stock, ``w`` waste, ``fs fh fd fc`` the foundations
(``f`` as a target picks the card's own). Moves: ``draw``, ``redeal``, ``w>t3``, ``t2>f``,
``t6>t1:3`` (the run of 3), ``fh>t4``. Options hold the score table and the match rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Self

from patience.cards import CARDS, Card
from patience.errors import BadInputError
from patience.games.base import DRAW, REDEAL, Event, GameInfo, Move, PileCards, read_piles
from patience.games.common import FOUNDATION_NAMES, SUIT_OF_FOUNDATION, FoundationsStockWaste
from patience.options import option
from patience.rng import Seed, check_seed, shuffled

__all__ = ["Reloaded", "ReloadedOptions"]

TABLEAU = tuple(f"t{i}" for i in range(1, 8))
_TABLEAU_INDEX = {name: i for i, name in enumerate(TABLEAU)}


@dataclass(frozen=True)
class ReloadedOptions:
    """Options of Solitaire Reloaded: time, undo, the score table and the match bonus."""

    time_limit: int = option(300, "time limit in seconds, 0 for none (Decision: 5 minutes)", low=0, high=86400)
    undo_limit: int = option(3, "undos in store at most: each move adds one, each undo uses one",
                             low=0, high=1000)
    reveal_points: int = option(5, "a face-down card turned up (the source marks it '???')", low=-1000, high=1000)
    foundation_points: int = option(10, "a card onto a foundation, times its value", low=-1000, high=1000)
    foundation_once: bool = option(True, "a card earns its foundation points only the first time it reaches a "
                                   "foundation (Decision: no loop of moves gains points)")
    waste_to_tableau_points: int = option(5, "a card from the waste onto the tableau, times its value",
                                          low=-1000, high=1000)
    solved_points: int = option(2500, "game solved: fixed part", low=0, high=100000)
    solved_step_points: int = option(7000, "game solved: this divided by the steps (integer division)",
                                     low=0, high=1000000)
    steps: str = option("made", "steps for the solved bonus (Decision: every move made; net: moves not undone)",
                        choices=("made", "net"))
    redeal_points: int = option(-10, "the stock turned over again", low=-1000, high=1000)
    from_foundation_points: int = option(-15, "a card from a foundation back to the tableau", low=-1000, high=1000)
    undo_points: int = option(-1, "an undo (the undone move's points are also taken back)", low=-1000, high=1000)
    time_penalty_points: int = option(-2, "for every full period of play", low=-1000, high=1000)
    time_penalty_seconds: int = option(10, "length of that period in seconds", low=1, high=3600)
    clamp: str = option("every", "score floor 0: after every change (Decision), or only at the end",
                        choices=("every", "end"))
    match_bonus_percent: int = option(10, "match winner's bonus, percent of the winner's score (Decision)",
                                      low=0, high=1000)
    match_bonus_min: int = option(100, "match winner's bonus, at least (Decision)", low=0, high=100000)


INFO = GameInfo(
    id="reloaded",
    names={"de": "Solitaire Reloaded", "it": "Solitaire Reloaded", "en": "Solitaire Reloaded"},
    aliases=("klondike", "solitaire", "solitaire-reloaded", "reloaded", "patience"),
    options=ReloadedOptions,
    variants={"5min": {}, "10min": {"time_limit": 600}, "untimed": {"time_limit": 0}},
)


def _fits_on(card: int, target: int) -> bool:
    """May ``card`` lie on ``target`` in the tableau: one rank lower, other colour."""
    return target % 13 == card % 13 + 1 and (13 <= card < 39) != (13 <= target < 39)


# Move objects made once: move generation then only picks them.
_TO_FOUNDATION = tuple(Move(t, "f") for t in TABLEAU)
_RUN_MOVES = tuple(tuple(tuple(Move(a, b, n) for n in range(1, 14)) for b in TABLEAU) for a in TABLEAU)
_WASTE_TO_FOUNDATION = Move("w", "f")
_WASTE_MOVES = tuple(Move("w", t) for t in TABLEAU)
_FOUNDATION_MOVES = tuple(tuple(Move(f, t) for t in TABLEAU) for f in FOUNDATION_NAMES)
# The two cards each card may lie on in the tableau (one rank higher, the other colour); Kings none.
_PARENTS = tuple(
    (-2, -2) if c % 13 == 12 else tuple(s * 13 + c % 13 + 1 for s in range(4) if (s in (1, 2)) != (13 <= c < 39))
    for c in range(52)
)


def _targets(card: int, top_pile: dict[int, list[int]], empty: Iterable[int]) -> Iterable[int]:
    """The tableau piles ``card`` may go onto, given which pile each top card heads."""
    if card % 13 == 12:
        return empty
    a, b = _PARENTS[card]
    return [*top_pile.get(a, ()), *top_pile.get(b, ())]


class Reloaded(FoundationsStockWaste):
    """A position of Solitaire Reloaded (Klondike draw-one)."""

    INFO = INFO
    __slots__ = ("down", "tableau")

    options: ReloadedOptions
    tableau: list[list[Card]]  # bottom to top
    down: list[int]  # how many cards at the bottom of each pile are face down

    # -- creating --------------------------------------------------------------------------

    @classmethod
    def deal(cls, seed: Seed, options: Any = None) -> Self:
        """Cards are dealt from the front of the shuffled deck, row by row (pile i gets i cards)."""
        opts = cls.make_options(options)
        deck = shuffled(list(CARDS), check_seed(seed), salt=INFO.id)
        tableau: list[list[Card]] = [[] for _ in range(7)]
        k = 0
        for row in range(7):
            for pile in range(row, 7):
                tableau[pile].append(deck[k])
                k += 1
        return cls._make(opts, tableau, list(range(7)), deck[k:][::-1], [], [0, 0, 0, 0], 1)

    @classmethod
    def _make(cls, opts: ReloadedOptions, tableau: list[list[Card]], down: list[int],
              stock: list[Card], waste: list[Card], heights: list[int], passes_used: int) -> Self:
        self = cls.__new__(cls)
        self._init_common(opts, stock, waste, heights, passes_used)
        self.tableau = [list(p) for p in tableau]
        self.down = list(down)
        return self

    @classmethod
    def from_position(cls, position: Mapping[str, Any]) -> Self:
        opts = cls.make_options(position.get("options"))
        piles = read_piles(position, [*FOUNDATION_NAMES, *TABLEAU, "s", "w"])
        heights = cls._read_foundations(piles)
        tableau, down = [], []
        for name in TABLEAU:
            cards = piles[name]
            flags = [up for _, up in cards]
            n_down = flags.count(False)
            if flags != [False] * n_down + [True] * (len(cards) - n_down):
                raise BadInputError(f"pile {name}: face-down cards lie under the face-up ones")
            if cards and n_down == len(cards):
                raise BadInputError(f"pile {name}: its top card must be face up")
            up = [c for c, f in cards if f]
            if any(not _fits_on(a, b) for b, a in itertools.pairwise(up)):
                raise BadInputError(f"pile {name}: face-up cards must build down in alternating colours")
            tableau.append([c for c, _ in cards])
            down.append(n_down)
        if any(up for _, up in piles["s"]) or not all(up for _, up in piles["w"]):
            raise BadInputError("stock cards are face down and waste cards face up")
        counters = position.get("counters") or {}
        passes = counters.get("passes", 1) if isinstance(counters, Mapping) else 1
        if isinstance(passes, bool) or not isinstance(passes, int) or passes < 1:
            raise BadInputError("position counter passes must be a whole number from 1")
        stock = [c for c, _ in piles["s"]]
        waste = [c for c, _ in piles["w"]]
        return cls._make(opts, tableau, down, stock, waste, heights, passes)

    def copy(self) -> Self:
        """An independent copy of the position (its move stack is not copied)."""
        return self._make(self.options, self.tableau, self.down, self.stock, self.waste, self.height,
                          self.passes_used)

    # -- the rules -------------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        moves: list[Move] = []
        append = moves.append
        tableau, down, height = self.tableau, self.down, self.height
        # which pile each top card heads; -1 stands for the empty piles (Kings go there)
        top_pile: dict[int, list[int]] = {}
        for k in range(7):
            pile = tableau[k]
            top_pile.setdefault(pile[-1] if pile else -1, []).append(k)
        empty = top_pile.get(-1, ())
        for i in range(7):
            pile = tableau[i]
            if not pile:
                continue
            top = pile[-1]
            if height[top // 13] == top % 13:
                append(_TO_FOUNDATION[i])
            size = len(pile)
            for j in range(down[i], size):
                for k in _targets(pile[j], top_pile, empty):
                    if k != i:
                        append(_RUN_MOVES[i][k][size - j - 1])
        if self.waste:
            card = self.waste[-1]
            if height[card // 13] == card % 13:
                append(_WASTE_TO_FOUNDATION)
            for k in _targets(card, top_pile, empty):
                append(_WASTE_MOVES[k])
        for suit in range(4):
            h = height[suit]
            if h:
                for k in _targets(suit * 13 + h - 1, top_pile, empty):
                    append(_FOUNDATION_MOVES[suit][k])
        moves.extend(self.stock_moves())
        return moves

    def useful_moves(self) -> list[Move]:
        """Legal moves less those that cannot change anything: stock turning when no stock or
        waste card fits anywhere now (turning changes no target), and a King that is already a
        pile's bottom card moving to another empty pile.

        Turning is left out whenever no talon card fits, whatever else may be played: until a card
        moves, turning only brings round cards that still fit nowhere. The game ends (no move
        left) when this list is empty; the simple hint never says "draw" while drawing helps nothing."""
        moves = []
        stock_turns = []
        for m in self.legal_moves():
            if m in (DRAW, REDEAL):
                stock_turns.append(m)
            elif m.dst in _TABLEAU_INDEX and m.src in _TABLEAU_INDEX and \
                    len(self.tableau[_TABLEAU_INDEX[m.src]]) == m.n and not self.tableau[_TABLEAU_INDEX[m.dst]]:
                continue
            else:
                moves.append(m)
        if stock_turns and self._talon_card_fits():
            moves.extend(stock_turns)
        return moves

    def _talon_card_fits(self) -> bool:
        """Does a card of the stock or the waste fit a foundation or a tableau pile now?"""
        tops = [p[-1] if p else -1 for p in self.tableau]
        return any(self.fits_foundation(card) or any((t < 0 and card % 13 == 12) or (t >= 0 and _fits_on(card, t))
                                                     for t in tops)
                   for card in (*self.stock, *self.waste))

    def check(self, move: Move) -> str | None:
        if move in (DRAW, REDEAL):
            return self.stock_reason(move)
        src, dst, n = move
        if src == dst:
            return "a card cannot move onto its own pile"
        # the moving cards
        if src in _TABLEAU_INDEX:
            i = _TABLEAU_INDEX[src]
            pile = self.tableau[i]
            if not pile:
                return f"pile {src} is empty"
            face_up = len(pile) - self.down[i]
            if not 1 <= n <= face_up:
                return f"pile {src} has {face_up} face-up card{'s' if face_up != 1 else ''}, not {n}"
            card = pile[-n]
        elif src == "w":
            if not self.waste:
                return "the waste is empty"
            if n != 1:
                return "only the waste's top card can move"
            card = self.waste[-1]
        elif src in SUIT_OF_FOUNDATION:
            suit = SUIT_OF_FOUNDATION[src]
            if not self.height[suit]:
                return f"foundation {src} is empty"
            if n != 1:
                return "only a foundation's top card can move"
            if dst not in _TABLEAU_INDEX:
                return "a card from a foundation may only go back to the tableau"
            card = CARDS[suit * 13 + self.height[suit] - 1]
        elif src == "s":
            return "stock cards are turned onto the waste first (draw)"
        elif src == "f":
            return "name the foundation a card comes from: fs, fh, fd or fc"
        else:
            return f"no pile {src!r} in Solitaire Reloaded"
        # where they go
        if dst == "f" or dst in SUIT_OF_FOUNDATION:
            if n != 1:
                return "cards go to a foundation one at a time"
            return self.foundation_reason(card, dst)
        if dst in _TABLEAU_INDEX:
            target = self.tableau[_TABLEAU_INDEX[dst]]
            if not target:
                if card % 13 != 12:
                    return f"only a King (or a run headed by one) may fill an empty pile, not {card.display}"
                return None
            top = target[-1]
            if not _fits_on(card, top):
                if top % 13 != card % 13 + 1:
                    return f"{card.display} cannot go on {top.display}: the tableau builds down by one rank"
                return f"{card.display} cannot go on {top.display}: colours must alternate"
            return None
        if dst in ("w", "s"):
            return "no card may be put on the stock or the waste"
        return f"no pile {dst!r} in Solitaire Reloaded"

    def _apply(self, move: Move) -> tuple[Event, ...]:
        src, dst, n = move
        if move == DRAW:
            self._draw()
            self._history.append((move, False, None))
            return ()
        if move == REDEAL:
            self._redeal()
            self._history.append((move, False, None))
            return (Event(Event.REDEAL),)
        events: list[Event] = []
        # take
        i = _TABLEAU_INDEX.get(src)
        if i is not None:
            pile = self.tableau[i]
            cards = pile[-n:]
            del pile[-n:]
        elif src == "w":
            cards = [self.waste.pop()]
        else:
            suit = SUIT_OF_FOUNDATION[src]
            self.height[suit] -= 1
            cards = [CARDS[suit * 13 + self.height[suit]]]
            events.append(Event(Event.FROM_FOUNDATION, cards[0], "foundation"))
        # put
        to_foundation = None
        if dst == "f" or dst in SUIT_OF_FOUNDATION:
            card = to_foundation = cards[0]
            self.height[card // 13] += 1
            events.append(Event(Event.FOUNDATION, card, "tableau" if i is not None else "waste"))
        else:
            self.tableau[_TABLEAU_INDEX[dst]].extend(cards)
            if src == "w":
                events.append(Event(Event.WASTE_TO_TABLEAU, cards[0], "waste"))
        # turn up a face-down card that became a pile's top
        flipped = False
        if i is not None:
            pile = self.tableau[i]
            if pile and self.down[i] == len(pile):
                self.down[i] -= 1
                flipped = True
                events.append(Event(Event.REVEAL, pile[-1], src))
        self._history.append((move, flipped, to_foundation))
        return tuple(events)

    def pop(self) -> Move:
        move, flipped, card = self._history.pop()
        src, dst, n = move
        if move == DRAW:
            self._undraw()
            return move
        if move == REDEAL:
            self._unredeal()
            return move
        i = _TABLEAU_INDEX.get(src)
        if flipped:
            self.down[i] += 1  # type: ignore[index]
        if card is not None:
            self.height[card // 13] -= 1
            cards = [card]
        else:
            target = self.tableau[_TABLEAU_INDEX[dst]]
            cards = target[-n:]
            del target[-n:]
        if i is not None:
            self.tableau[i].extend(cards)
        elif src == "w":
            self.waste.append(cards[0])
        else:
            self.height[SUIT_OF_FOUNDATION[src]] += 1
        return move

    def is_won(self) -> bool:
        return self.height == [13, 13, 13, 13]

    def key(self) -> Hashable:
        return (
            b"|".join(map(bytes, self.tableau)),
            bytes(self.down),
            bytes(self.stock),
            bytes(self.waste),
            bytes(self.height),
        )

    def piles(self) -> dict[str, PileCards]:
        out = self.foundation_piles()
        for name, pile, n_down in zip(TABLEAU, self.tableau, self.down, strict=True):
            out[name] = [(c, k >= n_down) for k, c in enumerate(pile)]
        out.update(self.stock_piles())
        return out

    def counters(self) -> dict[str, int]:
        return {"passes": self.passes_used}

    def view(self) -> dict[str, Any]:
        """What a player sees; of the waste only the top card is visible (RULES.md §2, Play)."""
        out = super().view()
        waste = out["piles"]["w"]
        out["piles"]["w"] = [None] * (len(waste) - 1) + waste[-1:]
        return out
