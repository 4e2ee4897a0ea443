"""Glicko-2 ratings (Glickman, "Example of the Glicko-2 system", 2012 revision).

One match is one rating period. A rating is provisional while its deviation is high, as on
lichess: an unsure rating is shown with a question mark and does not count on leaderboards.

>>> new = update(Rating(1500, 200, 0.06), [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0),
...                                        (Rating(1700, 300), 0.0)])
>>> round(new.rating, 2), round(new.deviation, 2), round(new.volatility, 5)
(1464.05, 151.52, 0.06)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DEFAULT", "PROVISIONAL_DEVIATION", "Rating", "expected_score", "update"]

SCALE = 173.7178  # Glicko-2's factor between the Glicko scale and its own
TAU = 0.5  # constrains the change of volatility; Glickman suggests 0.3..1.2
EPSILON = 0.000001
PROVISIONAL_DEVIATION = 110.0
MAX_DEVIATION = 350.0


@dataclass(frozen=True)
class Rating:
    """A player's rating on the Glicko scale: rating, deviation (RD) and volatility."""

    rating: float = 1500.0
    deviation: float = MAX_DEVIATION
    volatility: float = 0.06

    @property
    def provisional(self) -> bool:
        return self.deviation > PROVISIONAL_DEVIATION

    def _mu_phi(self) -> tuple[float, float]:
        return (self.rating - 1500.0) / SCALE, self.deviation / SCALE


DEFAULT = Rating()


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def expected_score(player: Rating, opponent: Rating) -> float:
    """The score ``player`` is expected to make against ``opponent`` (0..1)."""
    mu, _ = player._mu_phi()
    mu_j, phi_j = opponent._mu_phi()
    return _e(mu, mu_j, phi_j)


def update(player: Rating, results: Sequence[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """The rating after one period with ``results``: (opponent's rating, score 1 / 0.5 / 0)."""
    mu, phi = player._mu_phi()
    sigma = player.volatility
    if not results:  # step 6 only: the deviation grows
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        return Rating(player.rating, min(phi_star * SCALE, MAX_DEVIATION), sigma)
    # step 3: the estimated variance; step 4: the estimated improvement
    inv_v = 0.0
    delta_sum = 0.0
    for opponent, score in results:
        mu_j, phi_j = opponent._mu_phi()
        g = _g(phi_j)
        e = _e(mu, mu_j, phi_j)
        inv_v += g * g * e * (1.0 - e)
        delta_sum += g * (score - e)
    v = 1.0 / inv_v
    delta = v * delta_sum
    # step 5: the new volatility, by the Illinois algorithm
    a = math.log(sigma * sigma)
    phi2 = phi * phi

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi2 + v:
        big_b = math.log(delta * delta - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    new_sigma = math.exp(big_a / 2.0)
    # steps 6 to 8: the new deviation and rating
    phi_star = math.sqrt(phi2 + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * delta_sum
    return Rating(new_mu * SCALE + 1500.0, min(new_phi * SCALE, MAX_DEVIATION), new_sigma)
