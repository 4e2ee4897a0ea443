"""The deal of the day in the database (migration 0008): the day's key of each game and the players' attempts.

The key of a (day, game) is written once: the table's primary key makes two processes that choose at the
same moment agree on the first row written (:func:`choose_deal`). An attempt is a row per (day, game,
player), written in the same transaction as its solo game, before the first card is shown
(:func:`start_attempt`): a second start finds it and goes on with the same game, never a new one.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    String,
    and_,
    distinct,
    false,
    func,
    insert,
    literal,
    or_,
    select,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from patience.server.storage.fairplay import HELD_VERDICTS
from patience.server.storage.store import Base, GameRow, SavedGame, UserRow, server_secret, write_games

__all__ = ["AttemptRow", "DailyDeal", "DailyDealRow", "attempt_days", "choose_deal", "day_board", "entered",
           "find_attempt", "find_deal", "is_practice", "month_attempts", "practice_key", "scouting", "start_attempt"]


class DailyDealRow(Base):
    """The secret deal key of a game's deal of the day, and its commitment (shown during the day)."""

    __tablename__ = "daily_deals"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    game: Mapped[str] = mapped_column(String(16), primary_key=True)
    variant: Mapped[str] = mapped_column(String(40))
    deal: Mapped[str] = mapped_column(String(64))  # the key: never shown before the day ends
    commitment: Mapped[str] = mapped_column(String(64))
    proved: Mapped[bool] = mapped_column(Boolean)  # proved winnable by the solvers
    made_ms: Mapped[int] = mapped_column(BigInteger)


class AttemptRow(Base):
    """A player's one attempt at a day's deal: the solo game it is played in."""

    __tablename__ = "daily_attempts"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    game: Mapped[str] = mapped_column(String(16), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), unique=True)
    started_ms: Mapped[int] = mapped_column(BigInteger)
    # a practice deal of its own (migration 0023): its account lacked the board's entry rule, or was marked
    practice: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


@dataclass(frozen=True)
class DailyDeal:
    day: str
    game: str
    variant: str
    deal: str
    commitment: str
    proved: bool


def _deal(row: Any) -> DailyDeal:
    return DailyDeal(row.day, row.game, row.variant, row.deal, row.commitment, bool(row.proved))


def find_deal(engine: Engine, day: str, game: str) -> DailyDeal | None:
    with engine.connect() as connection:
        row = connection.execute(select(DailyDealRow.__table__).where(
            DailyDealRow.day == day, DailyDealRow.game == game)).first()
    return _deal(row) if row is not None else None


def choose_deal(engine: Engine, day: str, game: str, variant: str, deal: str, commitment: str,
                proved: bool) -> DailyDeal:
    """Make ``deal`` the day's deal of ``game`` unless one is already chosen; returns the one chosen
    (another process's, if it was first)."""
    try:
        with engine.begin() as connection:
            connection.execute(insert(DailyDealRow), [{
                "day": day, "game": game, "variant": variant, "deal": deal, "commitment": commitment,
                "proved": proved, "made_ms": int(time.time() * 1000)}])
    except IntegrityError:
        pass  # another process chose first: its deal is the day's
    chosen = find_deal(engine, day, game)
    if chosen is None:  # pragma: no cover - the row was written or found above
        raise RuntimeError(f"no deal of the day for {game} on {day}")
    return chosen


def find_attempt(engine: Engine, day: str, game: str, user_id: str) -> str | None:
    """The id of the solo game of a player's attempt, or None."""
    with engine.connect() as connection:
        found = connection.scalar(select(AttemptRow.game_id).where(
            AttemptRow.day == day, AttemptRow.game == game, AttemptRow.user_id == user_id))
    return str(found) if found is not None else None


def is_practice(engine: Engine, game_id: str) -> bool:
    """Is ``game_id`` the game of a practice attempt (a deal of the account's own, not the day's)?"""
    with engine.connect() as connection:
        return bool(connection.scalar(select(AttemptRow.practice).where(AttemptRow.game_id == game_id)))


