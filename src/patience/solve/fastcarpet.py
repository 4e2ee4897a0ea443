"""Many base-game Teppich deals at once: the project's shuffle and the outcome, vectorised.

The deals are exactly those of :meth:`patience.games.carpet.Carpet.deal`: SplitMix64 salted
with the game's id, the same Fisher–Yates steps, the same bounded integers. A bounded draw
is rejected (and redrawn) with a chance below 1 in 10**17; the few seeds where that happens
are dealt again by :func:`patience.rng.shuffled` itself, so no deal ever differs.

In the base game the order of play does not matter (RULES.md §1), so a deal's outcome is
arithmetic on where each card lies in the deck: a card can be played once it and the lower
cards of its suit have been seen, i.e. after its *release* (the latest deck place among
them) has turned up. The carpet shows the first ``cells`` cards, and each move shows one
more. Play stops after ``m`` moves exactly when fewer than ``m + 1`` releases lie before
``cells + m``; sorting the releases, a deal is won when the ``m``-th smallest is below
``cells + m`` for every ``m``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from patience.cards import CARDS
from patience.games.carpet import INFO
from patience.rng import salt_value, shuffled

__all__ = ["carpet_outcomes", "deal_decks"]

_M64 = (1 << 64) - 1
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
# the 48 cards the base game shuffles, in the order the engine lists them: suit by suit, 2..K
_ITEMS = [c for c in CARDS if c.rank != 1]


def deal_decks(seeds: Sequence[int] | np.ndarray, items: int = 48, salt: str = INFO.id) -> np.ndarray:
    """For each seed, the shuffled order of ``range(items)`` as :func:`shuffled` makes it."""
    seeds = np.asarray(seeds, dtype=np.uint64)
    count = len(seeds)
    state = seeds ^ np.uint64(salt_value(salt) if salt else 0)
    deck = np.tile(np.arange(items, dtype=np.int8), (count, 1))
    rows = np.arange(count)
    redo = np.zeros(count, dtype=bool)
    with np.errstate(over="ignore"):
        for i in range(items - 1, 0, -1):
            state += _GAMMA
            z = state.copy()
            z ^= z >> _S30
            z *= _MUL1
            z ^= z >> _S27
            z *= _MUL2
            z ^= z >> _S31
            bound = i + 1
            threshold = (1 << 64) % bound
            if threshold:
                redo |= z < np.uint64(threshold)
            j = (z % np.uint64(bound)).astype(np.intp)
            a = deck[:, i].copy()
            deck[:, i] = deck[rows, j]
            deck[rows, j] = a
    for k in np.nonzero(redo)[0]:
        deck[k] = shuffled(list(range(items)), int(seeds[k]), salt=salt)
    return deck


def carpet_outcomes(seeds: Sequence[int] | np.ndarray, cells: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """(won, cards on the foundations at the end) of base-game deals with ``cells`` carpet places."""
    deck = deal_decks(seeds)
    count = deck.shape[0]
    place = np.empty_like(deck)
    place[np.arange(count)[:, None], deck] = np.arange(48, dtype=np.int8)
    # items are suit by suit, ranks 2..K: a card's release is the latest place among it and
    # the lower cards of its suit
    release = np.maximum.accumulate(place.reshape(count, 4, 12), axis=2).reshape(count, 48)
    release.sort(axis=1)
    ok = release < (cells + np.arange(48))
    # moves made: the first m at which play stops (48 when it never does)
    stuck = ~ok
    moves = np.where(stuck.any(axis=1), stuck.argmax(axis=1), 48)
    return moves == 48, moves + 4
