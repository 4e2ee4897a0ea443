"""What a player has not seen, and deals that fit what they have seen: the three games.

A player sees every face-up card and every stock card once it was turned (the waste's cards, and
after the first redeal the whole stock in its order, since redealing keeps it); never a face-down
card (Solitaire Reloaded's tableau), nor the order of the stock's cards not turned yet (in all three
games, before the first redeal; base Teppich never turns its stock, so its stock stays unseen).
:func:`unseen` names those cards, :func:`visible_deals` deals them at random into the unseen places:
every such deal looks exactly like the table to that player. The hint's determinized search
(:mod:`patience.solve.hints`) solves such deals, fair play's clairvoyance test
(:mod:`patience.solve.clairvoyance`) asks them what the visible cards allow, and the win chance
(:mod:`patience.solve.chance`) plays them out, carrying each sampled deal along a game with
:func:`carry`.

>>> from patience.games import get_game
>>> state = get_game("reloaded").deal(1)
>>> cards, in_stock = unseen(state)
>>> len(cards), in_stock          # 21 face-down tableau cards and the 24 unturned stock cards
(45, 24)
>>> [d.key() == state.key() for d in visible_deals(state, 2)]
[False, False]
>>> all(unseen(d) == unseen(state) for d in visible_deals(state, 3))
True
>>> unseen(get_game("faecher").deal(1))[1]          # Der Fächer: the talon's 35 cards
35
"""

from __future__ import annotations

import hashlib
import random
from typing import TypeVar

from patience.cards import CARDS, Card
from patience.games import Reloaded, State
from patience.games.common import FoundationsStockWaste

__all__ = ["carry", "hidden_cards", "unseen", "visible_deals", "with_hidden"]

S = TypeVar("S", bound=State)


def _in_stock(state: State) -> int:
    """How many stock cards (at the stock's bottom) are unseen: all of them before the first redeal."""
    if not isinstance(state, FoundationsStockWaste):
        raise TypeError(f"{type(state).__name__}: not a game with a stock")
    return len(state.stock) if state.passes_used == 1 else 0


def hidden_cards(state: State) -> list[int]:
    """The cards in the unseen places, in the places' order: Solitaire Reloaded's face-down cards pile by
    pile, bottom up, then the unseen stock cards bottom up. They say what the player has NOT seen: only
    the sampler may read them (never a player nor an estimate)."""
    in_stock = _in_stock(state)
    cards: list[int] = []
    if isinstance(state, Reloaded):
        cards = [int(c) for pile, down in zip(state.tableau, state.down, strict=True) for c in pile[:down]]
    cards.extend(int(c) for c in state.stock[:in_stock])  # type: ignore[attr-defined]
    return cards


def unseen(state: State) -> tuple[list[int], int]:
    """The cards the player has not seen (sorted) and how many of them lie in the stock, at its
    bottom: the face-down cards, and before the first redeal every card still in the stock (after
    it, every stock card was turned once and the stock keeps that order)."""
    return sorted(hidden_cards(state)), _in_stock(state)


def with_hidden(state: S, cards: list[int], history: bool = True) -> S:
    """A copy of ``state`` (its move stack too, unless ``history`` is false) with ``cards`` in its unseen
    places, in the order of :func:`hidden_cards`; every seen card stays where it is."""
    out = state.copy()
    if history:
        out._history = list(state._history)
    placed = [CARDS[c] for c in cards]
    at = 0
    if isinstance(out, Reloaded):
        for pile, down in zip(out.tableau, out.down, strict=True):
            if down:
                pile[:down] = placed[at:at + down]
                at += down
    in_stock = _in_stock(out)
    stock: list[Card] = out.stock  # type: ignore[attr-defined]
    stock[:in_stock] = placed[at:at + in_stock]
    if at + in_stock != len(placed):
        raise ValueError(f"{len(placed)} cards for {at + in_stock} unseen places")
    return out


def visible_deals(state: S, count: int, rng: random.Random | None = None, *, history: bool = True) -> list[S]:
    """``count`` positions that look exactly like ``state`` to a player who has seen what
    :func:`unseen` leaves out: its unseen cards dealt at random into the unseen places. Without
    ``rng`` the generator is seeded by the unseen cards and places, so the deals depend on
    nothing the player cannot see (and stay the same while nothing new is seen). Without ``history`` the
    deals have an empty move stack (a search that only pushes and pops its own moves needs no more)."""
    cards, in_stock = unseen(state)
    if rng is None:
        down = bytes(state.down) if isinstance(state, Reloaded) else b""
        layout = bytes(cards) + down + bytes((in_stock,))
        rng = random.Random(int.from_bytes(hashlib.blake2b(layout, digest_size=8).digest(), "big"))
    out = []
    for _ in range(count):
        shuffled = cards[:]
        _shuffle(shuffled, rng)
        out.append(with_hidden(state, shuffled, history))
    return out


def _shuffle(cards: list[int], rng: random.Random) -> None:
    """``rng.shuffle(cards)``, draw for draw (the same generator calls, the same order: Python 3.11's
    Fisher-Yates with ``_randbelow_with_getrandbits``), without a call a card."""
    getrandbits = rng.getrandbits
    for i in range(len(cards) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        cards[i], cards[j] = cards[j], cards[i]


def carry(sample: S, real: S, rng: random.Random) -> S:
    """The sampled deal ``sample``, after the move the game made to reach ``real``, made to fit ``real``:
    ``real`` with, in each unseen place, the card the sample has there, except the cards the sample keeps
    unseen though ``real`` shows them, which are replaced by the cards ``real`` keeps unseen though the
    sample shows them (in a random order). A sample drawn uniformly among the deals that fit the earlier
    position is so one drawn uniformly among those that fit ``real`` (what is done commutes with any
    renaming of ``real``'s unseen cards), and ``real``'s unseen cards are read as a set only."""
    theirs = hidden_cards(sample)
    wanted = set(unseen(real)[0])
    if len(theirs) != len(wanted):
        raise ValueError("the sample and the position have different unseen places")
    missing = sorted(wanted.difference(theirs))
    rng.shuffle(missing)
    fill = iter(missing)
    return with_hidden(real, [c if c in wanted else next(fill) for c in theirs])
