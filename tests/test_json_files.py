"""Every JSON file a command reads (a record for ``replay`` and ``solve --record``, a list of seeds for
``winnable --file``) is read within documented bounds and checked field by field: whatever the file
holds, a bad one ends the command with exactly one line, ``patience: ...``, on stderr, nothing on
stdout, and exit code 2 (never a traceback, never all the memory)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from patience.cli import main
from patience.errors import BadInputError, RecordError
from patience.record import MAX_DEPTH, MAX_DIGITS, MAX_FILE_BYTES, read_json_file
from patience.session import ManualClock, Session

COMMANDS = {
    "replay": ["replay", "{file}"],
    "solve --record": ["solve", "reloaded", "--record", "{file}", "--budget-nodes", "1000"],
    "winnable --file": ["winnable", "reloaded", "--file", "{file}"],
    "analyse": ["analyse", "{file}", "--position-nodes", "1000"],
}


def a_record() -> dict[str, Any]:
    clock = ManualClock()
    session = Session("reloaded", 5, clock=clock)
    clock.advance(2)
    session.play("draw")
    clock.advance(1)
    session.give_up()
    return session.record()


def refused(capsys: pytest.CaptureFixture[str], args: list[str], *words: str) -> str:
    """Run the command: exit code 2, one line on stderr naming ``words``, nothing on stdout."""
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("patience: ") and err.endswith("\n") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    return err


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "file.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- what the reader refuses, in every command that reads a JSON file ---------------------------------

NESTED = "[" * 1000 + "]" * 1000  # 2 KB, deeper than Python's JSON reader's recursion
HUGE_NUMBER = '{"format": "patience-record", "version": 1, "seed": ' + "9" * 5000 + "}"


def _duplicate() -> str:
    return json.dumps(a_record())[:-1] + ', "game": "teppich"}'


BAD_FILES: dict[str, tuple[Any, tuple[str, ...]]] = {
    "1,000 levels of nesting": (lambda: NESTED, (f"nested more than {MAX_DEPTH} deep",)),
    "nesting in a string does not count, outside it does": (
        lambda: '{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[", "b": ' + "[" * 17 + "]" * 17 + "}", ("nested",)),
    "an integer of 5,000 digits": (lambda: HUGE_NUMBER, (f"more than {MAX_DIGITS} digits",)),
    "an integer of 41 digits": (lambda: '{"seed": -' + "1" * 41 + "}", (f"more than {MAX_DIGITS} digits",)),
    "a number too large for a float": (lambda: '{"seed": 1e400}', ("too large",)),
    "NaN": (lambda: '{"seed": NaN}', ("NaN is not JSON",)),
    "Infinity": (lambda: '{"seed": -Infinity}', ("-Infinity is not JSON",)),
    "a key twice": (_duplicate, ("'game' appears twice",)),
    "a key twice, deeper down": (lambda: '{"lists": {"x": {"seeds": [], "seeds": [1]}}}', ("'seeds' appears twice",)),
    "not JSON": (lambda: '{"format": ', ("not valid JSON", "line 1")),
    "not text": (lambda: b"\xff\xfe\x00\x81", ("not a text file",)),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", list(BAD_FILES))
def test_a_bad_json_file_is_one_line(case: str, command: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    make, words = BAD_FILES[case]
    path = write(tmp_path, make())
    refused(capsys, [a.format(file=path) for a in COMMANDS[command]], str(path), *words)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_file_larger_than_the_limit_is_refused_unread(command: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # spaces, then a good record: JSON, but one byte more than a command reads
    record = json.dumps(a_record())
    path = write(tmp_path, " " * (MAX_FILE_BYTES + 1 - len(record)) + record)
    assert path.stat().st_size == MAX_FILE_BYTES + 1
    refused(capsys, [a.format(file=path) for a in COMMANDS[command]], str(path), "larger than 16 MiB")


def test_a_record_of_exactly_the_limit_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = json.dumps(a_record())
    path = write(tmp_path, " " * (MAX_FILE_BYTES - len(record)) + record)
    assert path.stat().st_size == MAX_FILE_BYTES
    assert main(["replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["result"] == a_record()["result"]


def test_the_reader_takes_nesting_up_to_its_depth_and_says_which_error(tmp_path: Path) -> None:
    deepest: Any = []  # one level
    for _ in range(MAX_DEPTH - 1):
        deepest = [deepest]
    assert read_json_file(write(tmp_path, json.dumps(deepest))) == deepest
    with pytest.raises(RecordError):
        read_json_file(write(tmp_path, json.dumps([deepest])))
    assert read_json_file(write(tmp_path, '{"n": ' + "9" * MAX_DIGITS + "}")) == {"n": int("9" * MAX_DIGITS)}
    with pytest.raises(BadInputError):  # the error the caller names (a list of seeds: bad input)
        read_json_file(write(tmp_path, NESTED), BadInputError)


# -- what a record's fields must be ---------------------------------------------------------------


def _changed(change: str) -> dict[str, Any]:
    record = a_record()
    changes: dict[str, Any] = {
        "game as a list": lambda: record.update(game=["reloaded"]),
        "game missing": lambda: record.pop("game"),
        "version true": lambda: record.update(version=True),
        "version 1.0": lambda: record.update(version=1.0),
        "seed true": lambda: record.update(seed=True),
        "seed as a list": lambda: record.update(seed=[5]),
        "options a list": lambda: record.update(options=[]),
        "an option's value an object": lambda: record.update(options={"time_limit": {"s": 300}}),
        "a field records do not have": lambda: record.update(player="me"),
        "illegal as text": lambda: record["actions"][0].update(illegal="yes"),
        "an action's field records do not have": lambda: record["actions"][0].update(auto=True),
        "the end's outcome a list": lambda: record["end"].update(outcome=["given_up"]),
        "the end's field records do not have": lambda: record["end"].update(why="bored"),
        "the moves of the result true": lambda: record["result"].update(moves=True),
        "the score of the result a float": lambda: record["result"].update(score=float(record["result"]["score"])),
        "a result with a field more": lambda: record["result"].update(bonus=0),
        "a result with a field less": lambda: record["result"].pop("ms"),
    }
    changes[change]()
    return record


FIELD_ERRORS = {
    "game as a list": ("'game' must be", "['reloaded']"),
    "game missing": ("'game' must be", "None"),
    "version true": ("version True",),
    "version 1.0": ("version 1.0",),
    "seed true": ("'seed' must be", "True"),
    "seed as a list": ("'seed' must be",),
    "options a list": ("'options' must be",),
    "an option's value an object": ("'options' must be",),
    "a field records do not have": ("the record has a field 'player'",),
    "illegal as text": ("action 1's 'illegal' must be true or false", "'yes'"),
    "an action's field records do not have": ("action 1 has a field 'auto'",),
    "the end's outcome a list": ("'outcome' must be text",),
    "the end's field records do not have": ("'end' has a field 'why'",),
    "the moves of the result true": ("replaying gives",),
    "the score of the result a float": ("replaying gives",),
    "a result with a field more": ("replaying gives",),
    "a result with a field less": ("replaying gives",),
}


@pytest.mark.parametrize("change", list(FIELD_ERRORS))
def test_every_field_of_a_record_has_its_type(change: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, json.dumps(_changed(change)))
    refused(capsys, ["replay", str(path)], *FIELD_ERRORS[change])
    if change not in ("the moves of the result true", "the score of the result a float",
                      "a result with a field more", "a result with a field less"):  # solve does not check the result
        refused(capsys, ["solve", "reloaded", "--record", str(path), "--budget-nodes", "1000"], *FIELD_ERRORS[change])


def test_a_good_record_still_replays_and_solves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, json.dumps(a_record(), indent=1))
    assert main(["replay", str(path)]) == 0
    assert "replays exactly" in capsys.readouterr().out
    assert main(["solve", "reloaded", "--record", str(path), "--budget-nodes", "1000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] in ("won", "unwinnable", "unknown")


# -- a list of winnable seeds ---------------------------------------------------------------------


def test_a_list_of_seeds_is_checked_field_by_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from patience.solve import winnable

    good = {"format": "patience-winnable", "version": 1,
            "lists": {"reloaded": {"game": "reloaded", "options": {}, "deal_check": winnable.deal_check("reloaded", {}),
                                   "checked": 3, "seeds": [1, 2], "unknown": []}}}
    path = write(tmp_path, json.dumps(good))
    assert main(["winnable", "reloaded", "--file", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seeds"] == [1, 2]
    for change, words in (({"checked": "3"}, ("'reloaded'", "not a list of winnable seeds")),
                          ({"seeds": [1, "2"]}, ("not a list of winnable seeds",)),
                          ({"seeds": [1, True]}, ("not a list of winnable seeds",)),
                          ({"unknown": {"a": 1}}, ("not a list of winnable seeds",))):
        bad = json.loads(json.dumps(good))
        bad["lists"]["reloaded"].update(change)
        refused(capsys, ["winnable", "reloaded", "--file", str(write(tmp_path, json.dumps(bad)))], *words)
    for top in ({"version": True}, {"lists": []}):
        refused(capsys, ["winnable", "reloaded", "--file", str(write(tmp_path, json.dumps({**good, **top})))],
                "not a list of winnable seeds")
    refused(capsys, ["winnable", "reloaded", "--file", str(write(tmp_path, "[]"))], "not a list of winnable seeds")
