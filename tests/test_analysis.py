"""The analysis of a finished game with every card known (``patience analyse``).

Records are made here from the solver's winning line with one losing action put in: a move
after which the solver proves the position unwinnable, found by searching the moves along the
line. The analysis must name exactly that action, in all three games.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import record_of
from patience.duel import Format, Match
from patience.errors import RecordError
from patience.games import Move, get_game
from patience.session import ManualClock
from patience.solve import Budget, Status, solve, solve_deal
from patience.solve.analysis import analyse, analyse_data

QUICK = Budget(seconds=2.0, nodes=300_000, memory_mb=64)
CASES = [("reloaded", {}, 12), ("faecher", {}, 9), ("teppich", {"waste": True}, 5)]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "patience", *args], capture_output=True, text=True, timeout=120)


def losing_game(game: str, options: dict[str, Any], seed: int) -> tuple[list[str | Move], int, list[Move]]:
    """The solver's line of a winnable deal with one losing move put in (the first, from the sixth move on,
    after which the solver proves the position unwinnable), then a few more moves and a give-up.
    Returns the actions, the number of the losing one and the solver's line."""
    line = solve_deal(game, seed, options, QUICK).moves
    assert line, "the deal must be winnable"
    state = get_game(game).deal(seed, options)
    for k, right in enumerate(line):
        if k >= 5:
            for wrong in state.legal_moves():
                if wrong == right:
                    continue
                after = state.copy()
                after._apply(wrong)
                if solve(after, QUICK).status is not Status.UNWINNABLE:
                    continue
                actions: list[str | Move] = [*line[:k], wrong]
                lost = True
                for _ in range(3):  # play on a little: the game stays lost
                    moves = after.legal_moves()
                    if not moves or after.outcome() is not None:
                        break
                    after._apply(moves[0])
                    actions.append(moves[0])
                    # each position on is proved unwinnable too (Der Fächer's solver once called a position
                    # unwinnable from which two fan cards onto a reserve pile and a waste card win)
                    lost = solve(after, QUICK).status is Status.UNWINNABLE
                    if not lost:
                        break
                if lost:
                    if after.outcome() is None:
                        actions.append("giveup")
                    return actions, k + 1, line
        state._apply(right)
    raise AssertionError(f"no losing move found along the line of {game} {seed}")


@pytest.mark.parametrize(("game", "options", "seed"), CASES)
def test_the_first_losing_action_is_the_losing_move_put_into_a_solver_line(
        game: str, options: dict[str, Any], seed: int) -> None:
    actions, losing, line = losing_game(game, options, seed)
    analysis = analyse(record_of(game, options, seed, actions), budget=QUICK, game_seconds=30)
    assert analysis.first_losing_action == losing
    assert analysis.first_losing_range is None and not analysis.never_winnable and analysis.complete
    assert not analysis.conflicts
    verdicts = [p.verdict for p in analysis.positions]
    assert set(verdicts[:losing]) == {"winnable"} and set(verdicts[losing:]) <= {"unwinnable", "given_up"}
    # the better line starts at the position before the losing move, and wins from there
    assert analysis.better_from == losing - 1
    state = get_game(game).deal(seed, options)
    for move in line[:losing - 1]:
        state._apply(move)
    for move in analysis.better_line:
        state.push(move)
    assert state.is_won()
    # few positions were searched: the rest follow from the rules
    assert analysis.searches <= 12


def test_a_won_game_has_no_losing_action_and_needs_no_search() -> None:
    line = solve_deal("faecher", 7, None, QUICK).moves
    analysis = analyse(record_of("faecher", {}, 7, list(line)), budget=QUICK)
    assert analysis.outcome == "won" and analysis.first_losing_action is None and not analysis.never_winnable
    assert analysis.searches == 0 and analysis.positions[-1].verdict == "won"
    assert {p.verdict for p in analysis.positions[:-1]} == {"winnable"}
    assert analysis.to_dict()["first_losing_action"] is None


def _unwinnable_seed(game: str, options: dict[str, Any]) -> int:
    for seed in range(1, 200):
        if solve_deal(game, seed, options, QUICK).status is Status.UNWINNABLE:
            return seed
    raise AssertionError("no unwinnable deal among seeds 1..199")


