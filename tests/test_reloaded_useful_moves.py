"""Solitaire Reloaded's useful moves: turning the stock is one only when a stock or waste card fits.

docs/rules.md: "stock turning counts only if some stock or waste card could be placed now". Turning
changes no target, so while no talon card fits anywhere, drawing only brings round cards that fit
nowhere, whatever else could be played: ``useful_moves()`` leaves ``draw`` and ``redeal`` out then,
and the simple hint (the server's fallback, which ranks the useful moves) never says "draw" there.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from patience.cards import CARDS, parse_card
from patience.games import DRAW, REDEAL, Move
from patience.games.reloaded import Reloaded
from patience.server.solo.hints import simple_hint

FOUNDATIONS = ("fs", "fh", "fd", "fc")
TABLEAU = tuple(f"t{i}" for i in range(1, 8))


def position(piles: dict[str, list[str]]) -> Reloaded:
    """Tableau piles, stock and waste bottom to top (lower case: face down); the cards placed nowhere
    lie face down under t1; the foundations are empty."""
    out: dict[str, list[str]] = {name: [] for name in (*FOUNDATIONS, *TABLEAU, "s", "w")}
    out.update(piles)
    out["s"] = [t.lower() for t in out["s"]]
    placed = {parse_card(t) for cards in out.values() for t in cards}
    out["t1"] = [c.text.lower() for c in CARDS if c not in placed] + out["t1"]
    return Reloaded.from_position({"game": "reloaded", "options": {}, "piles": out, "counters": {"passes": 1}})


def test_no_draw_while_no_stock_or_waste_card_fits_even_beside_other_moves() -> None:
    # the 9♥ may go onto the 10♠; neither the 3♦ in the stock nor the 5♣ on the waste fits anywhere
    state = position({"t1": ["10S"], "t2": ["9H"], "s": ["3D"], "w": ["5C"]})
    assert DRAW in state.legal_moves()
    assert state.useful_moves() == [Move("t2", "t1")]
    assert simple_hint(state) == Move("t2", "t1")


def test_draw_is_useful_once_a_stock_card_fits() -> None:
    # the 8♣ in the stock fits on the 9♥: turning brings it up
    state = position({"t1": ["10S"], "t2": ["9H"], "s": ["8C", "3D"], "w": ["5C"]})
    assert state.useful_moves() == [Move("t2", "t1"), DRAW]


def test_redeal_is_useful_when_a_waste_card_under_the_top_fits() -> None:
    # the stock is empty; the 8♣ lies in the waste under the 5♣ and comes round after a redeal
    state = position({"t1": ["10S"], "t2": ["9H"], "w": ["8C", "5C"]})
    assert state.useful_moves() == [Move("t2", "t1"), REDEAL]


def test_the_game_ends_as_before_only_when_nothing_is_left() -> None:
    state = position({"t1": ["10S"], "t2": ["9H"], "s": ["3D"], "w": ["5C"]})
    state.push(Move("t2", "t1"))
    assert state.useful_moves() == [] and state.outcome() is not None


def turning_ever_helps(state: Reloaded) -> bool:
    """The slow way: turn the stock round once (redealing when it is empty), and see whether the
    waste's card can ever be played."""
    s = state.copy()
    for _ in range(len(s.stock) + len(s.waste) + 2):
        if any(m.src == "w" and m != REDEAL for m in s.legal_moves()):  # the redeal itself plays no card
            return True
        turn = DRAW if s.stock else REDEAL
        if s.check(turn) is not None:
            return False
        s._apply(turn)
    return False


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(1, 10**9), steps=st.integers(0, 150), chooser=st.randoms(use_true_random=False))
def test_turning_is_listed_exactly_when_turning_can_bring_a_card_into_play(seed: int, steps: int,
                                                                          chooser: random.Random) -> None:
    state = Reloaded.deal(seed)
    for _ in range(steps):
        legal = state.legal_moves()
        if not legal:
            break
        state._apply(chooser.choice(legal))
    useful = state.useful_moves()
    turns = [m for m in state.legal_moves() if m in (DRAW, REDEAL)]
    if turns:
        assert (turns[0] in useful) == turning_ever_helps(state)
    assert all(m not in (DRAW, REDEAL) or m in turns for m in useful)
