"""Bad input gets a one-line error that says what is wrong, and changes nothing.

Unknown games and options, values out of range or of the wrong kind, move text that names
no move, moves the rules forbid, and game records or positions that are corrupt, of another
format, tampered with or impossible. The one change a rejected move may make is a rule of
its game: Der Fächer charges a wrong click −50.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import patience.record
from patience.errors import BadInputError, GameOverError, IllegalMoveError, PatienceError, RecordError
from patience.games import Move, State, get_game
from patience.notation import parse_position_text
from patience.record import load_record, replay
from patience.session import ManualClock, Session


def one_line(error: pytest.ExceptionInfo[PatienceError], *words: str) -> str:
    """The error's message: one line, not empty, naming each of ``words``."""
    message = str(error.value)
    assert message.strip() and "\n" not in message, message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    return message


def snapshot(session: Session) -> tuple[Any, ...]:
    """Everything a rejected action must leave alone."""
    return (session.state.key(), session.state.position(), session.score, list(session.ledger),
            list(session.log), session.outcome, session.moves_made, session.undos_left())


# -- games and options -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["chess", "", "teppich2", "klondyke", "  "])
def test_unknown_game(name: str) -> None:
    with pytest.raises(BadInputError) as caught:
        get_game(name)
    one_line(caught, repr(name), "teppich", "reloaded", "faecher")
    with pytest.raises(BadInputError):
        Session(name, 0, clock=ManualClock())


@pytest.mark.parametrize("name", [None, 3, ["teppich"]])
def test_a_game_name_that_is_not_text(name: object) -> None:
    with pytest.raises(BadInputError) as caught:
        get_game(name)  # type: ignore[arg-type]
    one_line(caught, "unknown game")


@pytest.mark.parametrize("name", ["Teppich", "CARPET", "tappeto", "Fächer", "faecher", "klondike",
                                  "Solitaire Reloaded"])
def test_known_names_and_aliases(name: str) -> None:
    assert get_game(name).INFO.id in ("teppich", "faecher", "reloaded")


@pytest.mark.parametrize(("game", "options", "words"), [
    ("teppich", {"colour": "red"}, ["'colour'", "rows", "waste"]),
    ("teppich", ["colour=red"], ["'colour'"]),
    ("reloaded", {"time": 60}, ["'time'", "time_limit"]),
    ("faecher", {"rows": 5}, ["'rows'", "passes"]),
])
def test_unknown_option(game: str, options: Any, words: list[str]) -> None:
    with pytest.raises(BadInputError) as caught:
        get_game(game).deal(0, options)
    one_line(caught, "unknown option", *words)


@pytest.mark.parametrize(("game", "options", "words"), [
    ("teppich", {"rows": 0}, ["rows", "1", "8", "0"]),
    ("teppich", {"rows": 9}, ["rows", "9"]),
    ("teppich", ["cols=100"], ["cols", "100"]),
    ("teppich", {"waste": True, "waste_passes": 0}, ["waste_passes"]),
    ("teppich", {"fill_from": "sky"}, ["fill_from", "waste", "stock", "sky"]),
    ("teppich", {"rows": 8, "cols": 8}, ["8x8", "deck"]),
    ("teppich", {"rows": 7, "cols": 7}, ["7x7"]),
    ("reloaded", {"time_limit": -1}, ["time_limit", "-1"]),
    ("reloaded", {"steps": "some"}, ["steps", "made", "net"]),
    ("reloaded", {"clamp": "never"}, ["clamp"]),
    ("faecher", {"passes": 0}, ["passes"]),
    ("faecher", {"passes": 10}, ["passes", "10"]),
    ("faecher", {"pool_drain": "fast"}, ["pool_drain", "linear"]),
])
def test_option_out_of_range(game: str, options: Any, words: list[str]) -> None:
    with pytest.raises(BadInputError) as caught:
        get_game(game).deal(0, options)
    one_line(caught, *words)


