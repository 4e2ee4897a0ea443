"""What ``won`` of ``n`` sampled deals say of a position's win chance: the calibrated estimate.

The share of samples won (``won / n``) is an unbiased estimate of a position's chance, yet a table of
positions by that share is not calibrated: with a dozen samples, the positions where all twelve were won
include some whose chance is 85 %, and those where ten were won more whose chance is lower than 10/12
than higher, wherever most positions lie near 0 or 1 (the regression to the mean). The estimate that means
what it says is the mean chance of the positions that show those samples: the posterior mean under the
**population of positions' chances** (the prior), ``E[p | won, n]``.

- **The prior** of a game and variant is fitted by nonparametric maximum likelihood (Kiefer and
  Wolfowitz; the EM iteration on a grid, as in Robbins' empirical Bayes) from the samples won at positions
  of hint-player games on the **tuning deals** (seeds from 1), never on the deals the calibration benchmark
  measures (seeds from 900,001): ``python3 benchmarks/win_chance.py --rows TUNE.jsonl --fit-priors``.
  The iteration starts from the uniform prior and stops after :data:`ROUNDS` rounds, and a share
  :data:`FLOOR` of the mass stays uniform: the prior stays smooth enough for a position unlike those it
  was fitted on (the maximum-likelihood prior itself is a few points).
- **The estimate** of ``won`` of ``n``: the posterior's mean, and its equal-tailed 95 % interval on the
  grid. More samples weigh more: 4 of 4 says less than 32 of 32.
- A variant without a fitted prior keeps the share of samples won and its Wilson interval
  (:func:`wilson`, also the studies' interval): :func:`prior_for` says None.

    prior = prior_for(state)            # None for a variant never fitted
    prior.estimate(10, 12)              # (mean, low, high)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["GRID", "Z95", "Prior", "fit", "prior_for", "priors_path", "variant", "wilson"]

GRID = tuple(i / 100 for i in range(101))  # the chances the prior puts its mass on
ROUNDS = 300  # EM rounds from the uniform prior
Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile
FLOOR = 0.01  # the prior's share kept uniform
# the options that change what the hint player can do (the others count points or time)
PLAY_OPTIONS = {"teppich": ("rows", "cols", "waste", "waste_passes", "fill_from"), "faecher": ("passes",),
                "reloaded": ()}


def wilson(won: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``won / n`` (95 % by default).

    >>> [round(x, 4) for x in wilson(0, 10)]
    [0.0, 0.2775]
    """
    if n == 0:
        return 0.0, 1.0
    p = won / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # at 0 and n the interval ends exactly at 0 or 1 (rounding could leave it a hair short)
    low = 0.0 if won == 0 else max(0.0, centre - half)
    high = 1.0 if won == n else min(1.0, centre + half)
    return low, high


def variant(game: str, options: Any) -> str:
    """The name of a game's variant as far as play goes, e.g. ``teppich rows=4 cols=5 waste=True ...``."""
    fields = PLAY_OPTIONS.get(game, ())
    return " ".join([game, *(f"{name}={getattr(options, name)}" for name in fields)])


def _likelihoods(won: int, n: int) -> list[float]:
    """The binomial likelihood of ``won`` of ``n`` at each grid chance, in logs made safe, then scaled."""
    logs = []
    for p in GRID:
        if (p == 0.0 and won > 0) or (p == 1.0 and won < n):
            logs.append(-math.inf)
        else:
            logs.append((won * math.log(p) if won else 0.0) + ((n - won) * math.log(1 - p) if n - won else 0.0))
    top = max(logs)
    return [math.exp(x - top) for x in logs]


def fit(counts: Iterable[tuple[int, int]], rounds: int = ROUNDS, floor: float = FLOOR) -> list[float]:
    """The prior's weights on :data:`GRID` fitted to ``counts`` (``(won, n)`` of each position)."""
    tally: dict[tuple[int, int], int] = {}
    for won, n in counts:
        if not 0 <= won <= n or n < 1:
            raise ValueError(f"not a count of samples won: {won} of {n}")
        tally[(won, n)] = tally.get((won, n), 0) + 1
    if not tally:
        raise ValueError("no positions to fit a prior on")
    total = sum(tally.values())
    liks = {key: _likelihoods(*key) for key in tally}
    weights = [1 / len(GRID)] * len(GRID)
    for _ in range(rounds):
        new = [0.0] * len(GRID)
        for key, times in tally.items():
            lik = liks[key]
            z = sum(w * x for w, x in zip(weights, lik, strict=True))
            share = times / (total * z)
            for j, (w, x) in enumerate(zip(weights, lik, strict=True)):
                new[j] += w * x * share
        weights = new
    return [(1 - floor) * w + floor / len(GRID) for w in weights]


@dataclass(frozen=True)
class Prior:
    """The population of positions' chances of one variant: ``weights`` on :data:`GRID`."""

    weights: tuple[float, ...]
    positions: int = 0  # how many positions it was fitted on
    fitted_on: str = ""  # which deals

    def estimate(self, won: int, n: int) -> tuple[float, float, float]:
        """The posterior mean of the chance after ``won`` of ``n`` samples, and its 95 % interval."""
        if not 0 <= won <= n:
            raise ValueError(f"not a count of samples won: {won} of {n}")
        post = [w * x for w, x in zip(self.weights, _likelihoods(won, n), strict=True)]
        z = sum(post)
        post = [x / z for x in post]
        mean = sum(p * x for p, x in zip(GRID, post, strict=True))
        return mean, min(mean, _quantile(post, 0.025)), max(mean, _quantile(post, 0.975))

    def to_dict(self) -> dict[str, Any]:
        return {"weights": [round(w, 8) for w in self.weights], "positions": self.positions,
                "fitted_on": self.fitted_on}


def _quantile(post: list[float], q: float) -> float:
    """The chance below which the share ``q`` of the posterior lies, each grid point's mass spread evenly
    over its cell (the half-way points to its neighbours, within 0..1)."""
    seen = 0.0
    for j, x in enumerate(post):
        if x > 0 and seen + x >= q:
            lo = 0.0 if j == 0 else (GRID[j - 1] + GRID[j]) / 2
            hi = 1.0 if j == len(GRID) - 1 else (GRID[j] + GRID[j + 1]) / 2
            return lo + (hi - lo) * (q - seen) / x
        seen += x
    return 1.0


def priors_path() -> Path:
    return Path(str(resources.files("patience") / "data" / "chance_priors.json"))


@cache
def _priors() -> dict[str, Prior]:
    path = priors_path()
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {name: Prior(tuple(entry["weights"]), entry.get("positions", 0), entry.get("fitted_on", ""))
            for name, entry in data.items()}


def prior_for(game: str, options: Any) -> Prior | None:
    """The fitted prior of a game's variant, or None where none was fitted."""
    return _priors().get(variant(game, options))
