"""Glicko-2, checked against Glickman's worked example and an independent root search."""

from __future__ import annotations

import math

import pytest

from patience.ratings import SCALE, TAU, Rating, expected_score, update

EXAMPLE = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]


def test_glickmans_worked_example() -> None:
    """Glickman (2012): r=1500, RD=200, σ=0.06 against 1400/30 (win), 1550/100, 1700/300 (losses)
    gives μ' = −0.2069, φ' = 0.8722, σ' = 0.05999, i.e. r' = 1464.06, RD' = 151.52."""
    new = update(Rating(1500, 200, 0.06), EXAMPLE)
    assert round((new.rating - 1500) / SCALE, 4) == -0.2069
    assert round(new.deviation / SCALE, 4) == 0.8722
    assert new.volatility == pytest.approx(0.05999, abs=1e-5)  # the paper truncates: 0.0599960
    assert new.rating == pytest.approx(1464.06, abs=0.02)
    assert new.deviation == pytest.approx(151.52, abs=0.01)


def _volatility_by_bisection(player: Rating, results: list[tuple[Rating, float]]) -> float:
    """Step 5 of Glicko-2 solved by plain bisection on f(x) = 0, written from the paper."""
    mu, phi = (player.rating - 1500) / SCALE, player.deviation / SCALE
    g = [1 / math.sqrt(1 + 3 * (o.deviation / SCALE) ** 2 / math.pi**2) for o, _ in results]
    e = [1 / (1 + math.exp(-gj * (mu - (o.rating - 1500) / SCALE))) for gj, (o, _) in zip(g, results, strict=True)]
    v = 1 / sum(gj**2 * ej * (1 - ej) for gj, ej in zip(g, e, strict=True))
    delta = v * sum(gj * (s - ej) for gj, ej, (_, s) in zip(g, e, results, strict=True))
    a = math.log(player.volatility**2)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2 * (phi**2 + v + ex) ** 2) - (x - a) / TAU**2

    low, high = a - 20, a + 20  # f is decreasing: positive below the root, negative above
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if f(mid) > 0 else (low, mid)
    return math.exp(low / 2)


@pytest.mark.parametrize("player", [Rating(1500, 200, 0.06), Rating(1850, 80, 0.06), Rating(1200, 300, 0.09)])
def test_volatility_agrees_with_an_independent_solution_away_from_1500(player: Rating) -> None:
    """Away from 1500 (μ ≠ 0) a mix-up of μ and φ in step 5 would show; the worked example cannot."""
    results = [(Rating(1400, 30), 1.0), (Rating(2100, 60), 1.0), (Rating(1700, 300), 0.0)]
    assert update(player, results).volatility == pytest.approx(_volatility_by_bisection(player, results), rel=1e-5)


def test_a_win_raises_a_loss_lowers_and_both_make_the_rating_surer() -> None:
    start = Rating()
    win = update(start, [(Rating(), 1.0)])
    loss = update(start, [(Rating(), 0.0)])
    draw = update(start, [(Rating(), 0.5)])
    assert draw.rating == pytest.approx(1500)
    assert loss.rating < draw.rating < win.rating
    assert win.deviation < start.deviation and loss.deviation < start.deviation


def test_provisional_while_the_deviation_is_high() -> None:
    rating = Rating()
    assert rating.provisional
    for _ in range(30):
        rating = update(rating, [(Rating(1500, 60), 0.5)])
    assert not rating.provisional


def test_no_games_only_widen_the_deviation_up_to_the_start_value() -> None:
    rating = update(Rating(1600, 100, 0.06), [])
    assert rating.rating == 1600 and rating.deviation > 100
    assert update(Rating(1600, 349.9, 0.06), []).deviation == 350


def test_expected_score_is_symmetric() -> None:
    a, b = Rating(1700, 80), Rating(1500, 80)
    assert expected_score(a, b) + expected_score(b, a) == pytest.approx(1)
    assert expected_score(a, b) > 0.5
