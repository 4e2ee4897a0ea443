"""What every game shares: moves, events, outcomes, and the :class:`State` interface.

A state is one position of one game. Like a chess board it is mutable and keeps its own
stack of what to take back::

    state = get_game("teppich").deal(seed=7)
    move = state.legal_moves()[0]
    events = state.push(move)      # play it; events say what happened, for scoring
    state.pop()                    # and take it back exactly

``legal_moves`` gives moves as data; ``check`` says why a move is illegal; ``key`` is a compact
hashable image of everything that matters for play (for solvers' transposition tables);
``position`` and ``from_position`` turn a state into JSON-ready data and back (the
position notation), and ``view`` is what a player may see: no face-down card, no stock order.
"""

from __future__ import annotations

import enum
import re
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Self

from patience.cards import Card, parse_card
from patience.errors import BadInputError, IllegalMoveError
from patience.options import options_to_dict, parse_options
from patience.rng import Seed

__all__ = [
    "DRAW",
    "REDEAL",
    "Event",
    "GameInfo",
    "Move",
    "Outcome",
    "PileCards",
    "State",
]


class Move(NamedTuple):
    """A move: ``n`` cards from pile ``src`` to pile ``dst``. Text form ``t3>f``, ``t3>t5:3``."""

    src: str
    dst: str
    n: int = 1

    def __str__(self) -> str:
        if self == DRAW:
            return "draw"
        if self == REDEAL:
            return "redeal"
        return f"{self.src}>{self.dst}" if self.n == 1 else f"{self.src}>{self.dst}:{self.n}"


DRAW = Move("s", "w")
"""Turn the top card of the stock (talon) onto the waste."""
REDEAL = Move("w", "s")
"""Turn the waste over into a new stock."""


@dataclass(frozen=True, slots=True)
class Event:
    """Something a move made happen, for the score table: ``kind`` is one of the constants."""

    kind: str
    card: Card | None = None
    src: str = ""

    FOUNDATION: ClassVar[str] = "foundation"  # a card onto a foundation (src: pile kind)
    REVEAL: ClassVar[str] = "reveal"  # a face-down card turned face up
    WASTE_TO_TABLEAU: ClassVar[str] = "waste_to_tableau"
    FROM_FOUNDATION: ClassVar[str] = "from_foundation"  # a card back from a foundation
    REDEAL: ClassVar[str] = "redeal"  # the waste turned over into a new stock
    FAN_EMPTIED: ClassVar[str] = "fan_emptied"
    FILL: ClassVar[str] = "fill"  # a carpet gap filled (the card becomes visible)


class Outcome(enum.StrEnum):
    """Why a game ended."""

    WON = "won"
    NO_MOVES = "no_moves"
    TIME_OUT = "time_out"
    GIVEN_UP = "given_up"