def start_attempt(engine: Engine, day: str, game: str, user_id: str, saved: SavedGame,
                  practice: bool = False) -> str:
    """Write a player's attempt and its game (not played yet) in one transaction; if the player already
    has an attempt at this day's deal, nothing is written and that attempt's game id is returned.
    ``practice``: the game is a deal of the player's own (:func:`practice_key`), not the day's."""
    try:
        with engine.begin() as connection:
            write_games(connection, [saved])  # gone with the transaction if the player has an attempt
            connection.execute(insert(AttemptRow), [{"day": day, "game": game, "user_id": user_id,
                                                     "game_id": saved.id, "started_ms": int(time.time() * 1000),
                                                     "practice": practice}])
    except IntegrityError:
        pass
    found = find_attempt(engine, day, game, user_id)
    if found is None:  # pragma: no cover - written or found above
        raise RuntimeError("the attempt was neither written nor found")
    return found


HISTORY_DAYS = 7  # an account this old when it starts its attempt ...
HISTORY_RATED = 5  # ... with this many rated duels with effort finished before it ...
HISTORY_OPPONENTS = 3  # ... against this many different opponents not linked to it has a history
REAL_PLAY = ("rated", "capped", "held")  # ledger reasons of rated matches with effort against an established account


def _history(user: Any, at_ms: Any) -> Any:
    """The board's entry rule as a condition: the account ``user`` (a column) had a history at ``at_ms``
    (:data:`HISTORY_DAYS` old, :data:`HISTORY_RATED` rated duels with effort, ledger reasons
    :data:`REAL_PLAY`, against :data:`HISTORY_OPPONENTS` opponents sharing no browser or address group)."""
    tables = Base.metadata.tables
    changes, traces = tables["rating_changes"], tables["account_traces"]
    users = UserRow.__table__.alias("entrant")
    mine, theirs = traces.alias("mine"), traces.alias("theirs")
    linked = (select(mine.c.user_id).join(theirs, and_(theirs.c.kind == mine.c.kind,
                                                       theirs.c.digest == mine.c.digest))
              .where(mine.c.user_id == changes.c.user_id, theirs.c.user_id == changes.c.opponent_id).exists())
    real = and_(changes.c.user_id == user, changes.c.reason.in_(REAL_PLAY),
                changes.c.state.in_(("applied", "released")), changes.c.at_ms < at_ms, ~linked)
    rated = select(func.count()).select_from(changes).where(real).scalar_subquery()
    opponents = select(func.count(distinct(changes.c.opponent_id))).where(real).scalar_subquery()
    old = select(users.c.id).where(users.c.id == user, at_ms - users.c.created_ms >= HISTORY_DAYS * 86_400_000)
    return and_(old.exists(), rated >= HISTORY_RATED, opponents >= HISTORY_OPPONENTS)


def entered(engine: Engine, user_id: str, at_ms: int | None = None) -> bool:
    """May ``user_id`` be dealt the day's deal at ``at_ms`` (now by default, the clock an attempt's start is
    written with, which :func:`day_board` reads): it meets the board's entry rule (:func:`_history`) and is
    not marked? Else its attempt of the day is a practice deal (:func:`practice_key`) while the day lasts
    (docs/fairplay.md, *Scouted deals of the day*)."""
    standing = Base.metadata.tables["fairplay_accounts"]
    at_ms = int(time.time() * 1000) if at_ms is None else at_ms
    with engine.connect() as connection:
        marked = connection.scalar(select(standing.c.state).where(standing.c.user_id == user_id)) == "marked"
        return not marked and bool(connection.scalar(select(_history(literal(user_id), literal(at_ms)))))


