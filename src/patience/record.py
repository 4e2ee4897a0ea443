"""Game records: a documented, versioned JSON form of a whole game (our PGN).

::

    {
      "format": "patience-record",
      "version": 1,
      "game": "faecher",
      "options": {"undo_limit": 3},            # only options that differ from the defaults
      "seed": 7,
      "actions": [{"m": "draw", "t": 1200},     # t: milliseconds from the start
                  {"m": "v7>r1", "t": 2950},
                  {"m": "undo", "t": 4100},
                  {"m": "v3>r2", "t": 5000, "illegal": true},   # a wrong click that cost points
                  {"m": "giveup", "t": 9000}],
      "end": {"t": 9000, "outcome": "given_up"},
      "result": {"outcome": "given_up", "score": 1427, "moves": 2, "ms": 9000, "foundation_cards": 4}
    }

``end`` is absent while a game goes on. Only a game that charges for wrong clicks (Der Fächer)
keeps them, marked ``illegal``: moves between its own piles that the rules refuse. Text that
names no move, or a pile the game lacks, is never an action.

Replaying a record deals the seed again, carries out every action at its time on a manual
clock, brings the clock to the end, and checks that the result is exactly the one written down.

Reading a record file (:func:`load_record`, and :func:`read_json_file` for every JSON file a command
reads) is bounded, so that a file made to hurt ends in one line of error rather than a traceback or
all the memory: what is not a regular file (a FIFO, a device) is refused at once, unread
(:func:`read_regular_file`); a file of more than :data:`MAX_FILE_BYTES` (16 MiB; a record of the most actions a
record may hold, :data:`MAX_ACTIONS`, takes about 5 MiB) is refused unread; arrays and objects may
be nested :data:`MAX_DEPTH` (16) deep (a record needs 3); a whole number may have
:data:`MAX_DIGITS` (40) digits (a game number has at most 19); a key may appear once in an object
(JSON leaves duplicates open, and Python's reader would keep the last silently); ``NaN`` and
``Infinity`` are no JSON. :func:`replay` then checks the type of every field: the fields above and
no others, each of its type (``"game": ["teppich"]`` or ``"version": true`` is no record).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from patience.errors import IllegalMoveError, PatienceError, RecordError
from patience.games import Outcome, get_game
from patience.session import RECORD_FORMAT as FORMAT
from patience.session import RECORD_VERSION as VERSION
from patience.session import ManualClock, Session

__all__ = ["FORMAT", "MAX_DEPTH", "MAX_DIGITS", "MAX_FILE_BYTES", "VERSION", "load_record", "make_record",
           "read_json_file", "read_regular_file", "replay"]
MAX_ACTIONS = 100_000
MAX_FILE_BYTES = 16 * 1024 * 1024  # a JSON file a command reads, at most (larger ones are refused unread)
MAX_DEPTH = 16  # arrays and objects nested in one another, at most
MAX_DIGITS = 40  # digits of a whole number, at most


def make_record(session: Session) -> dict[str, Any]:
    """The record of a session (the same as :meth:`Session.record`)."""
    return session.record()


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record file; raise RecordError if it is not readable JSON within the bounds of
    :func:`read_json_file` (:func:`replay` checks what it holds)."""
    return read_json_file(path)  # type: ignore[no-any-return]


