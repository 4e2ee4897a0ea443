"""The calibrated win chance: what won of n samples say of a position's chance (patience.solve.calibration)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from patience.games import get_game
from patience.solve.calibration import GRID, Prior, fit, prior_for, variant
from patience.solve.chance import estimator, wilson

ROOT = Path(__file__).resolve().parent.parent


def _population(rng: random.Random, count: int, n: int = 12) -> list[tuple[float, int]]:
    """Positions as a game has them, most nearly lost or nearly won: (true chance, samples won of n)."""
    out = []
    for _ in range(count):
        u = rng.random()
        p = rng.betavariate(1, 12) if u < 0.3 else rng.betavariate(12, 1) if u < 0.75 else rng.random()
        out.append((p, sum(rng.random() < p for _ in range(n))))
    return out


def test_the_estimate_is_calibrated_where_the_share_won_is_not() -> None:
    """Fitted on one set of positions, the estimate of another set is within 2.5 points of the true mean
    chance of each count of samples won; the share won is off by more than 3.5 at the ends (regression to
    the mean: 12 of 12 is not a certain win, 0 of 12 not a certain loss)."""
    rng = random.Random(5)
    prior = Prior(tuple(fit((won, 12) for _, won in _population(rng, 8_000))))
    measured = _population(rng, 40_000)
    worst_estimate = worst_share = 0.0
    for won in range(13):
        chances = [p for p, k in measured if k == won]
        truth = sum(chances) / len(chances)
        worst_estimate = max(worst_estimate, abs(prior.estimate(won, 12)[0] - truth))
        worst_share = max(worst_share, abs(won / 12 - truth))
    assert worst_estimate < 0.025 < 0.035 < worst_share, (worst_estimate, worst_share)


def test_more_samples_say_more_and_the_interval_holds_the_estimate() -> None:
    prior = Prior(tuple(fit([(0, 12)] * 40 + [(12, 12)] * 50 + [(6, 12)] * 10)))
    few, many = prior.estimate(4, 4), prior.estimate(32, 32)
    assert few[0] < many[0] <= 1.0 and many[2] - many[1] < few[2] - few[1]
    means = [prior.estimate(won, 12)[0] for won in range(13)]
    assert means == sorted(means) and means[0] > 0.0 and means[-1] < 1.0
    for won in range(13):
        mean, low, high = prior.estimate(won, 12)
        assert 0.0 <= low <= mean <= high <= 1.0


def test_bad_counts_are_refused() -> None:
    prior = Prior(tuple(1 / len(GRID) for _ in GRID))
    for won, n in ((5, 4), (-1, 4)):
        with pytest.raises(ValueError, match="samples won"):
            prior.estimate(won, n)
    with pytest.raises(ValueError, match="samples won"):
        fit([(3, 0)])
    with pytest.raises(ValueError, match="no positions"):
        fit([])


def test_a_variant_never_fitted_keeps_the_share_won() -> None:
    """The fitted variants are the ones the benchmark measures; another (here Teppich 5 x 6) keeps the share
    of samples won and its Wilson interval."""
    big = get_game("teppich").deal(1, {"rows": 5, "cols": 6, "waste": True}).options
    assert prior_for("teppich", big) is None
    assert estimator(None)(3, 12) == (0.25, *wilson(3, 12))
    assert variant("teppich", big) == "teppich rows=5 cols=6 waste=True waste_passes=1 fill_from=waste"
    assert variant("reloaded", get_game("reloaded").deal(1).options) == "reloaded"
    for game, options in (("reloaded", {}), ("teppich", {"waste": True}), ("faecher", {})):
        prior = prior_for(game, get_game(game).deal(1, options).options)
        assert prior is not None and prior.positions >= 300 and "seeds 1.." in prior.fitted_on, game
        assert abs(sum(prior.weights) - 1) < 1e-6


def test_priors_are_fitted_on_tuning_deals_only(tmp_path: Path) -> None:
    """The benchmark refuses to fit the priors on the deals it measures the calibration on."""
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"game": "teppich", "player": "hint", "seed": 900_001, "position": 3, "won": 7,
                                "samples": 12, "observed": True}) + "\n")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "win_chance.py"), "--rows", str(rows),
                           "--fit-priors"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "tuning deals" in done.stderr


def test_the_benchmark_draws_at_most_one_position_a_deal_without_a_look_at_the_games_future() -> None:
    """benchmarks/win_chance.py's draw: at most one position of a deal, where the game is not over, and the
    draw from a game cut after any stretch is the draw from the whole game wherever it falls in the cut
    game's stretches (what comes after a position never changes whether it is drawn: a draw that read the
    game's length would favour the positions of short, lost games)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from analysis import game_record
        from win_chance import drawn, positions_of, stretches
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    reals = positions_of(game_record("teppich", {"waste": True}, 900_001, "greedy"))
    parts = stretches(reals)
    assert len(parts) > 3
    hits = 0
    for salt in range(40):
        whole = drawn(reals, random.Random(salt))
        assert len(whole) <= 1 and all(not reals[i].is_won() for i in whole)
        hits += len(whole)
        for cut in range(1, len(parts)):
            end = parts[cut - 1][-1] + 1
            part = drawn(reals[:end], random.Random(salt))
            if whole and whole[0] < end:
                assert part == whole
            else:
                assert part == []
    assert hits > 0