@pytest.mark.parametrize(("game", "options", "words"), [
    ("teppich", {"rows": "four"}, ["rows", "whole number", "'four'"]),
    ("teppich", {"rows": True}, ["rows", "whole number"]),
    ("teppich", {"rows": 4.5}, ["rows", "4.5"]),
    ("teppich", {"rows": None}, ["rows", "None"]),
    ("teppich", {"waste": "maybe"}, ["waste", "yes or no", "'maybe'"]),
    ("teppich", {"waste": 3}, ["waste", "yes or no"]),
    ("teppich", {"fill_from": 5}, ["fill_from"]),
    ("teppich", ["rows"], ["KEY=VALUE", "'rows'"]),
    ("reloaded", ["time_limit=ten"], ["time_limit", "'ten'"]),
    ("faecher", {"pool": [1500]}, ["pool"]),
])
def test_option_of_the_wrong_kind(game: str, options: Any, words: list[str]) -> None:
    with pytest.raises(BadInputError) as caught:
        get_game(game).deal(0, options)
    one_line(caught, *words)


def test_good_options_in_every_form() -> None:
    cls = get_game("teppich")
    forms: list[Any] = [{"rows": 5, "cols": 6}, ["rows=5", "cols=6"], {"rows": "5", "cols": 6.0},
                        {"ROWS": 5, "cols": 6}]
    assert len({str(cls.deal(3, form)) for form in forms}) == 1


# -- moves -----------------------------------------------------------------------------------


MALFORMED = ["", "   ", "!!!", "t3>", ">f", "t1>t2:abc", "t1>t2:0", "t1>t2:99", "zz>f", "x y z", "QX>f", "c0>f"]


@pytest.mark.parametrize("game", ["teppich", "reloaded", "faecher"])
@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_move_text(game: str, text: str) -> None:
    session = Session(game, 5, clock=ManualClock())
    before = snapshot(session)
    with pytest.raises(BadInputError) as caught:
        session.state.parse_move(text)
    message = one_line(caught)
    assert repr(text) in message or "not a move" in message
    with pytest.raises(BadInputError):
        session.play(text)
    # text that names no move is not a wrong click: nothing is charged, nothing is logged
    assert snapshot(session) == before


def test_a_card_that_is_not_face_up_cannot_name_a_place() -> None:
    state = get_game("reloaded").deal(0)
    face_down = next(c for cards in state.piles().values() for c, up in cards if not up)
    with pytest.raises(BadInputError) as caught:
        state.parse_move(f"{face_down.text}>f")
    one_line(caught, face_down.display, "not face up")


def illegal_moves(state: State) -> list[Move]:
    names = [*state.piles(), "f"]
    candidates = [Move(a, b, n) for a in names for b in names for n in (1, 2)]
    return [m for m in candidates if state.check(m) is not None][::7]


@pytest.mark.parametrize("game", ["teppich", "reloaded", "faecher"])
def test_illegal_move_on_a_state(game: str) -> None:
    state = get_game(game).deal(11)
    key, position = state.key(), state.position()
    moves = illegal_moves(state)
    assert len(moves) > 20
    for move in moves:
        with pytest.raises(IllegalMoveError) as caught:
            state.push(move)
        message = one_line(caught, str(move))
        assert caught.value.reason == state.check(move) and caught.value.reason in message
        assert (state.key(), state.position(), state.ply) == (key, position, 0)


@pytest.mark.parametrize("game", ["teppich", "reloaded"])
def test_illegal_move_in_a_session_changes_nothing(game: str) -> None:
    session = Session(game, 11, clock=ManualClock())
    before = snapshot(session)
    for move in illegal_moves(session.state):
        with pytest.raises(IllegalMoveError) as caught:
            session.play(move)
        one_line(caught, "illegal move")
    assert snapshot(session) == before


def test_illegal_move_in_der_faecher_costs_50_and_nothing_else() -> None:
    """RULES.md §3: an attempted illegal move ("wrong click") is −50; the position stays."""
    session = Session("faecher", 11, clock=ManualClock())
    key, position, score = session.state.key(), session.state.position(), session.score
    moves = illegal_moves(session.state)[:5]
    for n, move in enumerate(moves, 1):
        with pytest.raises(IllegalMoveError) as caught:
            session.play(move)
        one_line(caught, str(move))
        assert session.score == score - 50 * n
        assert session.ledger[-1].kind == "illegal" and session.ledger[-1].points == -50
        assert session.log[-1].illegal and session.log[-1].action == str(move)
    assert (session.state.key(), session.state.position(), session.moves_made) == (key, position, 0)