_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def _too_deep(text: str, limit: int) -> bool:
    """Are arrays and objects nested more than ``limit`` deep (brackets inside strings left out)?"""
    depth = 0
    for bracket in _NOT_BRACKETS.sub("", _STRINGS.sub("", text)):
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def read_regular_file(path: str | Path, error: type[PatienceError] = RecordError) -> BinaryIO:
    """The file at ``path`` opened for reading, if it is a regular file; anything else (a FIFO, a device, a
    socket, a folder), which a read could wait on for ever or never finish, raises ``error`` at once.
    The file is opened without waiting (``O_NONBLOCK``: opening a FIFO with no writer would wait) and
    checked on the descriptor it was opened as, so that what is read is what was checked."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise error(f"{path} is a folder, not a file") from None
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else
                "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "not a regular file")
        raise error(f"{path} is {kind}, not a regular file: not read")
    if hasattr(os, "O_NONBLOCK"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_json_file(path: str | Path, error: type[PatienceError] = RecordError) -> Any:
    """The JSON in the file at ``path``, read within bounds (see the module docstring); anything
    else raises ``error`` with one line that says what is wrong: a file that cannot be read, is
    larger than :data:`MAX_FILE_BYTES`, is no UTF-8 text or no JSON, nests deeper than
    :data:`MAX_DEPTH`, holds a number of more than :data:`MAX_DIGITS` digits, ``NaN`` or
    ``Infinity``, or a key twice in one object."""
    try:
        with read_regular_file(path, error) as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise error(f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB: not read")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{path} is not a text file") from None
    del raw
    if _too_deep(text, MAX_DEPTH):
        raise error(f"{path}: arrays and objects are nested more than {MAX_DEPTH} deep")

    def whole(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            raise error(f"{path}: a number of more than {MAX_DIGITS} digits")
        return int(digits)

    def real(digits: str) -> float:
        value = float(digits)
        if not math.isfinite(value):
            raise error(f"{path}: the number {digits[:24]}{'…' if len(digits) > 24 else ''} is too large")
        return value

    def constant(name: str) -> Any:
        raise error(f"{path}: {name} is not JSON")

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                shown = repr(key if len(key) <= 40 else key[:40] + "…")
                raise error(f"{path}: the key {shown} appears twice in one object")
            out[key] = value
        return out

    try:
        return json.loads(text, parse_int=whole, parse_float=real, parse_constant=constant, object_pairs_hook=unique)
    except json.JSONDecodeError as exc:
        raise error(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:  # pragma: no cover - the depth is checked before
        raise error(f"{path}: arrays and objects are nested more than {MAX_DEPTH} deep") from None


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RecordError(f"record: {what} must be a whole number ≥ 0, not {value!r}")
    return value


_FIELDS = ("format", "version", "game", "options", "seed", "actions", "end", "result")
_ACTION_FIELDS = ("m", "t", "illegal")
_END_FIELDS = ("t", "outcome", "match_t")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def _only(fields: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    for key in fields:
        if key not in known:
            raise RecordError(f"record: {where} has a field {_shown(key)} that records do not have "
                              f"(fields: {', '.join(known)})")


def _check_fields(record: Mapping[str, Any]) -> None:
    """The type of every field the game does not check itself (a game checks its name, seed and options)."""
    _only(record, _FIELDS, "the record")
    game = record.get("game")
    if not isinstance(game, str):
        raise RecordError(f"record: 'game' must be a game's name (text), not {_shown(game)}")
    seed = record.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise RecordError(f"record: 'seed' must be a game number or a deal key, not {_shown(seed)}")
    options = record.get("options", {})
    if not isinstance(options, Mapping) or not all(
            isinstance(v, str | int | float) for v in options.values()):  # bool is an int
        raise RecordError(f"record: 'options' must be an object of names and values (text, numbers, true or "
                          f"false), not {_shown(options)}")


def replay(record: Mapping[str, Any], *, check_result: bool = True) -> Session:
    """Play a record through again and return the session; RecordError if anything differs."""

    if not isinstance(record, Mapping):
        raise RecordError("a record is a JSON object")
    if record.get("format") != FORMAT:
        raise RecordError(f"not a game record (format must be {FORMAT!r})")
    version = record.get("version")
    if type(version) is not int or version != VERSION:  # not true, nor 1.0
        raise RecordError(f"record version {_shown(version)} is not supported (this reads {VERSION})")
    actions = record.get("actions")
    if not isinstance(actions, list) or len(actions) > MAX_ACTIONS:
        raise RecordError(f"record: 'actions' must be a list of at most {MAX_ACTIONS}")
    _check_fields(record)
    clock = ManualClock()
    try:
        session = Session(get_game(record["game"]), record["seed"], record.get("options", {}), clock=clock)
    except PatienceError as exc:
        raise RecordError(f"record: {exc}") from None
    last = 0
    for number, action in enumerate(actions, 1):
        if not isinstance(action, Mapping) or not isinstance(action.get("m"), str):
            raise RecordError(f"record: action {number} must be an object with a move text 'm'")
        _only(action, _ACTION_FIELDS, f"action {number}")
        if not isinstance(action.get("illegal", False), bool):
            raise RecordError(f"record: action {number}'s 'illegal' must be true or false, not "
                              f"{_shown(action['illegal'])}")
        t = _int(action.get("t"), f"action {number}'s time")
        if t < last:
            raise RecordError(f"record: action {number} goes back in time ({t} ms < {last} ms)")
        last = t
        clock.set_ms(t)
        text = action["m"]
        if action.get("illegal") is True and not session.table.illegal_points:
            raise RecordError(f"record: action {number} ({text}) is marked illegal, but {session.game_id} "
                              "keeps no rejected moves")
        try:
            session.apply_action(text)
        except PatienceError as exc:
            if action.get("illegal") is True and isinstance(exc, IllegalMoveError):
                continue
            raise RecordError(f"record: action {number} ({text}) cannot be played: {exc}") from None
        if action.get("illegal") is True:
            raise RecordError(f"record: action {number} ({text}) is marked illegal but is legal")
    end = record.get("end")
    if end is not None:
        if not isinstance(end, Mapping):
            raise RecordError("record: 'end' must be an object")
        _only(end, _END_FIELDS, "'end'")
        if not isinstance(end.get("outcome"), str):
            raise RecordError(f"record: the end's 'outcome' must be text, not {_shown(end.get('outcome'))}")
        t = _int(end.get("t"), "the end time")
        if t < last:
            raise RecordError("record: the game ends before its last action")
        clock.set_ms(t)
        session.tick()
        if session.outcome is None:
            try:
                wanted = Outcome(str(end.get("outcome")))
            except ValueError:
                raise RecordError(f"record: unknown outcome {end.get('outcome')!r}") from None
            raise RecordError(f"record: the game has not ended at {t} ms, but the record says {wanted.value}")
        if end.get("outcome") != session.outcome.value or t != session.end_ms:
            raise RecordError(f"record: the game ends {session.outcome.value} at {session.end_ms} ms, "
                              f"but the record says {end.get('outcome')!r} at {t} ms")
        if "match_t" in end:
            match_t = _int(end.get("match_t"), "the match's end time")
            if not session.waits_for_match or match_t < t:
                raise RecordError(f"record: {session.game_id} with these options keeps nothing for the end of "
                                  f"the match, or the match ends ({match_t} ms) before the game ({t} ms)")
            session.settle(match_t)
    if check_result and "result" in record:
        got = session.summary()
        want = record["result"]
        # each figure of its type too: true is no 1, nor 1.0 a move count
        if not isinstance(want, Mapping) or set(want) != set(got) or any(
                type(want[k]) is not type(v) or want[k] != v for k, v in got.items()):
            raise RecordError(f"record: replaying gives {json.dumps(got)}, the record says {json.dumps(want)}")
    return session