@pytest.mark.parametrize(("game", "options"), [("reloaded", {}), ("teppich", {})])
def test_a_deal_never_winnable_has_no_losing_action_and_says_so(game: str, options: dict[str, Any]) -> None:
    seed = _unwinnable_seed(game, options)
    state = get_game(game).deal(seed, options)
    actions: list[str | Move] = []
    for _ in range(4):
        moves = state.legal_moves()
        if not moves:
            break
        state._apply(moves[0])
        actions.append(moves[0])
    actions.append("giveup")
    analysis = analyse(record_of(game, options, seed, actions), budget=QUICK)
    assert analysis.never_winnable and analysis.first_losing_action is None and analysis.better_from is None
    assert analysis.searches == 1  # the deal: every later position follows
    assert [p.verdict for p in analysis.positions][:-1] == ["unwinnable"] * len(actions)
    out = analysis.to_dict()
    assert out["never_winnable"] is True and out["first_losing_action"] is None and out["deal"] == "unwinnable"


def test_a_give_up_on_a_winnable_position_is_the_losing_action() -> None:
    line = solve_deal("teppich", 5, {"waste": True}, QUICK).moves
    analysis = analyse(record_of("teppich", {"waste": True}, 5, [*line[:10], "giveup"]), budget=QUICK)
    assert analysis.first_losing_action == 11 and analysis.positions[11].move == "giveup"
    assert analysis.positions[11].verdict == "given_up" and analysis.positions[10].verdict == "winnable"
    assert analysis.better_from == 10 and analysis.better_line == line[10:]
    # base Teppich: no move can lose a deal (the order of play does not matter), a give-up can
    seed = next(s for s in range(1, 200) if solve_deal("teppich", s, None, QUICK).won)
    moves = solve_deal("teppich", seed, None, QUICK).moves
    base = analyse(record_of("teppich", {}, seed, [*moves[:3], "giveup"]), budget=QUICK)
    assert base.first_losing_action == 4


def test_a_losing_move_taken_back_is_a_slip_not_the_losing_action() -> None:
    actions, losing, line = losing_game("reloaded", {}, 12)
    taken_back = [*actions[:losing], "undo", *line[losing - 1:]]  # the loss undone, then the line to the win
    analysis = analyse(record_of("reloaded", {}, 12, taken_back), budget=QUICK)
    assert analysis.outcome == "won" and analysis.first_losing_action is None
    assert analysis.slips == [losing]
    assert analysis.positions[losing].verdict == "unwinnable"
    assert analysis.positions[losing + 1].verdict == "winnable"  # back where it was