@pytest.mark.parametrize(("game", "move"), [
    ("faecher", Move("v3", "r9")), ("faecher", Move("t1", "f")), ("faecher", Move("w", "v10")),
    ("teppich", Move("c21", "f")), ("teppich", Move("w", "f")), ("reloaded", Move("t3", "t8")),
    ("reloaded", Move("v1", "f")),
])
def test_a_move_naming_a_pile_the_game_lacks_is_bad_input_not_a_wrong_click(game: str, move: Move) -> None:
    """One rule for typed text and moves made as data (the browser's): no pile, no move; nothing
    is charged or logged, so a record never holds an action it cannot replay."""
    session = Session(game, 11, clock=ManualClock())
    before = snapshot(session)
    for attempt in (move, str(move)):
        with pytest.raises(BadInputError) as caught:
            session.play(attempt)
        one_line(caught, "no pile", str(move))
    assert snapshot(session) == before
    assert replay(session.record()).summary() == session.summary()


@pytest.mark.parametrize("game", ["teppich", "reloaded", "faecher"])
def test_undo_with_nothing_to_undo(game: str) -> None:
    session = Session(game, 4, clock=ManualClock())
    before = snapshot(session)
    with pytest.raises(IllegalMoveError) as caught:
        session.undo()
    one_line(caught, "undo")
    assert snapshot(session) == before


@pytest.mark.parametrize("game", ["teppich", "reloaded", "faecher"])
def test_acting_after_the_end(game: str) -> None:
    session = Session(game, 4, clock=ManualClock())
    session.give_up()
    before = snapshot(session)
    for act in (lambda: session.play("draw"), session.give_up, session.undo):
        with pytest.raises(GameOverError) as caught:
            act()
        one_line(caught, "over")
    assert snapshot(session) == before


# -- records ---------------------------------------------------------------------------------


def a_record(game: str = "reloaded", seed: int = 3) -> dict[str, Any]:
    """A finished game with a move, an undo, time passing and a wrong click where it costs."""
    clock = ManualClock()
    session = Session(game, seed, clock=clock)
    for _ in range(4):
        clock.advance(1.25)
        session.play(session.state.legal_moves()[-1])
    clock.advance(3)
    if game == "faecher":
        with pytest.raises(IllegalMoveError):
            session.play(Move("v1", "v2"))
    else:
        session.undo()
    clock.advance(2)
    session.give_up()
    record = session.record()
    assert replay(json.loads(json.dumps(record))).summary() == session.summary()
    return record


def test_corrupt_record_file(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(a_record())[:-10], encoding="utf-8")
    with pytest.raises(RecordError) as caught:
        load_record(path)
    one_line(caught, str(path), "not valid JSON", "line 1")


def test_record_file_that_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_bytes(b"\xff\xfe\x00\x81 binary")
    with pytest.raises(RecordError) as caught:
        load_record(path)
    one_line(caught, str(path))


def test_missing_record_file(tmp_path: Path) -> None:
    with pytest.raises(RecordError) as caught:
        load_record(tmp_path / "nowhere.json")
    one_line(caught, "nowhere.json")


def test_a_good_record_file_loads_and_replays(tmp_path: Path) -> None:
    record = a_record("faecher")
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert replay(load_record(path)).record() == record


