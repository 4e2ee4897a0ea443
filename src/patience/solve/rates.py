"""The published win rates: the one place their figures live.

Each row is one study (``patience study``, seeds 1..N) as it came out: the deals, what the
solver said of them and how many the greedy player won; and the hint player's own study (it
thinks at every step, so it often covers fewer deals): its command, deals and wins; where the greedy
player's rate was measured apart over many more deals (Teppich with a waste: 10⁶, seeds 1..10⁶ of the
project's shuffle, :mod:`patience.rng`), its own command and deals. Solitaire
Reloaded's hint player is measured on seeds 900001..901000, deals kept apart from seeds 1..1000 on
which its hint's design was tried and chosen (there it won 710 of 1,000: docs/solving.md); so are
those of Teppich with a waste and Der Fächer, whose hint sees only the stock cards already turned
(their hints' order of moves was chosen on seeds 1..400). The
README's win-rate table is
:func:`readme_table` of these rows (``tests/test_docs.py`` holds them equal), and the start
page shows each variant's rate beside it from :func:`rates_by_variant` (``/api/games``)::

    >>> teppich = rates_by_variant()["teppich"]
    >>> teppich["4x5"]["one_in"], round(100 * teppich["waste"]["rate"])
    (87, 88)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from patience.solve.study import wilson

__all__ = ["RATES", "WinRate", "rates_by_variant", "readme_table"]


@dataclass(frozen=True)
class WinRate:
    """One study's figures. ``variants`` are the named variants this rate stands for (their time
    limit or undo do not change what a solver can win); ``play_matters`` is false where every play
    of a deal ends the same (base Teppich: the greedy player wins exactly the solver's deals)."""

    game: str
    label: str
    command: str
    deals: int
    won: int
    lost: int
    unknown: int
    greedy_won: int
    variants: tuple[str, ...] = ()
    play_matters: bool = True
    hint_command: str = ""  # the hint player's study (``--players hint``); empty: not measured
    hint_deals: int = 0
    hint_won: int = 0
    greedy_command: str = ""  # the greedy player's own study over more deals (``--players greedy``); empty: the
    greedy_deals: int = 0  # row's study, whose deals ``greedy_won`` is then of

    @property
    def decided(self) -> int:
        return self.won + self.lost

    @property
    def rate(self) -> float:
        """The solver's rate over the deals it decided."""
        return self.won / self.decided

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.won, self.decided)

    @property
    def greedy_of(self) -> int:
        """The deals the greedy player's figure is over."""
        return self.greedy_deals or self.deals

    @property
    def greedy_rate(self) -> float:
        return self.greedy_won / self.greedy_of

    @property
    def greedy_interval(self) -> tuple[float, float]:
        return wilson(self.greedy_won, self.greedy_of)

    @property
    def hint_rate(self) -> float:
        return self.hint_won / self.hint_deals

    @property
    def hint_interval(self) -> tuple[float, float]:
        return wilson(self.hint_won, self.hint_deals)


