"""The ``patience`` command: terminal play of whole games, deal, replay, games, and bad input."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from patience.cli import main
from patience.cli.board import Painter
from patience.cli.play import play_loop
from patience.games import get_game
from patience.record import load_record, replay
from patience.session import ManualClock, Session


def run_cli(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "patience", *args], input=stdin, capture_output=True,
                          text=True, timeout=timeout, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def refusals(text: str) -> list[str]:
    """The lines of terminal output that refuse a command (after the prompt)."""
    return [line[line.index("✗"):] for line in text.splitlines() if "✗" in line]


def simple_player(game: str, seed: int, options: dict[str, object]) -> tuple[list[str], bool]:
    """Moves that play the deal to its end, foundation moves first, and whether they win it."""
    state = get_game(game).deal(seed, options)
    moves = []
    while (legal := state.useful_moves()) and len(moves) < 400:
        move = next((m for m in legal if m.dst == "f"), legal[0])
        state.push(move)
        moves.append(str(move))
    return moves, state.is_won()


def test_play_a_whole_carpet_game_in_the_terminal_to_a_win() -> None:
    # the first 5 x 6 deal that the simple player wins (more than half of them are won)
    options: dict[str, object] = {"rows": 5, "cols": 6}
    seed = next((seed for seed in range(1000) if simple_player("teppich", seed, options)[1]), None)
    assert seed is not None, "no 5 x 6 deal in 0..999 is won"
    moves, _ = simple_player("teppich", seed, options)
    result = run_cli("play", "carpet", "--seed", str(seed), "--variant", "5x6", stdin="\n".join(moves) + "\n")
    assert result.returncode == 0, result.stderr
    assert "Won! Score 52" in result.stdout
    assert "Foundations" in result.stdout and "K♠" in result.stdout


def test_play_draws_each_game_with_suit_symbols_and_its_piles() -> None:
    for game, marks in (("teppich", ["c20", "stock s[28]"]), ("reloaded", ["t7", "stock s[24]"]),
                        ("faecher", ["v9", "r4", "talon s[35] pass 1 of 2"])):
        result = run_cli("play", game, "--seed", "5", stdin="quit\n")
        assert result.returncode == 0, result.stderr
        assert any(sym in result.stdout for sym in "♠♥♦♣")
        for mark in marks:
            assert mark in result.stdout
        assert "Given up." in result.stdout


def test_play_rejects_bad_input_with_a_clear_line_and_goes_on() -> None:
    out = io.StringIO()
    session = Session("reloaded", 7, clock=ManualClock())
    before = session.state.key()
    play_loop(session, io.StringIO("zz>qq\nt1>t1\nfoo bar baz\nundo\nquit\n"), out, colour=False)
    text = out.getvalue()
    assert "✗ no pile 'zz'" in text
    assert "✗ illegal move t1>t1: a card cannot move onto its own pile" in text
    assert "✗ not a move" in text
    assert "✗ illegal move undo: there is no move to undo" in text
    assert session.state.key() == before
    assert session.outcome is not None and session.outcome.value == "given_up"


def test_play_shows_the_faecher_charge_for_an_illegal_move() -> None:
    out = io.StringIO()
    session = Session("faecher", 3, clock=ManualClock())
    play_loop(session, io.StringIO("v1>v2\nscore\nquit\n"), out, colour=False)
    text = out.getvalue()
    assert "cards never go back to the fan (-50)" in text
    assert "illegal move v1>v2" in text


def test_play_charges_only_the_attempt_that_cost_points() -> None:
    """A refused undo in Der Fächer is free: its line does not repeat the wrong click's (-50)."""
    out = io.StringIO()
    session = Session("faecher", 3, clock=ManualClock())
    play_loop(session, io.StringIO("v1>v2\nundo\nv3>r9\nquit\n"), out, colour=False)
    lines = refusals(out.getvalue())
    assert len(lines) == 3 and lines[0].endswith("(-50)"), lines
    assert "undo" in lines[1] and "(-50)" not in lines[1]
    assert "no pile 'r9'" in lines[2] and "(-50)" not in lines[2]  # a pile the game lacks: bad input, free
    assert [e.kind for e in session.ledger].count("illegal") == 1


def test_play_a_save_that_cannot_be_written_is_reported_and_the_game_goes_on(tmp_path: Path) -> None:
    out = io.StringIO()
    session = Session("reloaded", 7, clock=ManualClock())
    target = tmp_path / "game.json"
    script = f"save {tmp_path / 'no' / 'such' / 'dir.json'}\ndraw\nsave {target}\nquit\n"
    assert play_loop(session, io.StringIO(script), out, colour=False) == 0
    assert "✗ cannot write" in out.getvalue()
    assert load_record(target)["actions"] == [{"m": "draw", "t": 0}]