def _tamper(record: dict[str, Any], change: str) -> None:
    """Apply one named change to a record (kept as data so test ids say what was changed)."""
    actions = record["actions"]
    changes: dict[str, Any] = {
        "format": lambda: record.update(format="pgn"),
        "no format": lambda: record.pop("format"),
        "version 2": lambda: record.update(version=2),
        "version text": lambda: record.update(version="1"),
        "no version": lambda: record.pop("version"),
        "unknown game": lambda: record.update(game="chess"),
        "bad seed": lambda: record.update(seed=-5),
        "text seed": lambda: record.update(seed="three"),
        "unknown option": lambda: record.update(options={"colour": "red"}),
        "option out of range": lambda: record.update(options={"time_limit": -5}),
        "actions not a list": lambda: record.update(actions="draw"),
        "action not an object": lambda: actions.insert(0, "draw"),
        "action without text": lambda: actions.insert(0, {"t": 0}),
        "negative time": lambda: actions[0].update(t=-1),
        "time as text": lambda: actions[0].update(t="0"),
        "time as bool": lambda: actions[0].update(t=True),
        "unreadable action": lambda: actions.insert(0, {"m": "zz>top", "t": 0}),
        "illegal action": lambda: actions.insert(0, {"m": "fs>t1", "t": 0}),
        "legal action marked illegal": lambda: actions.insert(0, {"m": "draw", "t": 0, "illegal": True}),
        "back in time": lambda: actions[2].update(t=actions[1]["t"] - 1),
        "end before last action": lambda: record["end"].update(t=actions[-2]["t"] - 1),
        "end not an object": lambda: record.update(end="given_up"),
        "end time missing": lambda: record["end"].pop("t"),
        "no giveup but an end": lambda: actions.pop(),
        "unknown outcome and no end": lambda: (actions.pop(), record["end"].update(outcome="exploded")),
        "end says won": lambda: record["end"].update(outcome="won"),
        "end later than the end": lambda: record["end"].update(t=record["end"]["t"] + 5000),
        "tampered score": lambda: record["result"].update(score=record["result"]["score"] + 100),
        "tampered moves": lambda: record["result"].update(moves=1),
        "tampered outcome": lambda: record["result"].update(outcome="won"),
        "tampered time": lambda: record["result"].update(ms=1),
        "tampered foundations": lambda: record["result"].update(foundation_cards=52),
        "result not an object": lambda: record.update(result=[1]),
    }
    changes[change]()


TAMPERED = {
    "format": ["format", "patience-record"],
    "no format": ["format"],
    "version 2": ["version 2", "reads 1"],
    "version text": ["version '1'"],
    "no version": ["version None"],
    "unknown game": ["'chess'"],
    "bad seed": ["seed -5"],
    "text seed": ["'three'"],
    "unknown option": ["'colour'"],
    "option out of range": ["time_limit"],
    "actions not a list": ["'actions'"],
    "action not an object": ["action 1", "object"],
    "action without text": ["action 1", "'m'"],
    "negative time": ["action 1", "time", "-1"],
    "time as text": ["action 1", "time", "'0'"],
    "time as bool": ["action 1", "time", "True"],
    "unreadable action": ["action 1", "zz>top", "cannot be played"],
    "illegal action": ["action 1", "fs>t1", "cannot be played", "illegal move"],
    "legal action marked illegal": ["action 1", "marked illegal"],
    "back in time": ["action 3", "back in time"],
    "end before last action": ["ends before its last action"],
    "end not an object": ["'end'"],
    "end time missing": ["end time", "None"],
    "no giveup but an end": ["has not ended", "given_up"],
    "unknown outcome and no end": ["unknown outcome", "'exploded'"],
    "end says won": ["won"],
    "end later than the end": ["ms"],
    "tampered score": ["replaying gives", "the record says"],
    "tampered moves": ["replaying gives"],
    "tampered outcome": ["replaying gives", "won"],
    "tampered time": ["replaying gives"],
    "tampered foundations": ["replaying gives", "52"],
    "result not an object": ["replaying gives", "[1]"],
}


@pytest.mark.parametrize("change", list(TAMPERED))
def test_a_bad_record_is_refused(change: str) -> None:
    record = a_record()
    _tamper(record, change)
    with pytest.raises(RecordError) as caught:
        replay(json.loads(json.dumps(record)))
    one_line(caught, *TAMPERED[change])


@pytest.mark.parametrize("record", [[1, 2], "record", None, 7], ids=repr)
def test_a_record_that_is_not_an_object(record: object) -> None:
    with pytest.raises(RecordError) as caught:
        replay(record)  # type: ignore[arg-type]
    one_line(caught, "JSON object")


def test_a_wrong_click_that_names_no_move_is_not_a_record_action() -> None:
    record = a_record("faecher")
    record["actions"].insert(0, {"m": "hello", "t": 0, "illegal": True})
    with pytest.raises(RecordError) as caught:
        replay(record)
    one_line(caught, "action 1", "hello")


# -- positions -------------------------------------------------------------------------------


def _position(game: str = "faecher") -> dict[str, Any]:
    return json.loads(json.dumps(get_game(game).deal(8).position()))


def _move_card(position: dict[str, Any], card: str, pile: str) -> None:
    """Take ``card`` (either case) from wherever it lies and put it on top of ``pile``."""
    for cards in position["piles"].values():
        for text in cards:
            if text.lower() == card.lower():
                cards.remove(text)
                position["piles"][pile].append(card.upper())
                return
    raise AssertionError(card)