@dataclass(frozen=True)
class GameInfo:
    """A game's id (as in records and on the command line), its names and its aliases."""

    id: str
    names: Mapping[str, str]
    aliases: tuple[str, ...]
    options: type
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Named option sets a person can pick (``5x6``, ``waste``); the first is the standard game."""


PileCards = list[tuple[Card, bool]]  # bottom to top, with face-up flags

_MOVE_RE = re.compile(r"^\s*([a-z]+\d*|[^\s>:]+)\s*(?:>|-|\s)\s*([a-z]+\d*)\s*(?::\s*(\d+))?\s*$")
_PILE_RE = re.compile(r"^([a-z]+)(\d*)$")


class State(ABC):
    """One position of one game. Subclasses implement the rules; see the module docstring."""

    INFO: ClassVar[GameInfo]
    __slots__ = ("_history", "options")

    options: Any
    _history: list[Any]

    # -- creating --------------------------------------------------------------------------

    @classmethod
    @abstractmethod
    def deal(cls, seed: Seed, options: Any = None) -> Self:
        """The initial position of deal ``seed`` under ``options`` (a game Options, a dict or None)."""

    @classmethod
    def make_options(cls, options: Any = None) -> Any:
        """Options of this game from an Options object, a dict, ``KEY=VALUE`` strings or None."""
        if isinstance(options, cls.INFO.options):
            return options
        return parse_options(cls.INFO.options, options)

    @classmethod
    @abstractmethod
    def from_position(cls, position: Mapping[str, Any]) -> Self:
        """Rebuild a state from :meth:`position` output; raise BadInputError if it is not valid."""

    # -- the rules -------------------------------------------------------------------------

    @abstractmethod
    def legal_moves(self) -> list[Move]:
        """Every legal move in this position."""

    @abstractmethod
    def check(self, move: Move) -> str | None:
        """``None`` if ``move`` is legal here, otherwise the reason it is not."""

    @abstractmethod
    def _apply(self, move: Move) -> tuple[Event, ...]:
        """Play a legal move (unchecked) and push what :meth:`pop` needs to take it back."""

    @abstractmethod
    def pop(self) -> Move:
        """Take back the last move exactly; return it."""

    @abstractmethod
    def is_won(self) -> bool: ...

    @abstractmethod
    def key(self) -> Hashable:
        """A compact hashable image of the position (equal keys: same position)."""

    @abstractmethod
    def piles(self) -> dict[str, PileCards]:
        """Every pile, bottom to top with face-up flags: the whole position's cards."""

    @abstractmethod
    def foundation_cards(self) -> int:
        """How many cards lie on the foundations."""

    def counters(self) -> dict[str, int]:
        """Numbers that belong to the position besides its cards (e.g. stock passes used)."""
        return {}

    def useful_moves(self) -> list[Move]:
        """The legal moves that can still change the outcome; none left means the game is over.

        Games with moves that can be repeated forever without changing anything (Klondike's
        stock cycling, Der Fächer's reserve shuffling) override this.
        """
        return self.legal_moves()

    # -- shared behaviour ------------------------------------------------------------------

    def push(self, move: Move) -> tuple[Event, ...]:
        """Play ``move``; raise IllegalMoveError with the reason if the rules forbid it."""
        reason = self.check(move)
        if reason is not None:
            raise IllegalMoveError(str(move), reason)
        return self._apply(move)

    @property
    def ply(self) -> int:
        """How many moves have been pushed (and not popped)."""
        return len(self._history)

    def outcome(self) -> Outcome | None:
        """``WON``, ``NO_MOVES`` or ``None`` while the game goes on."""
        if self.is_won():
            return Outcome.WON
        if not self.useful_moves():
            return Outcome.NO_MOVES
        return None

    def copy(self) -> Self:
        """An independent copy of the position (its move stack is not copied)."""
        return type(self).from_position(self.position())

    def position(self) -> dict[str, Any]:
        """The whole position as JSON-ready data (our FEN): game, options, piles, counters."""
        return {
            "game": self.INFO.id,
            "options": options_to_dict(self.options, only_changed=True),
            "piles": {name: [c.text if up else c.text.lower() for c, up in cards]
                      for name, cards in self.piles().items()},
            "counters": self.counters(),
        }

    def view(self) -> dict[str, Any]:
        """What a player sees: face-down cards (and so the stock's order) are ``None``."""
        return {
            "game": self.INFO.id,
            "options": options_to_dict(self.options),
            "piles": {name: [c.text if up else None for c, up in cards]
                      for name, cards in self.piles().items()},
            "counters": self.counters(),
        }

    def parse_move(self, text: str) -> Move:
        """Read a move typed by a person: ``t3>f``, ``t3 t5``, ``t3>t5:2``, ``draw``, ``c7``.

        A card may stand for the place it lies in (``QH>f``). Without ``:N`` the number of
        cards is the one legal choice, or 1. Raises BadInputError for text that names no move.
        """
        raw = text.strip().lower()
        if raw in ("draw", "d", "s", "s>w", "stock"):
            return DRAW
        if raw in ("redeal", "w>s", "recycle"):
            return REDEAL
        match = _MOVE_RE.match(raw)
        if match is None:
            single = self._parse_single(raw)
            if single is not None:
                return single
            raise BadInputError(f"not a move: {_shown(text)} (type help for the move forms)")
        src = self._pile_name(match.group(1), text)
        dst = self._pile_name(match.group(2), text)
        if match.group(3) is not None:
            n = int(match.group(3))
            if not 1 <= n <= 52:
                raise BadInputError(f"not a move: {_shown(text)} (a card count is 1..52)")
            return Move(src, dst, n)
        depth = self._card_depth(match.group(1), src)
        if depth is not None:
            return Move(src, dst, depth)
        fitting = [m for m in self.legal_moves() if m.src == src and m.dst == dst]
        return fitting[0] if len(fitting) == 1 else Move(src, dst, 1)

    def _card_depth(self, token: str, src: str) -> int | None:
        """When ``token`` names a card rather than a pile: how many cards lie from it to the top
        of ``src``, itself included, so that ``QH>f`` moves the Q♥ and not a card lying on it."""
        if self.PILE_ALIASES.get(token, token) in self.pile_names():
            return None
        try:
            card = parse_card(token)
        except BadInputError:
            return None
        cards = [c for c, _ in self.piles().get(src, [])]
        return len(cards) - cards.index(card) if card in cards else None

    def _parse_single(self, raw: str) -> Move | None:
        """A move given by its source alone (``c7``, ``w``, ``QH``): to the foundation if that is
        legal (a whole reserve pile if it can go), else the one legal move from there. When
        nothing is legal it is the foundation move, so that the refusal says why."""
        try:
            src = self._pile_name(raw, raw)
        except BadInputError:
            return None
        depth = self._card_depth(raw, src)
        mine = [m for m in self.legal_moves() if m.src == src and (depth is None or m.n == depth)]
        to_foundation = [m for m in mine if m.dst == "f"]
        if to_foundation:
            return max(to_foundation, key=lambda m: m.n)
        if len(mine) == 1:
            return mine[0]
        if not mine:
            return Move(src, "f", depth or 1)
        choices = " or ".join(str(m) for m in mine[:3])
        raise BadInputError(f"{raw!r} can go to several places: say where, e.g. {choices}")

    def _pile_name(self, token: str, text: str) -> str:
        names = self.pile_names()
        token = self.PILE_ALIASES.get(token, token)
        if token in names:
            return token
        try:
            card = parse_card(token)
        except BadInputError:
            card = None
        if card is not None:
            for name, cards in self.piles().items():
                if any(c == card and up for c, up in cards):
                    return name
            raise BadInputError(f"{card.display} is not face up anywhere, in {_shown(text)}")
        raise BadInputError(_no_pile(token, text, names))

    def check_names(self, move: Move) -> None:
        """Raise BadInputError if ``move`` names a pile this game does not have.

        Such a move is bad input, like text that names no move: it is refused before the rules
        see it, so it is never a wrong click (nothing charged, nothing logged). :meth:`parse_move`
        already gives only moves that pass; a move made as data (``Move("v3", "r9")``) is checked here.
        """
        if move in (DRAW, REDEAL):
            return
        names = self.pile_names()
        for name in (move.src, move.dst):
            if name not in names:
                raise BadInputError(_no_pile(name, str(move), names))

    PILE_ALIASES: ClassVar[dict[str, str]] = {}

    def pile_names(self) -> list[str]:
        """The names a move may use for this game's piles (``f`` is any foundation)."""
        return [*self.piles(), "f"]

    def __str__(self) -> str:
        from patience.notation import position_text

        return position_text(self.position())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