RATES: tuple[WinRate, ...] = (
    WinRate("teppich", "Teppich 4 × 5 (base)", "patience study teppich --deals 10000000",
            10_000_000, 114_599, 9_885_401, 0, 114_599, variants=("4x5",), play_matters=False,
            hint_command="patience study teppich --deals 10000000 --players hint",
            hint_deals=10_000_000, hint_won=114_599),
    WinRate("teppich", "Teppich 5 × 6", "patience study teppich --variant 5x6 --deals 1000000",
            1_000_000, 600_971, 399_029, 0, 600_971, variants=("5x6",), play_matters=False,
            hint_command="patience study teppich --variant 5x6 --deals 1000000 --players hint",
            hint_deals=1_000_000, hint_won=600_971),
    WinRate("teppich", "Teppich with waste, 4 × 5", "patience study teppich --variant waste --deals 10000",
            10_000, 8_783, 1_216, 1, 447_063, variants=("waste",),
            hint_command="patience study teppich --variant waste --first-seed 900001 --deals 1000 "
                         "--players solver,greedy,hint",
            hint_deals=1_000, hint_won=614,
            greedy_command="patience study teppich --variant waste --players greedy --deals 1000000",
            greedy_deals=1_000_000),
    WinRate("teppich", "Teppich with waste, 5 × 6", "patience study teppich --variant 5x6-waste --deals 10000",
            10_000, 9_989, 11, 0, 9_919, variants=("5x6-waste",),
            hint_command="patience study teppich --variant 5x6-waste --first-seed 900001 --deals 300 --players hint",
            hint_deals=300, hint_won=296),
    WinRate("teppich", "Teppich with waste, gap filled from the stock first",
            "patience study teppich --variant waste -o fill_from=stock --deals 2000",
            2_000, 1_603, 389, 8, 307_606,
            hint_command="patience study teppich --variant waste -o fill_from=stock --first-seed 900001 --deals 200 "
                         "--players hint",
            hint_deals=200, hint_won=55,
            greedy_command="patience study teppich --variant waste -o fill_from=stock --players greedy --deals 1000000",
            greedy_deals=1_000_000),
    WinRate("faecher", "Der Fächer (two passes)", "patience study faecher --deals 10000",
            10_000, 9_988, 12, 0, 3_614, variants=("standard", "with-undo"),
            hint_command="patience study faecher --first-seed 900001 --deals 1000 --players solver,greedy,hint",
            hint_deals=1_000, hint_won=995),
    WinRate("faecher", "Der Fächer, one pass", "patience study faecher --variant one-pass --deals 2000",
            2_000, 672, 1_328, 0, 5, variants=("one-pass",)),
    WinRate("reloaded", "Solitaire Reloaded (thoughtful Klondike draw-one)", "patience study reloaded --deals 1000",
            1_000, 892, 105, 3, 120, variants=("5min", "10min", "untimed"),
            hint_command="patience study reloaded --first-seed 900001 --deals 1000 --players solver,greedy,hint",
            hint_deals=1_000, hint_won=684),
)
"""Every published study, in the README's order."""


def _percent(x: float) -> str:
    """A share as the README writes it: four significant figures (1.146 %, 60.10 %)."""
    digits = max(0, 4 - len(str(int(100 * x))))
    return f"{100 * x:.{digits}f} %"


def readme_table() -> str:
    """The README's win-rate table, row by row from :data:`RATES`."""
    lines = ["| game and variant | command | deals | solver won / lost / unknown | solver rate (95 % interval) "
             "| greedy rate (95 % interval) | hint player: rate (95 % interval), deals, command |",
             "|---|---|---|---|---|---|---|"]
    for r in RATES:
        low, high = r.interval
        glow, ghigh = r.greedy_interval
        greedy = f"{_percent(r.greedy_rate)} ({_percent(glow)} – {_percent(ghigh)})"
        if r.greedy_command:
            greedy += f", {r.greedy_deals:,} deals: `{r.greedy_command}`"
        if r.hint_deals:
            hlow, hhigh = r.hint_interval
            hint = (f"{_percent(r.hint_rate)} ({_percent(hlow)} – {_percent(hhigh)}), {r.hint_deals:,} deals: "
                    f"`{r.hint_command}`")
        else:
            hint = "not measured"
        lines.append(f"| {r.label} | `{r.command}` | {r.deals:,} | {r.won:,} / {r.lost:,} / {r.unknown:,} "
                     f"| **{_percent(r.rate)}** ({_percent(low)} – {_percent(high)}) "
                     f"| {greedy} | {hint} |")
    return "\n".join(lines)


def rates_by_variant() -> dict[str, dict[str, dict[str, Any]]]:
    """Per game and named variant, the solver's rate (and "1 deal in N" where it is under 1 in 10), for the
    start page."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for r in RATES:
        for variant in r.variants:
            out.setdefault(r.game, {})[variant] = {
                "rate": round(r.rate, 5), "one_in": round(1 / r.rate) if r.rate < 0.1 else None,
                "deals": r.deals, "play_matters": r.play_matters}
    return out
