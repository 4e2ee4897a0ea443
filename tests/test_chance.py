"""The win chance with what the player could see (patience.solve.chance) and its sampler (patience.solve.unseen).

The chance plays sampled deals out by the hint player; these tests keep the games short or the samples
few. What they check: the samples never contradict a card that was seen, and are uniform among those that
fit; the estimate never reads a hidden card; the interval, determinism, the labels; all three games.
"""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from helpers import record_of
from patience.games import Move, State, get_game
from patience.solve import Budget, solve_deal
from patience.solve.calibration import prior_for
from patience.solve.chance import (
    BLUNDER,
    INACCURACY,
    MISTAKE,
    _clear,
    estimator,
    label_of,
    wilson,
    win_chances,
    win_chances_from,
)
from patience.solve.greedy import greedy_move
from patience.solve.unseen import carry, hidden_cards, unseen, visible_deals, with_hidden

GAMES = [("reloaded", {}), ("faecher", {}), ("teppich", {"waste": True}), ("teppich", {})]
QUICK = Budget(seconds=5.0, nodes=300_000, memory_mb=64)


def greedy_line(state: State, most: int) -> list[Move]:
    s = state.copy()
    out = []
    for _ in range(most):
        move = greedy_move(s)
        if move is None:
            break
        s._apply(move)
        out.append(move)
    return out


def seen(state: State) -> dict[str, list[str | None]]:
    """What the player sees: every pile, a card unseen by them as None."""
    out: dict[str, list[str | None]] = {}
    in_stock = unseen(state)[1]
    for name, pile in state.piles().items():
        if name == "s":
            out[name] = [None] * in_stock + [c.text for c, _ in pile[in_stock:]]
        else:
            out[name] = [c.text if up else None for c, up in pile]
    return out


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_carried_samples_never_contradict_a_seen_card(game: str, options: dict[str, Any]) -> None:
    """Along a game, every sample carried from the deal shows exactly what the real position shows, and
    deals its unseen cards (as a set) into the unseen places."""
    real = get_game(game).deal(11, options)
    rng = random.Random(5)
    samples = visible_deals(real, 6, rng)
    revealed = 0
    for move in greedy_line(real, 80):
        before = len(unseen(real)[0])
        real._apply(move)
        revealed += before - len(unseen(real)[0])
        moved = []
        for s in samples:
            s._apply(move)  # legal on the sample: what can be played depends on the seen cards only
            moved.append(s)
        samples = [carry(s, real, rng) for s in moved]
        for s in samples:
            assert seen(s) == seen(real)
            assert unseen(s) == unseen(real)
            assert sorted(hidden_cards(s)) == unseen(real)[0]
    assert revealed > 0  # the line turned cards up: the carry had work to do


def test_a_carried_sample_is_uniform_among_the_deals_that_fit() -> None:
    """After a move that turns a card up, the carried samples put each unseen card in a given unseen place
    about equally often (a carry that kept the sample's own card order would favour some)."""
    real = get_game("reloaded").deal(3)
    move = next(m for m in real.legal_moves() if str(m) == "draw")
    after = real.copy()
    after._apply(move)
    rng = random.Random(1)
    counts: Counter[int] = Counter()
    tries = 6_000
    for s in visible_deals(real, tries, rng):
        s._apply(move)
        counts[hidden_cards(carry(s, after, rng))[-1]] += 1  # the stock's last unseen card
    cards = unseen(after)[0]
    assert set(counts) == set(cards)
    expected = tries / len(cards)
    chi2 = sum((counts[c] - expected) ** 2 / expected for c in cards)
    assert chi2 < 80, chi2  # 43 degrees of freedom: p < 0.001 above about 78


def test_the_wilson_interval() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(5, 10)
    assert abs(low - 0.2366) < 1e-3 and abs(high - 0.7634) < 1e-3
    low, high = wilson(10, 10)
    assert abs(low - 0.7225) < 1e-3 and high == 1.0
    low, high = wilson(0, 12)
    assert low == 0.0 and abs(high - 0.2425) < 1e-3


def test_labels_by_drop_and_noise() -> None:
    assert label_of(BLUNDER) == "blunder" and label_of(MISTAKE) == "mistake" and label_of(INACCURACY) == "inaccuracy"
    assert label_of(0.19) == "mistake" and label_of(0.049) is None and label_of(None) is None
    assert label_of(0.5, clear=False) is None
    # paired samples: best won and played lost on most -> clear; a single sample apart -> not
    assert _clear([True] * 8, [False] * 8)
    assert not _clear([True] * 8, [True] * 7 + [False])
    assert not _clear([True, False] * 4, [False, True] * 4)


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_two_deals_that_differ_only_in_unseen_cards_get_the_same_chance(game: str, options: dict[str, Any]) -> None:
    """The estimate reads no hidden card: deal the real deal's unseen cards otherwise and the figures stay."""
    real = get_game(game).deal(21, options)
    cards = hidden_cards(real)
    assert len(cards) > 1
    swapped = [cards[1], cards[0], *cards[2:]]  # the card a draw turns up (the stock's top) stays
    other = with_hidden(real, swapped)
    assert other.key() != real.key() and unseen(other) == unseen(real)
    texts = ["draw"] if game != "teppich" or options else []  # base Teppich has no draw
    first = win_chances_from(real, texts, samples=4, seed=3, budget_s=600).to_dict()
    second = win_chances_from(other, texts, samples=4, seed=3, budget_s=600).to_dict()
    for out in (first, second):
        out.pop("seconds")
    assert first == second
    assert first["positions"][0]["samples"] == 4 and first["positions"][0]["chance"] is not None


