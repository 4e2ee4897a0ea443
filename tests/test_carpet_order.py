"""Teppich's base game does not depend on the order of play; its waste variant does.

RULES.md §1 explains why: in the base game a move takes a card off the carpet and the next
stock card fills the gap, so after k moves the cards seen so far (carpet and foundations)
are the first 20 + k cards of the deal, whatever was played, and a card that can go up
stays playable until it does. Every way of playing a deal therefore ends with the same
foundations. These tests play many deals with different move choices and compare; the last
one shows that they can tell a game that does depend on the order.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from patience.games import Carpet, Move, Outcome, get_game

Policy = Callable[[list[Move]], Move]


def first(moves: list[Move]) -> Move:
    return moves[0]


def last(moves: list[Move]) -> Move:
    return moves[-1]


def randomly(seed: int) -> Policy:
    rnd = random.Random(seed)
    return lambda moves: rnd.choice(moves)


def policies(seed: int) -> dict[str, Policy]:
    return {"first": first, "last": last, "random a": randomly(seed), "random b": randomly(~seed)}


def play(state: Carpet, policy: Policy) -> tuple[list[Move], list[frozenset[int]]]:
    """Play to the end; return the moves and the cards seen (carpet and foundations) after each."""
    moves_played: list[Move] = []
    seen = [_seen(state)]
    while (moves := state.legal_moves()):
        move = policy(moves)
        state.push(move)
        moves_played.append(move)
        seen.append(_seen(state))
    return moves_played, seen


def _seen(state: Carpet) -> frozenset[int]:
    piles = state.piles()
    return frozenset(card for name, cards in piles.items() if name not in ("s", "w") for card, _ in cards)


def _foundations(state: Carpet) -> list[list[str]]:
    piles = state.piles()
    return [[c.text for c, _ in piles[name]] for name in ("fs", "fh", "fd", "fc")]


@pytest.mark.parametrize(("rows", "cols"), [(4, 5), (5, 6)])
def test_base_game_ends_alike_in_any_order(rows: int, cols: int) -> None:
    cls = get_game("teppich")
    won = other_order = 0
    for seed in range(300):
        results = {}
        orders = set()
        for name, policy in policies(seed).items():
            state = cls.deal(seed, {"rows": rows, "cols": cols})
            assert isinstance(state, Carpet)
            moves, seen = play(state, policy)
            orders.add(tuple(moves))
            results[name] = (seen, _foundations(state), state.outcome(), state.ply)
        reference = results["first"]
        for name, result in results.items():
            assert result[0] == reference[0], f"seed {seed}: the cards seen differ ({name} vs first)"
            assert result[1:] == reference[1:], f"seed {seed}: {name} ends otherwise than first"
        assert reference[2] in (Outcome.WON, Outcome.NO_MOVES)
        won += reference[2] == Outcome.WON
        other_order += len(orders) > 1
    # the deals were really played in different orders, and both outcomes occur
    assert other_order > 150
    assert 0 < won < 300


def test_waste_variant_depends_on_the_order() -> None:
    """Drawing before playing buries cards under the waste: the same deal ends otherwise.

    The comparison above, run on the waste variant, must find such deals, or it could not
    tell an order-dependent game at all.
    """
    cls = get_game("teppich")
    differ = 0
    for seed in range(300):
        ends = set()
        for policy in policies(seed).values():
            state = cls.deal(seed, {"waste": True})
            play(state, policy)
            ends.add((state.foundation_cards(), state.outcome()))
        differ += len(ends) > 1
    assert differ > 100

    # a deal that playing every card before turning the stock wins and turning it all first loses
    # ("first" takes foundation moves before the draw, "last" draws whenever it can)
    def ends(seed: int, policy: Policy) -> tuple[list[Move], Carpet]:
        state = cls.deal(seed, {"waste": True})
        assert isinstance(state, Carpet)
        moves, _ = play(state, policy)
        return moves, state

    seed = next((seed for seed in range(300)
                 if ends(seed, first)[1].is_won() and not ends(seed, last)[1].is_won()), None)
    assert seed is not None, "no deal in 0..299 is won by playing first and lost by drawing first"
    _, playing_first = ends(seed, first)
    moves, drawing_first = ends(seed, last)
    assert moves[0] == Move("s", "w")
    assert playing_first.outcome() == Outcome.WON and playing_first.foundation_cards() == 52
    assert drawing_first.outcome() == Outcome.NO_MOVES and drawing_first.foundation_cards() < 52