def test_the_verdicts_agree_with_a_search_of_each_position() -> None:
    """Verdicts that followed from another position's (a line, later, earlier) agree with a search there."""
    game, options, seed = CASES[0]
    actions, losing, _ = losing_game(game, options, seed)
    analysis = analyse(record_of(game, options, seed, actions), budget=QUICK)
    state = get_game(game).deal(seed, options)
    states = [state.copy()]
    for action in actions:
        if isinstance(action, Move):
            state._apply(action)
        states.append(state.copy())
    inferred = [p for p in analysis.positions if p.by in ("later", "earlier", "line")]
    kinds = {p.by for p in inferred}
    assert {"line", "earlier"} <= kinds
    picked = [inferred[len(inferred) // 2], *(next(p for p in inferred if p.by == kind) for kind in kinds)]
    for p in picked:
        expected = {"winnable": Status.WON, "unwinnable": Status.UNWINNABLE}[p.verdict]
        assert solve(states[p.action], QUICK).status is expected, p
    # and `patience solve` on the position before the losing move
    done = run("solve", game, "--position", str(states[losing - 1]), "--json", "--budget-nodes", "300000")
    assert json.loads(done.stdout)["status"] == "won"


def test_undecided_positions_are_unknown_and_leave_the_losing_action_open() -> None:
    actions, losing, _ = losing_game("reloaded", {}, 12)
    record = record_of("reloaded", {}, 12, actions)
    nothing = analyse(record, budget=Budget(nodes=1, memory_mb=16))
    assert nothing.first_losing_action is None and not nothing.never_winnable and nothing.first_losing_range is None
    assert all(p.verdict in ("unknown", "given_up") for p in nothing.positions)
    assert nothing.to_dict()["deal"] == "unknown"
    # the deal is won within 1,000 positions, the lost positions are not proved so: the losing action lies
    # between the first after the last winnable position and the give-up (if the last move kept it winnable)
    some = analyse(record, budget=Budget(nodes=1_000, memory_mb=16))
    assert some.positions[losing - 1].verdict == "winnable"
    assert {p.verdict for p in some.positions[losing:-1]} == {"unknown"}
    assert some.first_losing_action is None and some.first_losing_range == (losing, len(actions))
    assert some.to_dict()["first_losing_range"] == [losing, len(actions)]
    # a game budget spent: what was not searched is unknown, by the budget
    spent = analyse(record_of("reloaded", {}, 12, actions), budget=QUICK, game_seconds=1e-9)
    assert not spent.complete and spent.searches == 0 and {p.by for p in spent.positions} <= {"budget", "given_up"}


def test_the_command_analyses_a_game_and_both_games_of_a_match(tmp_path: Path) -> None:
    actions, losing, _ = losing_game("faecher", {}, 9)
    path = tmp_path / "lost.json"
    path.write_text(json.dumps(record_of("faecher", {}, 9, actions)))
    done = run("analyse", str(path), "--json", "--budget-s", "10")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["first_losing_action"] == losing and len(out["positions"]) == len(actions) + 1
    assert out["positions"][losing]["verdict"] == "unwinnable" and out["better_line"]["from_action"] == losing - 1
    text = run("analyse", str(path))
    assert text.returncode == 0, text.stderr
    assert f"could no longer be won after action {losing}, {actions[losing - 1]}." in text.stdout
    assert f"0-{losing - 1}  winnable" in text.stdout

    clock = ManualClock(10.0)
    match = Match("m-an", Format("faecher", None, 300), 7, "5e" * 16, clock)
    for move in solve_deal("faecher", 7, None, QUICK).moves:
        clock.advance(0.1)
        match.act(0, str(move))
    match.act(1, "giveup")
    match.finish()
    kind, analyses = analyse_data(match.record(), budget=QUICK)
    assert kind == "match" and [a.first_losing_action for a in analyses] == [None, 1]
    path = tmp_path / "match.json"
    path.write_text(json.dumps(match.record()))
    done = run("analyse", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert [g["first_losing_action"] for g in json.loads(done.stdout)["games"]] == [None, 1]


def test_the_command_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(record_of("faecher", {}, 7, ["giveup"])))
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    wrong = tmp_path / "wrong.json"
    record = record_of("faecher", {}, 7, ["draw", "giveup"])
    record["actions"][0]["m"] = "v1>f"
    wrong.write_text(json.dumps(record))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "something"}))
    clock = ManualClock(10.0)
    going_on = Match("m-on", Format("faecher", None, 300), 7, "5e" * 16, clock)
    secret = tmp_path / "going-on.json"
    secret.write_text(json.dumps(going_on.record()))
    cases = [
        ((str(tmp_path / "missing.json"),), "no such file"),
        ((str(tmp_path),), "not a regular file"),
        ((str(broken),), "not valid JSON"),
        ((str(wrong),), "cannot be played"),
        ((str(other),), "not a game, match or day record"),
        ((str(secret),), "no seed"),
        ((str(good), "--budget-s", "0"), "--budget-s must be more than 0"),
        ((str(good), "--budget-s", "100000"), "at most 3600"),
        ((str(good), "--position-s", "-1"), "--position-s must be more than 0"),
        ((str(good), "--position-nodes", "0"), "--position-nodes must be more than 0"),
    ]
    for args, message in cases:
        done = run("analyse", *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr and done.stderr.count("\n") == 1 and not done.stdout, (args, done.stderr)


def test_a_day_s_deal_is_analysed_game_by_game() -> None:
    from patience.daily import DAILY_FORMAT, daily_commitment, daily_options
    from patience.duel import new_deal_key

    key = new_deal_key()
    options = daily_options("teppich")
    games = [record_of("teppich", options, key, ["giveup"]), record_of("teppich", options, key, [])]
    day = {"format": DAILY_FORMAT, "game": "teppich", "options": options, "seed": key,
           "commitment": daily_commitment("teppich", key), "games": games}
    kind, analyses = analyse_data(day, budget=QUICK)
    assert kind == "daily" and len(analyses) == 2
    assert analyses[0].positions[-1].verdict == "given_up" and analyses[1].outcome is None
    with pytest.raises(RecordError, match="commitment"):
        analyse_data({**day, "commitment": "0" * 64}, budget=QUICK)


def test_a_checked_line_outweighs_an_unwinnable_verdict_and_the_conflict_is_named() -> None:
    """The solver's "unwinnable" rests on its search alone, "winnable" on a line the rules engine played:
    should a position called unwinnable have a winnable child, the child's line decides, and it is listed."""
    from patience.solve.analysis import UNWINNABLE, WINNABLE, _Tree

    tree = _Tree()
    state = get_game("faecher").deal(9)
    root = tree.add(state.copy(), None, None)
    move = state.legal_moves()[0]
    state._apply(move)
    child = tree.add(state.copy(), root, move)
    tree.nodes[root].children[str(move)] = child
    tree.settle(root, UNWINNABLE, "solver", None)
    assert tree.nodes[child].verdict == UNWINNABLE and tree.nodes[child].by == "earlier"
    tree.settle(child, WINNABLE, "solver", [])
    assert [tree.nodes[i].verdict for i in (root, child)] == [WINNABLE, WINNABLE]
    assert tree.nodes[root].line == [move] and sorted(tree.conflicts) == [root, child]