@pytest.mark.parametrize(("game", "options", "seed", "moves"), [
    ("faecher", {}, 9, 40), ("teppich", {"waste": True}, 5, 30), ("reloaded", {}, 12, 12)])
def test_a_game_s_chances_are_deterministic_and_filled_position_by_position(
        game: str, options: dict[str, Any], seed: int, moves: int) -> None:
    line = greedy_line(get_game(game).deal(seed, options), moves)
    record = record_of(game, options, seed, [*line, "giveup"])
    seen_updates: list[tuple[int, int]] = []
    samples = 4 if game == "reloaded" else 8
    result = win_chances(record, samples=samples, seed=7, budget_s=600,
                         on_position=lambda p, a: seen_updates.append((p.action, p.samples)))
    again = win_chances(record, samples=samples, seed=7, budget_s=600)
    a, b = result.to_dict(), again.to_dict()
    a.pop("seconds")
    b.pop("seconds")
    assert a == b and result.complete
    n = len(line) + 2  # the deal, each move, the give-up
    assert len(result.positions) == n and len(result.actions) == n - 1
    # every position was reported in the game's order, once a round
    rounds = (samples + 3) // 4
    assert [action for action, _ in seen_updates] == list(range(n)) * rounds
    estimate = estimator(prior_for(game, get_game(game).deal(seed, options).options))
    for p in result.positions[:-1]:
        if p.end is None:
            assert p.samples == samples and p.low <= p.chance <= p.high  # type: ignore[operator]
            # the calibrated estimate (or, with every card seen, the share won: test below)
            assert (p.chance, p.low, p.high) in (estimate(p.won, p.samples), (p.won / p.samples,) * 3)
    last = result.positions[-1]
    assert last.end == "given_up" and last.chance == 0.0
    give_up = result.actions[-1]
    assert give_up.played == "giveup" and give_up.played_chance == 0.0
    assert give_up.drop == give_up.best_chance and give_up.best_action is not None
    for action in result.actions[:-1]:
        assert action.drop is not None and action.drop >= 0
        assert action.best_chance is not None and action.played_chance is not None
        assert action.best_chance >= action.played_chance
        assert action.label == label_of(action.drop) or action.label is None
    summary = result.summary()
    assert summary["deal_chance"] == round(result.positions[0].chance, 4) and summary["result"] == 0.0


def test_a_give_up_on_a_won_deal_is_a_blunder_and_a_won_end_is_certain() -> None:
    line = solve_deal("faecher", 7, None, QUICK).moves
    state = get_game("faecher").deal(7)
    k = 0
    while state.passes_used == 1:  # up to the redeal: from there every card was seen
        state._apply(line[k])
        k += 1
    assert not unseen(state)[0]
    given = win_chances(record_of("faecher", {}, 7, [*line[:k], "giveup"]), samples=8, seed=1, budget_s=600)
    assert given.positions[k].chance == 1.0  # every sample is the real deal, which the solver wins
    assert given.actions[-1].label == "blunder" and given.actions[-1].drop == 1.0
    assert given.complete and given.summary()["lost_by_play"] >= 1.0 and given.summary()["luck"] is not None
    assert given.unjudged == 0 and given.to_dict()["unjudged"] == 0
    # an action the budget left unjudged: a game's luck and play would be sums of a part (here without the
    # give-up's blunder); a budget that ran out in a later round of samples, every action judged, keeps them
    cut = dataclasses.replace(given, complete=False, unjudged=1)
    assert cut.summary()["luck"] is None and cut.summary()["lost_by_play"] is None
    assert cut.summary()["deal_chance"] == given.summary()["deal_chance"]
    later = dataclasses.replace(given, complete=False)
    assert later.summary()["lost_by_play"] == given.summary()["lost_by_play"]
    won = win_chances(record_of("faecher", {}, 7, list(line)), samples=4, seed=1, budget_s=600)
    assert won.positions[-1].end == "won" and won.positions[-1].chance == 1.0
    assert won.outcome == "won" and won.summary()["result"] == 1.0
    assert won.summary()["blunders"] == 0


