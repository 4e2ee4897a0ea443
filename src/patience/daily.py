"""The deal of the day: one secret deal per game and UTC day, the same for everyone, committed in advance.

Each game's day deal is played in one variant, :data:`DAILY`: the first duel variant of the game
(:data:`patience.duel.FORMATS`), as a solo game. Teppich is played *with waste*: the base carpet's result
does not depend on the play at all (about 1 % of its deals come out), so it cannot rank players.
Der Fächer is played as the solo game is (its pool counted at the game's own end).

The deal is dealt from a **deal key** (256 secret random bits, :mod:`patience.rng`), proved winnable by
the server's solvers, exactly as a duel's: nobody can compute it from the cards they see, and the seed
numbers of solo play never deal it. Its commitment is the duel's, ``SHA-256("patience-duel-v2|GAME|
OPTIONS|KEY")`` (:func:`patience.duel.commitment`): it is shown while the day goes on, and the key once
the day is over (UTC), when anyone can check with :func:`verify_daily` that every game of the day was
that deal and replays to its score.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from patience.duel import FORMATS, commitment, verify_commitment
from patience.errors import BadInputError, RecordError
from patience.games import get_game
from patience.options import options_to_dict
from patience.record import replay
from patience.rng import is_deal_key
from patience.session import Session

__all__ = ["DAILY", "DAILY_FORMAT", "check_day", "daily_commitment", "daily_options", "day_of", "is_over",
           "verify_daily"]

DAILY_FORMAT = "patience-daily"
SOLO_ONLY = ("pool_until",)  # duel options that have no meaning in a game played alone

DAILY: dict[str, str] = {game: next(iter(variants)) for game, variants in FORMATS.items()}
"""game id -> the variant of its deal of the day (a duel variant: its stock of proved keys is the duel's)."""


def daily_options(game: str) -> dict[str, Any]:
    """The options (those not at their default) of ``game``'s deal of the day."""
    if game not in DAILY:
        raise BadInputError(f"{game!r} has no deal of the day (games: {', '.join(DAILY)})")
    opts = {k: v for k, v in FORMATS[game][DAILY[game]].items() if k not in SOLO_ONLY}
    return options_to_dict(get_game(game).make_options(opts), only_changed=True)


def day_of(ms: float) -> str:
    """The UTC day (``YYYY-MM-DD``) of a time in milliseconds since the epoch.

    >>> day_of(0), day_of(86_399_999), day_of(86_400_000)
    ('1970-01-01', '1970-01-01', '1970-01-02')
    """
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).date().isoformat()


def check_day(day: object) -> str:
    """``day`` if it is a date written ``YYYY-MM-DD``, else BadInputError."""
    try:
        if isinstance(day, str) and len(day) == 10:
            return dt.date.fromisoformat(day).isoformat()
    except ValueError:
        pass
    raise BadInputError("a day is written YYYY-MM-DD")


def is_over(day: str, now_ms: float) -> bool:
    """Has ``day`` ended (UTC) at ``now_ms``?"""
    return day_of(now_ms) > day


def daily_commitment(game: str, key: str) -> str:
    """The commitment to ``game``'s day deal of ``key`` (the duel's v2 construction)."""
    return commitment(game, daily_options(game), key)


def _changed(game: Any, options: Any) -> dict[str, Any]:
    try:
        return options_to_dict(get_game(str(game)).make_options(dict(options or {})), only_changed=True)
    except (BadInputError, TypeError, ValueError) as exc:
        raise RecordError(f"record: {exc}") from None


def verify_daily(record: Mapping[str, Any]) -> list[Session]:
    """Check a revealed day (``format`` ``patience-daily``: game, options, commitment, seed and the game
    records of its attempts): the key opens the commitment, each game is that deal and replays exactly
    to the score it claims. Returns the replayed sessions; raises RecordError if anything is wrong."""
    if record.get("format") != DAILY_FORMAT:
        raise RecordError(f"not a record of a deal of the day (format {DAILY_FORMAT!r})")
    game, options, seed = record.get("game"), record.get("options"), record.get("seed")
    if not is_deal_key(seed):
        raise RecordError("the record has no deal key yet (is the day over?)")
    if not isinstance(options, Mapping):
        raise RecordError("the record has no options")
    if not verify_commitment(str(record.get("commitment")), str(game), options, seed):
        raise RecordError("the deal key does not open the commitment shown during the day")
    sessions = []
    for n, game_record in enumerate(record.get("games") or [], start=1):
        if (not isinstance(game_record, Mapping) or game_record.get("game") != game or game_record.get("seed") != seed
                or _changed(game, game_record.get("options")) != _changed(game, options)):
            raise RecordError(f"game {n} is not the committed deal")
        sessions.append(replay(game_record))  # checks the score and the end the record claims
    return sessions
