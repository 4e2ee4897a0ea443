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
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from patience.errors import IllegalMoveError, PatienceError, RecordError
from patience.games import Outcome, get_game
from patience.session import RECORD_FORMAT as FORMAT
from patience.session import RECORD_VERSION as VERSION
from patience.session import ManualClock, Session

__all__ = ["FORMAT", "VERSION", "load_record", "make_record", "replay"]
MAX_ACTIONS = 100_000


def make_record(session: Session) -> dict[str, Any]:
    """The record of a session (the same as :meth:`Session.record`)."""
    return session.record()


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record file; raise RecordError if it is not readable JSON."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path} is not a text file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    return data  # type: ignore[no-any-return]


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RecordError(f"record: {what} must be a whole number ≥ 0, not {value!r}")
    return value


def replay(record: Mapping[str, Any], *, check_result: bool = True) -> Session:
    """Play a record through again and return the session; RecordError if anything differs."""

    if not isinstance(record, Mapping):
        raise RecordError("a record is a JSON object")
    if record.get("format") != FORMAT:
        raise RecordError(f"not a game record (format must be {FORMAT!r})")
    if record.get("version") != VERSION:
        raise RecordError(f"record version {record.get('version')!r} is not supported (this reads {VERSION})")
    actions = record.get("actions")
    if not isinstance(actions, list) or len(actions) > MAX_ACTIONS:
        raise RecordError(f"record: 'actions' must be a list of at most {MAX_ACTIONS}")
    clock = ManualClock()
    try:
        session = Session(get_game(str(record.get("game"))), record.get("seed"),  # type: ignore[arg-type]
                          record.get("options") or {}, clock=clock)
    except PatienceError as exc:
        raise RecordError(f"record: {exc}") from None
    last = 0
    for number, action in enumerate(actions, 1):
        if not isinstance(action, Mapping) or not isinstance(action.get("m"), str):
            raise RecordError(f"record: action {number} must be an object with a move text 'm'")
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
        if not isinstance(want, Mapping) or any(want.get(k) != v for k, v in got.items()):
            raise RecordError(f"record: replaying gives {json.dumps(got)}, the record says {json.dumps(want)}")
    return session