def practice_key(engine: Engine, day: str, game: str, user_id: str, day_deal: str) -> str:
    """The deal key of ``user_id``'s practice deal of ``game`` on ``day``: an HMAC-SHA-256 under a server
    secret (:func:`patience.server.storage.store.server_secret`, never shown) of the day, the game and the
    account, so nothing of the day's deal (a key of its own, from the operating system's randomness) can be
    computed from it, nor it from the day's; never ``day_deal`` itself (the next counter is taken)."""
    secret = server_secret(engine, "daily-practice")
    for n in range(1_000):
        key = hmac.new(secret, f"practice|{day}|{game}|{user_id}|{n}".encode(), hashlib.sha256).hexdigest()
        if key != day_deal:
            return key
    raise RuntimeError("no practice deal apart from the day's")  # pragma: no cover - 2**-256 a try


def day_board(engine: Engine, day: str, game: str, limit: int = 100) -> list[dict[str, Any]]:
    """The day's attempts, best first (score, then the shorter time): player, score, time, outcome.

    Fair play (docs/fairplay.md): a marked account has no place. A won attempt takes a place only if
    its account has a history when it starts (:data:`HISTORY_DAYS` old, :data:`HISTORY_RATED` rated duels
    that moved its rating with effort, ledger reasons :data:`REAL_PLAY`, against :data:`HISTORY_OPPONENTS` opponents
    who share no browser or address group with it: give-ups and puppets count for nothing), and, unless a
    moderator cleared the account after the attempt, the attempt's evidence is analysed with a verdict
    other than :data:`HELD_VERDICTS` and the account is not in review: an unanalysed win waits."""
    games = GameRow.__table__
    tables = Base.metadata.tables
    standing, evidence = tables["fairplay_accounts"], tables["fairplay_games"]
    history = _history(UserRow.id, AttemptRow.started_ms)
    analysed = select(evidence.c.key).where(
        evidence.c.key == literal("g:").concat(games.c.id), evidence.c.analysed_ms.is_not(None),
        evidence.c.verdict.not_in(HELD_VERDICTS)).exists()
    in_review = UserRow.id.in_(select(standing.c.user_id).where(standing.c.state == "review"))
    cleared_after = select(standing.c.user_id).where(
        standing.c.user_id == UserRow.id, standing.c.state == "cleared",
        standing.c.at_ms >= AttemptRow.started_ms).exists()
    shown = and_(history, or_(cleared_after, and_(analysed, ~in_review)))
    with engine.connect() as connection:
        rows = connection.execute(
            select(UserRow.id, UserRow.name, games.c.id, games.c.score, games.c.ms, games.c.moves, games.c.outcome)
            .select_from(AttemptRow.__table__.join(games, games.c.id == AttemptRow.game_id)
                         .join(UserRow.__table__, UserRow.id == AttemptRow.user_id))
            .where(AttemptRow.day == day, AttemptRow.game == game, AttemptRow.practice.is_(False),
                   UserRow.id.not_in(select(standing.c.user_id).where(standing.c.state == "marked")),
                   or_(games.c.outcome.is_(None), games.c.outcome != "won", shown))
            .order_by(games.c.score.desc(), games.c.ms, AttemptRow.started_ms).limit(limit)).all()
    return [{"rank": n, "user": row[0], "name": row[1], "game_id": row[2], "score": row[3], "ms": row[4],
             "moves": row[5], "outcome": row[6]} for n, row in enumerate(rows, start=1)]

SCOUT_VERDICTS = ("machine", "suspect")  # an attempt with one of these verdicts scouted the deal for others
FARMED = ("no_attempt", "no_attempt_opp", "quit", "linked")  # ledger reasons of matches that link two accounts


