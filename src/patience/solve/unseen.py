"""What a Solitaire Reloaded player has not seen, and deals that fit what they have seen.

A player sees the face-up cards and every stock card once it was turned (the waste's cards, and
after the first redeal the whole stock in its order, since redealing keeps it); never a face-down
card, nor the order of the stock's cards not turned yet. :func:`unseen` names those cards,
:func:`visible_deals` deals them at random into the unseen places: every such deal looks exactly
like the table to that player. The hint's determinized search (:mod:`patience.solve.hints`) solves
such deals, fair play's clairvoyance test (:mod:`patience.solve.clairvoyance`) asks them what the
visible cards allow, and a win chance can be read off them too.

>>> from patience.games import get_game
>>> state = get_game("reloaded").deal(1)
>>> cards, in_stock = unseen(state)
>>> len(cards), in_stock          # 21 face-down tableau cards and the 24 unturned stock cards
(45, 24)
>>> [d.key() == state.key() for d in visible_deals(state, 2)]
[False, False]
>>> all(unseen(d) == unseen(state) for d in visible_deals(state, 3))
True
"""

from __future__ import annotations

import hashlib
import random

from patience.cards import CARDS
from patience.games import Reloaded

__all__ = ["unseen", "visible_deals"]


def unseen(state: Reloaded) -> tuple[list[int], int]:
    """The cards the player has not seen (sorted) and how many of them lie in the stock, at its
    bottom: the face-down cards, and before the first redeal every card still in the stock (after
    it, every stock card was turned once and the stock keeps that order)."""
    in_stock = len(state.stock) if state.passes_used == 1 else 0
    cards = [int(c) for pile, down in zip(state.tableau, state.down, strict=True) for c in pile[:down]]
    cards.extend(int(c) for c in state.stock[:in_stock])
    return sorted(cards), in_stock


def visible_deals(state: Reloaded, count: int, rng: random.Random | None = None) -> list[Reloaded]:
    """``count`` positions that look exactly like ``state`` to a player who has seen what
    :func:`unseen` leaves out: its unseen cards dealt at random into the unseen places. Without
    ``rng`` the generator is seeded by the unseen cards and places, so the deals depend on
    nothing the player cannot see (and stay the same while nothing new is seen)."""
    cards, in_stock = unseen(state)
    if rng is None:
        layout = bytes(cards) + bytes(state.down) + bytes((in_stock,))
        rng = random.Random(int.from_bytes(hashlib.blake2b(layout, digest_size=8).digest(), "big"))
    out = []
    for _ in range(count):
        shuffled = cards[:]
        rng.shuffle(shuffled)
        it = iter(shuffled)
        tableau = [[CARDS[next(it)] for _ in pile[:down]] + list(pile[down:])
                   for pile, down in zip(state.tableau, state.down, strict=True)]
        stock = [CARDS[next(it)] for _ in range(in_stock)] + list(state.stock[in_stock:])
        out.append(Reloaded._make(state.options, tableau, state.down, stock, state.waste, state.height,
                                  state.passes_used))
    return out