@pytest.mark.parametrize(("options", "fitted"),
                         [({"waste": True}, True), ({"waste": True, "rows": 5, "cols": 6}, False)])
def test_the_chance_is_the_calibrated_estimate_of_the_samples_won(options: dict[str, Any], fitted: bool) -> None:
    """A fitted variant's positions show the posterior mean of their samples won under its prior (and name
    the prior); a variant never fitted shows the share won and its Wilson interval; a position whose every
    card was seen shows its share won, with no doubt."""
    state = get_game("teppich").deal(5, options)
    result = win_chances(record_of("teppich", options, 5, greedy_line(state, 14)), samples=8, seed=2, budget_s=600)
    prior = prior_for("teppich", state.options)
    assert (prior is not None) is fitted and (result.prior is not None) is fitted
    assert result.to_dict()["prior"] == result.prior
    reals = [state.copy()]
    for action in result.actions:
        reals.append(reals[-1].copy())
        reals[-1]._apply(reals[-1].parse_move(action.played))
    sampled = 0
    for p, real in zip(result.positions, reals, strict=True):
        if p.end is not None:
            continue
        if not unseen(real)[0]:
            assert p.chance == p.low == p.high == p.won / p.samples
        elif prior is not None:
            assert (p.chance, p.low, p.high) == prior.estimate(p.won, p.samples)
            assert p.chance != p.won / p.samples or 0 < p.won < p.samples
            sampled += 1
        else:
            assert (p.chance, p.low, p.high) == (p.won / p.samples, *wilson(p.won, p.samples))
            sampled += 1
    assert sampled >= 5


def test_a_budget_cut_leaves_later_positions_not_decided() -> None:
    line = greedy_line(get_game("reloaded").deal(12), 30)
    record = record_of("reloaded", {}, 12, line)
    cut = win_chances(record, samples=32, seed=1, budget_s=1e-6)
    assert not cut.complete and all(p.chance is None for p in cut.positions)
    assert cut.unjudged == len(line) and cut.summary()["luck"] is None  # not one move judged
    assert cut.to_dict()["positions"][0]["chance"] is None
    with pytest.raises(ValueError, match="budget_s"):
        win_chances(record, budget_s=0)
    with pytest.raises(ValueError, match="samples"):
        win_chances(record, samples=0)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "patience", *args], capture_output=True, text=True, timeout=300)


def test_the_command_gives_the_win_chance_beside_the_verdicts(tmp_path: Path) -> None:
    line = greedy_line(get_game("teppich").deal(5, {"waste": True}), 25)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record_of("teppich", {"waste": True}, 5, [*line, "giveup"])))
    done = run("analyse", str(path), "--json", "--samples", "8", "--chance-seed", "2")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "first_losing_action" in out and "verdict" in out["positions"][0]
    chance = out["win_chance"]
    assert chance["samples"] == 8 and chance["seed"] == 2 and chance["complete"] is True
    assert chance["thresholds"] == {"inaccuracy": INACCURACY, "mistake": MISTAKE, "blunder": BLUNDER}
    first = out["positions"][0]
    assert first["samples"] == 8 and first["low"] <= first["chance"] <= first["high"]
    assert out["positions"][-1]["chance"] == 0.0 and out["positions"][-1]["best_chance"] is not None
    assert {"best_action", "best_chance", "played_chance", "drop", "label", "luck"} <= set(out["positions"][1])
    assert chance["deal_chance"] == first["chance"]
    none = run("analyse", str(path), "--json", "--chance-s", "0")
    assert none.returncode == 0 and "win_chance" not in json.loads(none.stdout)
    text = run("analyse", str(path), "--samples", "4")
    assert text.returncode == 0 and "Win chance with what the player could see: the deal" in text.stdout
    for args, message in ((("--samples", "0"), "--samples must be from 1"),
                          (("--chance-s", "-1"), "--chance-s must be from 0")):
        bad = run("analyse", str(path), *args)
        assert bad.returncode == 2 and message in bad.stderr and not bad.stdout


def test_a_game_the_rules_ended_has_no_chance_left_though_cards_are_unseen() -> None:
    """Solitaire Reloaded ends a game when no move is left that can change anything, no stock card fitting
    anywhere (the rules read the stock; the chance's own test of an end does not, the stock being unseen
    before the first redeal). The last position of such a game is lost, its chance 0 with no sampling,
    though face-down cards are left: samples with another stock would play on."""
    state = get_game("reloaded").deal(34)
    line = []
    while state.outcome() is None:
        move = greedy_move(state)
        assert move is not None
        state._apply(move)
        line.append(move)
    assert state.outcome() == "no_moves" and unseen(state)[0]
    result = win_chances(record_of("reloaded", {}, 34, line), samples=4, seed=1, budget_s=600,
                         positions=[len(line)])
    assert result.outcome == "no_moves"
    last = result.positions[-1]
    assert last.end == "no_moves" and last.chance == 0.0 and last.samples == 0
