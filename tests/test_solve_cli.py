"""The ``solve`` and ``winnable`` commands, hints, and the shipped lists of winnable seeds."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from patience.errors import BadInputError, PatienceError
from patience.games import Move, Reloaded, get_game
from patience.record import replay
from patience.session import ManualClock, Session
from patience.solve import Budget, HintsOffError, Status, hint, solve, solve_deal, winnable
from patience.solve.hints import visible_deals


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "patience", *args], capture_output=True, text=True, timeout=120)


# -- solve ---------------------------------------------------------------------------------------


def test_solve_a_deal_as_json_gives_a_record_that_replays(tmp_path: Path) -> None:
    saved = tmp_path / "won.json"
    done = run("solve", "faecher", "--seed", "7", "--json", "--save", str(saved))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["status"] == "won" and out["moves"]
    for key in ("nodes", "seconds", "memory_mb", "reason", "position"):
        assert key in out
    session = replay(out["record"])
    assert session.outcome is not None and session.outcome.value == "won"
    assert json.loads(saved.read_text())["actions"] == out["record"]["actions"]


def test_solve_text_output_and_variants() -> None:
    done = run("solve", "teppich", "--variant", "5x6", "--seed", "3")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith(("won in", "unwinnable:"))


def test_solve_unknown_reports_the_budget() -> None:
    done = run("solve", "reloaded", "--seed", "12", "--budget-nodes", "30", "--json")
    out = json.loads(done.stdout)
    assert out["status"] == "unknown" and out["reason"] == "nodes" and out["nodes"] == 30
    text = run("solve", "reloaded", "--seed", "12", "--budget-nodes", "30")
    assert text.stdout.startswith("unknown: the nodes budget ran out")


def test_solve_a_position_text() -> None:
    state = get_game("faecher").deal(5)
    done = run("solve", "faecher", "--position", str(state), "--json")
    out = json.loads(done.stdout)
    assert out["status"] == "won" and out["seed"] is None and "record" not in out
    s = get_game("faecher").deal(5)
    for text in out["moves"]:
        s.push(s.parse_move(text))
    assert s.is_won()


def test_solve_continues_a_record(tmp_path: Path) -> None:
    session = Session("teppich", 6, {"waste": True}, clock=ManualClock())
    first = solve(session, Budget(seconds=None, nodes=100_000))
    assert first.status is Status.WON
    clock = session._clock
    assert isinstance(clock, ManualClock)
    for move in first.moves[:10]:
        clock.advance(1.5)
        session.play(move)
    path = tmp_path / "half.json"
    path.write_text(json.dumps(session.record()))
    done = run("solve", "teppich", "--record", str(path), "--json")
    out = json.loads(done.stdout)
    assert out["status"] == "won"
    record = out["record"]
    assert record["actions"][:10] == session.record()["actions"]
    assert replay(record).outcome.value == "won"


@pytest.mark.parametrize("args", [
    ["solve", "faecher"],  # no deal named
    ["solve", "faecher", "--seed", "1", "--budget-s", "0"],
    ["solve", "reloaded", "--position", "faecher | nonsense"],
    ["study", "teppich", "--deals", "0"],
    ["study", "teppich", "--deals", "5", "--players", "robot"],
    ["study", "teppich", "--deals", "5", "--seed", "900001"],  # the seeds of a study: --first-seed
])
def test_bad_input_is_refused_with_a_message(args: list[str]) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert done.stderr.startswith("patience: ")


# -- hints ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "options"), [("teppich", {}), ("teppich", {"waste": True}), ("faecher", {}),
                                               ("reloaded", {})])
def test_hints_are_legal_moves(game: str, options: dict[str, object]) -> None:
    session = Session(game, 2, options, clock=ManualClock())
    for _ in range(8):
        if session.is_over:
            break
        move = hint(session, budget_s=0.3)
        assert move is not None
        assert session.state.check(move) is None
        session.play(move)


def test_faecher_hints_follow_the_solution() -> None:
    session = Session("faecher", 9, clock=ManualClock())
    line = solve(session.state, Budget(seconds=None, nodes=100_000))
    assert line.status is Status.WON
    while not session.is_over:
        move = hint(session, budget_s=2.0)
        assert move is not None
        session.play(move)
    assert session.outcome is not None and session.outcome.value == "won"


def test_hints_are_off_in_duels() -> None:
    session = Session("reloaded", 1, clock=ManualClock())
    with pytest.raises(HintsOffError):
        hint(session, duel=True)
    assert issubclass(HintsOffError, PatienceError)


def test_no_hint_when_the_game_is_over() -> None:
    solution = solve_deal("faecher", 2, None, Budget(seconds=None, nodes=50_000))
    session = solution.session()
    assert session.state.is_won()
    assert hint(session) is None


def test_reloaded_hint_uses_only_what_the_player_sees() -> None:
    state = Reloaded.deal(31)
    others = visible_deals(state, 3, random.Random(1))
    assert all(other.view() == state.view() for other in others)
    assert any(str(other) != str(state) for other in others)
    first = hint(state, budget_s=60.0)
    for other in others:
        assert hint(other, budget_s=60.0) == first


def test_reloaded_hint_plays_a_safe_card_up() -> None:
    state = Reloaded.deal(1)
    move = hint(state, budget_s=1.0)
    assert isinstance(move, Move)
    assert state.check(move) is None


# -- winnable seeds ------------------------------------------------------------------------------


def test_shipped_lists_fit_the_deals_and_hold_winnable_seeds() -> None:
    data = json.loads(winnable.default_path().read_text())
    assert data["lists"], "no list is shipped"
    rng = random.Random(3)
    for key, raw in data["lists"].items():
        entry = winnable.entry(raw["game"], raw["options"])
        assert entry.key == key and entry.seeds
        assert all(1 <= s <= entry.checked for s in entry.seeds)
        for seed in rng.sample(entry.seeds, min(2, len(entry.seeds))):
            solution = solve_deal(raw["game"], seed, raw["options"], Budget(seconds=30))
            assert solution.status is Status.WON, (key, seed)


def test_pick_extend_and_refuse(tmp_path: Path) -> None:
    path = tmp_path / "lists.json"
    with pytest.raises(BadInputError):
        winnable.pick("teppich", {"rows": 5, "cols": 6}, path=path)
    added = winnable.extend("teppich", {"rows": 5, "cols": 6}, 4, path=path, progress=None, workers=1)
    assert len(added) == 4
    entry = winnable.entry("teppich", {"rows": 5, "cols": 6}, path)
    assert entry.seeds == added and entry.checked == added[-1]
    # scores and clocks do not change a variant
    assert winnable.variant_key("faecher", {"time_limit": 60}) == "faecher"
    assert winnable.pick("teppich", {"rows": 5, "cols": 6}, path=path, rng=random.Random(1)) in added
    more = winnable.extend("teppich", {"rows": 5, "cols": 6}, 2, path=path, progress=None, workers=1)
    assert min(more) > max(added)
    # a list made for other deals is refused
    data = json.loads(path.read_text())
    data["lists"]["teppich cols=6 rows=5"]["deal_check"] = "0" * 16
    path.write_text(json.dumps(data))
    with pytest.raises(BadInputError, match="other deals"):
        winnable.pick("teppich", {"rows": 5, "cols": 6}, path=path)


def test_winnable_command(tmp_path: Path) -> None:
    path = tmp_path / "lists.json"
    done = run("winnable", "teppich", "--variant", "5x6", "--file", str(path), "--extend", "3", "--json",
               "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["added"]) == 3
    picked = run("winnable", "teppich", "--variant", "5x6", "--file", str(path), "--pick")
    assert int(picked.stdout) in json.loads(done.stdout)["added"]
    listed = run("winnable", "faecher")
    assert listed.returncode == 0 and "winnable among seeds" in listed.stdout


def test_the_server_and_terminal_hint_is_the_solvers() -> None:
    import patience.solve
    import patience.solve.hints  # importing the module must not hide the function
    from patience.server.solo.hints import hint as server_hint

    assert callable(patience.solve.hint)
    session = Session("faecher", 9, clock=ManualClock())
    assert server_hint(session) == hint(session)


def test_play_deals_a_winnable_seed_when_asked() -> None:
    done = subprocess.run([sys.executable, "-m", "patience", "play", "faecher", "--winnable", "--no-colour"],
                          input="quit\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seed = int(done.stdout.split("game ", 1)[1].split()[0])
    assert seed in winnable.seeds("faecher", {})
    both = run("play", "faecher", "--winnable", "--seed", "3")
    assert both.returncode == 2 and "not both" in both.stderr


def test_a_line_is_checked_by_the_rules_engine_before_it_is_reported() -> None:
    from patience.solve.solution import SolverError, _check_line

    state = get_game("faecher").deal(7)
    line = solve(state, Budget(seconds=None, nodes=100_000)).moves
    _check_line(state, line)
    with pytest.raises(SolverError, match="does not end in a won game"):
        _check_line(state, line[:-1])
    with pytest.raises(SolverError, match="is illegal"):
        _check_line(state, [Move("f", "v1"), *line])
