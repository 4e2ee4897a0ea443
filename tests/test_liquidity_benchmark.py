"""The liquidity benchmark's model (benchmarks/liquidity.py) on a short span: Play now starts every seeker at
once, live pools alone starve at a low rate, Play now never loses a live start, and the simulation keeps
its invariants (a waiting game taken once, a player in one game)."""

from __future__ import annotations

import importlib.util
import math
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _load() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "liquidity.py"
    spec = importlib.util.spec_from_file_location("liquidity_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


liquidity = _load()
Strategy = liquidity.Strategy


def _check_invariants(run: Any) -> None:
    assert run.violations == []
    seats: list[tuple[int, str]] = run.seats
    per_player = Counter(n for n, _ in seats)
    assert max(per_player.values(), default=1) == 1  # nobody in two games
    per_game: dict[str, list[int]] = {}
    for n, game in seats:
        per_game.setdefault(game, []).append(n)
    for game, players in per_game.items():
        assert len(players) <= 2 and len(set(players)) == len(players), (game, players)
        if game.startswith("L"):
            assert len(players) == 2  # a live match has both its players
    taken: list[str] = run.taken
    assert len(taken) == len(set(taken))  # no waiting game taken twice
    assert all(len(per_game[g]) == 2 for g in taken)
    # a seat starts no earlier than the seeker's arrival, and a result comes after the start
    for n, _ in seats:
        start, result = run.start[n], run.result[n]
        assert start is not None and start >= run.arrivals[n].t
        assert result is None or result > start
    # Play now's host gets the result with the challenger who took the game
    for game in taken:
        host, challenger = per_game[game]
        assert run.result[host] == run.result[challenger] is not None


def test_play_now_at_once_starts_everyone_at_once() -> None:
    run = liquidity.simulate(30, 10, Strategy.NOW, seed=3, tail_hours=2)
    figures = liquidity.figures(run)
    assert figures.seekers > 150
    assert figures.started == 1.0
    assert figures.start_p50 == figures.start_p95 == 0
    assert all(run.start[n] == run.arrivals[n].t for n in run.measured())
    assert run.taken, "some waiting games are taken"
    _check_invariants(run)


def test_live_only_starves_at_ten_an_hour() -> None:
    run = liquidity.simulate(10, 40, Strategy.LIVE, seed=4, tail_hours=0)
    figures = liquidity.figures(run)
    assert figures.seekers > 300
    assert figures.started < 0.5
    assert figures.start_p95 <= liquidity.LIVE_WAIT_S
    assert run.taken == [] and run.hosts == {}
    _check_invariants(run)


@pytest.mark.parametrize("strategy", list(Strategy))
def test_invariants_at_300_an_hour(strategy: Any) -> None:
    run = liquidity.simulate(300, 3, strategy, seed=5, tail_hours=1)
    _check_invariants(run)
    if strategy is Strategy.LIVE_THEN_NOW:  # everyone starts: live, or by Play now at the offer
        waits = [run.start[n] - run.arrivals[n].t for n in run.measured()]
        assert max(waits) <= liquidity.OFFER_S + liquidity.WAVE_SECONDS


def test_play_now_offer_never_loses_a_start_at_300_an_hour() -> None:
    live = liquidity.figures(liquidity.simulate(300, 3, Strategy.LIVE, seed=6, tail_hours=1))
    offered = liquidity.figures(liquidity.simulate(300, 3, Strategy.LIVE_THEN_NOW, seed=6, tail_hours=1))
    assert live.seekers == offered.seekers  # the same arrival stream
    assert offered.started >= live.started
    assert offered.started == 1.0 > live.started


def test_same_stream_for_every_strategy() -> None:
    a = liquidity.arrivals(30, 5, seed=7)
    assert a == liquidity.arrivals(30.0, 5, seed=7)
    assert a != liquidity.arrivals(30, 5, seed=8)
    assert all(800 <= x.rating <= 2400 for x in a)
    assert all(0.4 * 300 <= x.play_s <= 600 for x in a)
    assert math.isclose(len(a), 150, rel_tol=0.35)