def scouting(engine: Engine, game_id: str, until_ms: int | None = None) -> str:
    """Was the deal of the day of the attempt played in ``game_id`` seen by a scout while it was played
    (docs/fairplay.md, *Scouted deals of the day*)? Attempts begun before ``until_ms`` count (now by
    default: the analysis runs once the game is over), also those begun after the player's own: an attempt
    begun early and finished once a scout has seen the cards is no less scouted. ``"linked"`` when an
    account linked to the player began an attempt at it: one browser or one address group within
    :data:`patience.server.storage.ladder.LINK_DAYS` days, or a match between them in as many days that a
    side stepped aside in or that was linked (:data:`FARMED`); ``"day"`` when another account did that
    lacks the board's entry rule at its start, is marked, or whose attempt's verdict is one of
    :data:`SCOUT_VERDICTS`; else (or when ``game_id`` is no attempt, or a practice one) ``""``. A practice
    attempt (:func:`practice_key`) saw nothing of the day's deal and scouts nothing: an account without the
    entry rule, or marked, is dealt one while the day lasts, so a day is scouted now only by an established
    account playing at machine pace or marked after its attempt began."""
    from patience.server.storage.ladder import DAY_MS, LINK_DAYS

    tables = Base.metadata.tables
    standing, changes, traces, evidence = (tables[t] for t in ("fairplay_accounts", "rating_changes",
                                                                "account_traces", "fairplay_games"))
    with engine.connect() as connection:
        mine = connection.execute(select(AttemptRow.day, AttemptRow.game, AttemptRow.user_id, AttemptRow.started_ms,
                                         AttemptRow.practice).where(AttemptRow.game_id == game_id)).first()
        if mine is None or mine.practice:
            return ""
        day, game, user, started, _ = mine
        until = int(time.time() * 1000) + 1 if until_ms is None else until_ms  # now: every attempt begun so far
        since = started - LINK_DAYS * DAY_MS
        other = AttemptRow.__table__.alias("other")
        seen = and_(other.c.day == day, other.c.game == game, other.c.user_id != user, other.c.started_ms < until,
                    other.c.practice.is_(False))  # a practice deal showed nothing of the day's
        ids = select(other.c.user_id).where(seen)  # the accounts that played the deal meanwhile
        a, b = traces.alias("a"), traces.alias("b")
        shared = connection.execute(select(b.c.user_id).join(a, and_(a.c.kind == b.c.kind, a.c.digest == b.c.digest))
                                    .where(a.c.user_id == user, b.c.user_id.in_(ids), a.c.last_ms >= since,
                                           b.c.last_ms >= since).limit(1)).first()
        played = connection.execute(select(changes.c.opponent_id).where(
            changes.c.user_id == user, changes.c.opponent_id.in_(ids), changes.c.at_ms >= since,
            changes.c.reason.in_(FARMED)).limit(1)).first()
        if shared is not None or played is not None:
            return "linked"
        marked = select(standing.c.user_id).where(standing.c.user_id == other.c.user_id,
                                                  standing.c.state == "marked").exists()
        flagged = select(evidence.c.key).where(evidence.c.key == literal("g:").concat(other.c.game_id),
                                               evidence.c.verdict.in_(SCOUT_VERDICTS)).exists()
        scout = connection.execute(select(other.c.user_id).where(
            seen, or_(marked, flagged, ~_history(other.c.user_id, other.c.started_ms))).limit(1)).first()
    return "day" if scout is not None else ""


def attempt_days(engine: Engine, user_id: str) -> list[str]:
    """The days (YYYY-MM-DD, oldest first) on which a player began an attempt at any game's deal of the day."""
    with engine.connect() as connection:
        return [str(day) for day in connection.scalars(
            select(AttemptRow.day).where(AttemptRow.user_id == user_id).distinct().order_by(AttemptRow.day))]


def month_attempts(engine: Engine, user_id: str, month: str) -> list[tuple[str, str, str | None]]:
    """A player's attempts in ``month`` (YYYY-MM): (day, game, outcome; None while it goes on), by day and game."""
    games = GameRow.__table__
    with engine.connect() as connection:
        rows = connection.execute(
            select(AttemptRow.day, AttemptRow.game, games.c.outcome)
            .select_from(AttemptRow.__table__.join(games, games.c.id == AttemptRow.game_id))
            .where(AttemptRow.user_id == user_id, AttemptRow.day.like(f"{month}-%"))
            .order_by(AttemptRow.day, AttemptRow.game)).all()
    return [(str(row[0]), str(row[1]), row[2]) for row in rows]
