"""Win-rate studies: the interval holds the exact rate, every way of running gives the same counts."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from patience.games import Carpet
from patience.solve import Budget
from patience.solve.carpet import exact_rate, playout
from patience.solve.fastcarpet import carpet_outcomes, deal_decks
from patience.solve.study import study, wilson

# exact_rate(5, 6), counted once (it takes about a minute); exact_rate is checked against
# counting every stock order in test_solve.py, and recomputed here for a smaller stock
EXACT_5X6 = Fraction(3822574569511690, 6360928785398187)


EXACT_4X5 = Fraction(254613799358412351705123205, 22210292044869908916827899008)  # about half a minute
README = Path(__file__).resolve().parents[1] / "README.md"
_ROW = re.compile(r"^\| (?P<name>[^|]+?) \| `(?P<command>patience study [^`]+)` \| (?P<deals>[\d,]+) \| "
                  r"(?P<won>[\d,]+) / (?P<lost>[\d,]+) / (?P<unknown>[\d,]+) \| "
                  r"\*\*(?P<rate>[\d.]+) %\*\* \((?P<low>[\d.]+) % – (?P<high>[\d.]+) %\) \|", re.M)


def readme_rows() -> dict[str, re.Match[str]]:
    """The README's win-rate table, by the game and variant of each row."""
    return {m["name"]: m for m in _ROW.finditer(README.read_text(encoding="utf-8"))}


def test_the_readme_win_rates_are_the_figures_of_their_counts() -> None:
    """Each row's solver rate and interval are the Wilson figures of its own counts, as printed."""
    rows = readme_rows()
    assert len(rows) >= 7
    for name, row in rows.items():
        won, lost, unknown = (int(row[k].replace(",", "")) for k in ("won", "lost", "unknown"))
        assert won + lost + unknown == int(row["deals"].replace(",", "")), name
        assert f"--deals {won + lost + unknown}" in row["command"], name
        shown = (row["rate"], row["low"], row["high"])
        places = len(row["rate"].partition(".")[2])
        figures = (won / (won + lost), *wilson(won, won + lost))
        assert tuple(f"{100 * x:.{places}f}" for x in figures) == shown, name


@pytest.mark.parametrize(("name", "exact"), [("Teppich 4 × 5 (base)", EXACT_4X5), ("Teppich 5 × 6", EXACT_5X6)])
def test_the_readme_intervals_of_base_teppich_hold_the_exact_rates(name: str, exact: Fraction) -> None:
    row = readme_rows()[name]
    assert float(row["low"]) < 100 * float(exact) < float(row["high"])
    assert f"{100 * float(exact):.3f} %" in README.read_text(encoding="utf-8")


def test_wilson_interval() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(10, 10)[1] == 1.0


def test_interval_contains_the_exact_rate_of_the_larger_carpet() -> None:
    result = study("teppich", {"rows": 5, "cols": 6}, 20_000, progress=None, workers=1)
    solver = result.players["solver"]
    assert solver.deals == 20_000 and solver.unknown == 0
    low, high = solver.interval()
    assert low < float(EXACT_5X6) < high
    assert high - low < 0.015


def test_interval_contains_the_exact_rate_of_a_nearly_full_carpet() -> None:
    truth = exact_rate(6, 7)  # 6 cards in the stock
    assert 0.999 < truth < 1
    result = study("teppich", {"rows": 6, "cols": 7}, 30_000, progress=None, workers=1)
    low, high = result.players["solver"].interval()
    assert low < float(truth) <= high


def test_vectorised_deals_are_the_engines() -> None:
    seeds = np.arange(1, 201)
    decks = deal_decks(seeds)
    items = [c for c in range(52) if c % 13 != 0]
    for k, seed in enumerate(seeds[:40]):
        state = Carpet.deal(int(seed))
        assert [items[i] for i in decks[k][:20]] == state.carpet
    for rows, cols in ((4, 5), (5, 6)):
        won, cards = carpet_outcomes(seeds, rows * cols)
        for k, seed in enumerate(seeds):
            done, moves = playout(Carpet.deal(int(seed), {"rows": rows, "cols": cols}))
            assert (bool(won[k]), int(cards[k])) == (done, 4 + len(moves))


def test_processes_and_one_process_agree() -> None:
    budget = Budget(seconds=None, nodes=30_000)
    one = study("faecher", {}, 8, first_seed=20, progress=None, workers=1, budget=budget)
    two = study("faecher", {}, 8, first_seed=20, progress=None, workers=2, budget=budget, chunk=2)
    assert one.to_dict()["players"]["greedy"] == {**two.to_dict()["players"]["greedy"],
                                                  "seconds": one.to_dict()["players"]["greedy"]["seconds"]}
    for name in ("solver", "greedy"):
        a, b = one.players[name], two.players[name]
        assert (a.won, a.lost, a.unknown) == (b.won, b.lost, b.unknown)
        assert a.deals == 8


def test_dask_cluster_gives_the_same_counts() -> None:
    import dask.distributed as distributed  # a test dependency: the cluster path must run in CI
    budget = Budget(seconds=None, nodes=20_000)
    local = study("teppich", {"waste": True}, 12, progress=None, workers=1, budget=budget)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = study("teppich", {"waste": True}, 12, progress=None, budget=budget,
                       scheduler=cluster.scheduler_address, chunk=3)
    for name in ("solver", "greedy"):
        a, b = local.players[name], remote.players[name]
        assert (a.won, a.lost, a.unknown) == (b.won, b.lost, b.unknown)


def test_study_command_json_and_plot(tmp_path: Path) -> None:
    plot = tmp_path / "rate.png"
    done = subprocess.run([sys.executable, "-m", "patience", "study", "teppich", "--variant", "5x6", "--deals",
                           "3000", "--json", "--plot", str(plot), "--workers", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for name in ("solver", "greedy"):
        player = out["players"][name]
        for key in ("deals", "won", "lost", "unknown", "rate", "ci_low", "ci_high"):
            assert key in player
        assert player["deals"] == 3000
        assert player["ci_low"] <= player["rate"] <= player["ci_high"]
    assert "3000/3000" in done.stderr  # the progress bar
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_study_counts_unknown_deals_apart() -> None:
    result = study("reloaded", {}, 3, progress=None, workers=1, budget=Budget(seconds=None, nodes=5),
                   players=("solver",))
    solver = result.players["solver"]
    assert solver.unknown + solver.won + solver.lost == 3
    assert solver.unknown >= 1
    assert result.to_dict()["players"]["solver"]["rate_high"] >= result.to_dict()["players"]["solver"]["rate_low"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_shows_rate_and_time_left_on_a_terminal_and_one_line_elsewhere() -> None:
    budget = Budget(seconds=None, nodes=2000)
    terminal = _Terminal()
    study("teppich", {"waste": True}, 6, progress=terminal, workers=1, budget=budget, chunk=2)
    drawn = terminal.getvalue()
    assert "\x1b[" in drawn and "\r" in drawn  # drawn in place, in colour
    assert "6/6" in drawn and "/s," in drawn and "gone," in drawn and "left" in drawn
    log = io.StringIO()
    study("teppich", {"waste": True}, 6, progress=log, workers=1, budget=budget, chunk=2)
    assert re.fullmatch(r"teppich waste=True: 6/6 deals in [\d.]+ s, [\d,]+/s\n", log.getvalue())