@pytest.mark.parametrize("game", ["teppich", "reloaded", "faecher"])
def test_position_with_a_duplicated_card(game: str) -> None:
    position = _position(game)
    piles = position["piles"]
    piles["s"].pop()
    piles["s"].append(piles["s"][0])
    with pytest.raises(BadInputError) as caught:
        get_game(game).from_position(position)
    one_line(caught, "twice", piles["s"][0].upper())


@pytest.mark.parametrize("game", ["teppich", "reloaded", "faecher"])
def test_position_with_a_missing_card(game: str) -> None:
    position = _position(game)
    position["piles"]["s"].pop()
    with pytest.raises(BadInputError) as caught:
        get_game(game).from_position(position)
    one_line(caught, "52", "51")


@pytest.mark.parametrize(("game", "change", "words"), [
    ("teppich", lambda p: p["piles"].pop("c3"), ["missing", "c3"]),
    ("teppich", lambda p: p["piles"].update(t1=[]), ["unknown", "t1"]),
    ("teppich", lambda p: p["piles"]["c1"].append(p["piles"]["s"].pop()), ["c1", "one card"]),
    ("teppich", lambda p: p["piles"]["c1"].__setitem__(0, "ZZ"), ["'ZZ'"]),
    ("teppich", lambda p: p["piles"]["c1"].__setitem__(0, 7), ["c1", "7"]),
    ("teppich", lambda p: p.update(piles=[]), ["piles"]),
    ("teppich", lambda p: p.update(options={"rows": 0}), ["rows"]),
    ("reloaded", lambda p: _move_card(p, "2s", "fs"), ["fs", "AS"]),
    ("reloaded", lambda p: p["piles"]["t3"].__setitem__(-1, p["piles"]["t3"][-1].lower()), ["t3", "face up"]),
    ("reloaded", lambda p: p["piles"]["t4"].__setitem__(0, p["piles"]["t4"][0].upper()), ["t4", "face-down"]),
    ("reloaded", lambda p: p.update(counters={"passes": 0}), ["passes"]),
    ("faecher", lambda p: p["piles"]["fs"].clear() or p["piles"]["s"].append("2s"), ["2s", "foundations"]),
    ("faecher", lambda p: p["piles"]["r1"].append(p["piles"]["v1"].pop()), ["r1", "in suit"]),
    ("faecher", lambda p: p.update(counters={"passes": 7}), ["passes"]),
])
def test_impossible_position(game: str, change: Any, words: list[str]) -> None:
    position = _position(game)
    change(position)
    with pytest.raises(BadInputError) as caught:
        get_game(game).from_position(position)
    one_line(caught, *words)


@pytest.mark.parametrize(("text", "words"), [
    ("teppich fs:AS", ["GAME"]),
    ("| fs:AS", ["GAME"]),
    ("teppich rows | fs:AS", ["'rows'"]),
    ("teppich | fs:AS passes=x", ["passes", "'x'"]),
    ("teppich | fs:AS what", ["'what'"]),
])
def test_unreadable_position_text(text: str, words: list[str]) -> None:
    with pytest.raises(BadInputError) as caught:
        parse_position_text(text)
    one_line(caught, *words)


def test_the_record_example_in_the_record_module_replays() -> None:
    """The example in :mod:`patience.record`'s docstring is a real record, wrong click included."""
    doc = patience.record.__doc__ or ""
    text = doc[doc.index("{"):doc.index("\n    }\n") + 6]
    example = json.loads(re.sub(r"#.*", "", text))
    session = replay(example)
    assert session.record() == example
    assert any(action.get("illegal") for action in example["actions"])


def test_a_record_may_mark_rejected_moves_only_in_a_game_that_charges_for_them() -> None:
    """Teppich and Solitaire Reloaded keep no rejected moves; a record that has one is not theirs."""
    session = Session("reloaded", 1, clock=ManualClock())
    session.play("draw")
    record = session.record()
    record["actions"].insert(0, {"m": "t1>t2", "t": 0, "illegal": True})
    with pytest.raises(RecordError, match="marked illegal, but reloaded keeps no rejected moves"):
        replay(record)