def _shown(text: str) -> str:
    """``text`` quoted for a message, cut after 40 characters: an error never echoes a whole flood."""
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _no_pile(name: str, text: str, names: Sequence[str]) -> str:
    return f"no pile {_shown(name)} in this game, in {_shown(text)} (piles: {_summarise(names)})"


def _summarise(names: Sequence[str]) -> str:
    """``c1, c2, ..., c20, s`` as ``c1..c20, s``."""
    out: list[str] = []
    groups: dict[str, list[str]] = {}
    for name in names:
        match = _PILE_RE.match(name)
        prefix = match.group(1) if match and match.group(2) else name
        if prefix not in groups:
            groups[prefix] = []
            out.append(prefix)
        groups[prefix].append(name)
    return ", ".join(g[0] if len(g) == 1 else f"{g[0]}..{g[-1]}" for g in (groups[p] for p in out))


def read_piles(
    position: Mapping[str, Any], expected: Sequence[str]
) -> dict[str, PileCards]:
    """Validate the piles of a position: the expected names, each card once, all 52 present."""
    piles = position.get("piles")
    if not isinstance(piles, Mapping):
        raise BadInputError("a position needs a 'piles' object")
    if set(piles) != set(expected):
        missing = sorted(set(expected) - set(piles))
        extra = sorted(set(piles) - set(expected))
        raise BadInputError(f"position piles do not fit the game (missing {missing}, unknown {extra})")
    seen: set[Card] = set()
    out: dict[str, PileCards] = {}
    for name in expected:
        cards = piles[name]
        if not isinstance(cards, list):
            raise BadInputError(f"pile {name} must be a list of cards")
        row: PileCards = []
        for text in cards:
            if not isinstance(text, str):
                raise BadInputError(f"pile {name} holds {text!r}, not a card")
            card = parse_card(text)
            if card in seen:
                raise BadInputError(f"{card.text} appears twice in the position")
            seen.add(card)
            row.append((card, any(ch.isupper() or ch in "♠♥♦♣" for ch in text)))
        out[name] = row
    if len(seen) != 52:
        raise BadInputError(f"a position holds all 52 cards, this one {len(seen)}")
    return out


def read_counter(position: Mapping[str, Any], name: str, low: int, high: int) -> int:
    """A whole-number counter of a position, checked to lie in ``low..high``."""
    counters = position.get("counters") or {}
    if not isinstance(counters, Mapping):
        raise BadInputError("position counters must be an object")
    value = counters.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadInputError(f"position counter {name} must be a whole number {low}..{high}")
    return value