def test_play_input_that_is_not_utf8_is_not_a_move() -> None:
    """With strict decoding asked for (PYTHONIOENCODING=utf-8) stray bytes are still only bad input."""
    result = subprocess.run([sys.executable, "-m", "patience", "play", "teppich", "--seed", "1"],
                            input=b"\xff\xfe\x81\nquit\n", capture_output=True, timeout=60,
                            env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"})
    assert result.returncode == 0, result.stderr.decode()
    assert b"Traceback" not in result.stderr
    assert "✗ not a move" in result.stdout.decode() and "Given up." in result.stdout.decode()


def test_play_a_flood_of_text_is_not_echoed_back_whole() -> None:
    out = io.StringIO()
    session = Session("faecher", 3, clock=ManualClock())
    play_loop(session, io.StringIO("x" * 100_000 + "\n" + "v1>" + "r" * 100_000 + "\nquit\n"), out, colour=False)
    lines = refusals(out.getvalue())
    assert len(lines) == 2 and all(len(line) < 200 and "…" in line for line in lines), [x[:80] for x in lines]
    assert lines[0].startswith("✗ not a move: 'xxxx")
    assert session.score == 1500 and not session.log[:-1]  # neither attempt cost or was logged


def test_play_commands_help_moves_score_undo_save(tmp_path: Path) -> None:
    out = io.StringIO()
    session = Session("reloaded", 7, clock=ManualClock())
    target = tmp_path / "game.json"
    script = f"help\nmoves\ndraw\nundo\nscore\nhint\nboard\nsave {target}\nquit\n"
    play_loop(session, io.StringIO(script), out, colour=False)
    text = out.getvalue()
    assert "redeal" in text and "undo       take back" in text
    assert "undone: draw" in text
    assert "undo of draw" in text  # the ledger line of the −1
    assert "undos left 0" in text  # one move, one undo: nothing more to undo
    assert "try " in text
    assert load_record(target)["actions"][:2] == [{"m": "draw", "t": 0}, {"m": "undo", "t": 0}]


def test_play_end_of_input_gives_up_and_prints_the_breakdown() -> None:
    out = io.StringIO()
    session = Session("faecher", 11, clock=ManualClock())
    assert play_loop(session, io.StringIO(""), out, colour=False) == 0
    assert "Given up. Score 1500" in out.getvalue()  # the whole pool: no time has passed
    assert "what is left of the pool" in out.getvalue()


def test_colour_is_used_only_when_asked() -> None:
    out = io.StringIO()
    play_loop(Session("teppich", 1, clock=ManualClock()), io.StringIO("quit\n"), out, colour=True)
    assert "\x1b[31m" in out.getvalue()
    out = io.StringIO()
    play_loop(Session("teppich", 1, clock=ManualClock()), io.StringIO("quit\n"), out, colour=False)
    assert "\x1b[" not in out.getvalue()


def test_deal_prints_every_card_face_down_ones_too() -> None:
    result = run_cli("deal", "klondike", "--seed", "7", "--json")
    assert result.returncode == 0, result.stderr
    position = json.loads(result.stdout)
    cards = [c for pile in position["piles"].values() for c in pile]
    assert len(cards) == 52 and len({c.upper() for c in cards}) == 52
    assert position == get_game("reloaded").deal(7).position()
    text = run_cli("deal", "fächer", "--seed", "7").stdout.strip()
    assert text == str(get_game("faecher").deal(7))


def test_replay_checks_and_reports_a_record(tmp_path: Path) -> None:
    session = Session("teppich", 2, {"waste": True}, clock=ManualClock())
    for move in simple_player("teppich", 2, {"waste": True})[0]:
        session.play(move)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(session.record()))
    result = run_cli("replay", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["result"] == session.summary()
    assert "replays exactly" in run_cli("replay", str(path)).stdout
    tampered = session.record()
    tampered["result"]["score"] += 1
    path.write_text(json.dumps(tampered))
    bad = run_cli("replay", str(path))
    assert bad.returncode == 2
    assert bad.stderr.startswith("patience: record: replaying gives")
    assert bad.stderr.count("\n") == 1
    assert replay(session.record()).summary() == session.summary()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "chess"], "unknown game 'chess'"),
        (["deal", "teppich", "--seed", "x1"], "a seed is a whole number"),
        (["deal", "teppich", "--seed", "-4"], "seed -4 is out of range"),
        (["deal", "teppich", "--seed", "1", "-o", "rows=0"], "option rows must be from 1 to 8"),
        (["deal", "teppich", "--seed", "1", "-o", "colour=red"], "unknown option 'colour'"),
        (["deal", "teppich", "--seed", "1", "-o", "rows"], "an option is written KEY=VALUE"),
        (["deal", "teppich", "--seed", "1", "--variant", "9x9"], "teppich has no variant '9x9'"),
        (["deal", "teppich", "--seed", "1", "-o", "rows=8", "-o", "cols=8"], "needs more cards than the deck has"),
        (["replay", "/nonexistent/game.json"], "cannot read /nonexistent/game.json"),
    ],
)
def test_bad_arguments_get_one_line_and_exit_code_2(args: list[str], message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_games_lists_every_game_variant_and_option() -> None:
    data = json.loads(run_cli("games", "--json").stdout)
    assert set(data) == {"teppich", "reloaded", "faecher"}
    assert "5x6" in data["teppich"]["variants"]
    assert {o["name"] for o in data["reloaded"]["options"]} >= {"time_limit", "undo_limit", "clamp"}
    text = run_cli("games").stdout
    assert "fill_from=waste" in text and "pool_drain=linear" in text


def test_aliases_a_user_would_try() -> None:
    for alias, gid in (("carpet", "teppich"), ("Tappeto", "teppich"), ("KLONDIKE", "reloaded"),
                       ("Solitaire Reloaded", "reloaded"), ("fächer", "faecher"), ("Der Fächer", "faecher"),
                       ("fan", "faecher"), ("facher", "faecher")):
        assert get_game(alias).INFO.id == gid


def _serve_fails(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "patience", "serve", *args], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2, done
    assert done.stdout == ""  # no "Patience Arena: http://…" before the error
    assert done.stderr.startswith("patience: ") and done.stderr.count("\n") == 1, done.stderr
    return done


def test_serve_on_a_port_in_use_is_one_line_with_the_fix(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        err = _serve_fails("--port", str(port), "--data-dir", str(tmp_path / "data")).stderr
    assert f"cannot listen on 127.0.0.1 port {port}" in err and "--port" in err


@pytest.mark.parametrize("where", ["a file", "inside a file"])
def test_serve_with_a_data_folder_that_cannot_be_written_is_one_line_with_the_fix(where: str,
                                                                                  tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("not a folder\n", encoding="utf-8")
    data_dir = tmp_path / "taken" if where == "a file" else tmp_path / "taken" / "data"
    err = _serve_fails("--data-dir", str(data_dir), "--port", "0").stderr
    assert f"cannot write the data folder {data_dir}" in err and "--data-dir" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("env", "coloured"), [
    ({"TERM": "xterm-256color"}, True),
    ({"TERM": "xterm-256color", "NO_COLOR": "1"}, False),
    ({"TERM": "dumb"}, False),
])
def test_terminal_play_is_coloured_where_the_terminal_has_colour(env: dict[str, str], coloured: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert Painter.for_stream(_Terminal()).colour is coloured
    assert Painter.for_stream(io.StringIO()).colour is False  # a pipe or a file: plain text
    assert ("\x1b[31m" in Painter.for_stream(_Terminal()).card("QH")) is coloured


@pytest.mark.parametrize("args", [["replay", "{fifo}"], ["solve", "reloaded", "--record", "{fifo}"],
                                  ["winnable", "reloaded", "--file", "{fifo}"],
                                  ["restore", "{fifo}", "--data-dir", "{new}"],
                                  ["restore", "{fifo}", "--database-url", "postgresql://nobody@127.0.0.1:1/x"],
                                  ["solve", "reloaded", "--seed", "1", "--save", "{fifo}"]])
def test_a_fifo_is_refused_at_once_not_waited_on(args: list[str], tmp_path: Path) -> None:
    """A FIFO (or any file that is not a regular one) given to a command that reads or writes a file is refused in
    one line at once: reading one with no writer would wait for ever."""
    fifo = tmp_path / "record.json"
    os.mkfifo(fifo)
    try:
        done = run_cli(*(a.format(fifo=fifo, new=tmp_path / "new") for a in args), timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"patience {' '.join(args)} waited on a FIFO")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "regular file" in done.stderr and str(fifo) in done.stderr, done.stderr
    assert not (tmp_path / "new").exists()
