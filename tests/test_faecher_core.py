"""The compiled core of the Der Fächer search agrees with the Python reference.

:class:`patience.solve.faecher.FanProblem` in the portfolio of :func:`patience.solve.faecher.search_faecher`
is the reference; ``patience.solve._faecher`` must list the same moves in every position, in each
move order, and run the same searches (the same line, the same number of positions).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patience.games.faecher import Faecher
from patience.solve import Budget, Status, _faecher, solve
from patience.solve.faecher import FanProblem, core_arguments, search_faecher, solve_faecher
from test_solve import small_faecher

VARIANTS: list[dict[str, Any]] = [{}, {"passes": 1}, {"passes": 3}]
ORDERS = ("near", "sparing", "fan", "kind")


def core_moves(state: Faecher, order: str) -> list[tuple[Any, ...]]:
    return [tuple(m) for m in _faecher.moves(*core_arguments(state), order)]


@settings(max_examples=150, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(1, 10**9), steps=st.integers(0, 90),
       chooser=st.randoms(use_true_random=False))
def test_core_lists_the_moves_of_the_python_problem(variant: dict[str, Any], seed: int, steps: int,
                                                    chooser: random.Random) -> None:
    state = Faecher.deal(seed, variant)
    for _ in range(steps):
        legal = state.legal_moves()
        if not legal:
            break
        state._apply(chooser.choice(legal))
    for order in ORDERS:
        assert core_moves(state, order) == FanProblem(state, order).moves(), (order, str(state))


def test_core_lists_the_chains_of_fan_cards() -> None:
    # small positions where a reserve top often has the two cards below it in the fan: the moves
    # that carry several fan cards onto a pile at once are listed alike
    rng = random.Random(5)
    chains = 0
    for _ in range(300):
        state = small_faecher(rng, 5)
        for order in ORDERS:
            python = FanProblem(state, order).moves()
            assert core_moves(state, order) == python, (order, str(state))
        chains += any(m[0] == "fan" and len(m[1]) > 1 for m in python)
    assert chains >= 50


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_core_runs_the_same_search(variant: dict[str, Any]) -> None:
    decided = 0
    for seed in range(1, 13):
        state = Faecher.deal(seed, variant)
        budget = Budget(seconds=None, nodes=25_000)
        python = search_faecher(state, budget)
        core, moves = solve_faecher(state, budget)
        assert (core.status, core.nodes, core.reason) == (python.status, python.nodes, python.reason), seed
        assert core.line == python.line
        if core.status is Status.WON:
            assert moves == solve_faecher(state, budget, core=False)[1]
        decided += core.status is not Status.UNKNOWN
    assert decided >= 2  # one pass: 6 won and 9 proved unwinnable within the 25,000 positions


def test_one_pass_deals_are_decided_and_wins_replay() -> None:
    # seeds 1..10 with one pass: 3 and 6 won, the others proved unwinnable (seconds in the core)
    found = {seed: solve(Faecher.deal(seed, {"passes": 1}), Budget(seconds=60)) for seed in range(1, 11)}
    assert {seed for seed, s in found.items() if s.status is Status.WON} == {3, 6}
    assert all(s.status is Status.UNWINNABLE for seed, s in found.items() if seed not in (3, 6))


def test_a_tiny_table_is_cleared_and_the_answer_holds() -> None:
    state = Faecher.deal(7, {"passes": 1})  # proved unwinnable in 251,307 positions
    roomy, _ = solve_faecher(state, Budget(seconds=None, nodes=None, memory_mb=64))
    tight, _ = solve_faecher(state, Budget(seconds=None, nodes=None, memory_mb=0.01))
    assert roomy.status is tight.status is Status.UNWINNABLE
    assert roomy.table_resets == 0 and tight.table_resets > 0


def test_bad_positions_are_refused_by_the_core() -> None:
    fan, reserves, stock, waste, heights, passes, max_passes = core_arguments(Faecher.deal(1))
    with pytest.raises(ValueError):  # three foundations
        _faecher.moves(fan, reserves, stock, waste, heights[:3], passes, max_passes, "near")
    with pytest.raises(ValueError):  # a card twice
        _faecher.moves([stock[0], *fan[1:]], reserves, stock, waste, heights, passes, max_passes, "near")
    with pytest.raises(ValueError):  # a pile that does not build down in suit
        piles = [[reserves[0][0], reserves[1][0]], [], reserves[2], reserves[3]]
        _faecher.moves(fan, piles, stock, waste, heights, passes, max_passes, "near")
    with pytest.raises(ValueError):
        _faecher.moves(fan, reserves, stock, waste, heights, passes, max_passes, "sideways")
