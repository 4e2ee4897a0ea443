"""The store of solo games: browsers, games (their logs) and the statistics drawn from them.

Everything the server keeps goes through a :class:`Store`, built from a database URL (an SQLite
file by default, in WAL mode so that reading statistics never waits for a write): its engine is set
up by :mod:`patience.server.storage.engine`, its tables declared in :mod:`patience.server.storage.schema`
(both imported here too, for the rooms that read them with the store) and made and upgraded by the
Alembic migrations in ``migrations/`` (:meth:`Store.migrate`). A game row holds the game's record (see
:mod:`patience.record`): its event log, which is enough to rebuild the game exactly; the group writer
(:mod:`patience.server.storage.writer`) writes the moves with :func:`write_games`, :func:`write_moves`,
:func:`write_acks` and :func:`write_figures`.

PostgreSQL works as well, through psycopg 3: ``postgresql+psycopg://user:password@host/dbname``
(see :func:`database_url` for the spellings accepted). Only SQL both databases share is used here,
and the test suite runs every storage test on both.

>>> store = Store("sqlite://")
>>> store.migrate()
>>> store.stats("nobody")["teppich"].played
0
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, cast

import msgspec
from sqlalchemy import (
    bindparam,
    case,
    delete,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from patience.games import GAMES
from patience.server.storage.engine import (
    MIGRATION_LOCK,
    MIGRATIONS,
    ArenaLock,
    StoreError,
    alembic_config,
    database_url,
    driver_reason,
    make_engine,
    migrations_head,
    safe_url,
    sqlite_url,
)
from patience.server.storage.schema import (
    AuthSessionRow,
    Base,
    BrowserRow,
    ChallengeRow,
    DealStockRow,
    GameAckRow,
    GameMoveRow,
    GameRow,
    MatchMoveRow,
    MatchRow,
    PasswordResetRow,
    RatingHistoryRow,
    RatingRow,
    SecretRow,
    SigninFailureRow,
    UserBrowserRow,
    UserNameRow,
    UserRow,
    metadata,
    name_key,
    server_secret,
)

__all__ = [
    "MIGRATIONS", "MIGRATION_LOCK", "ArenaLock", "AuthSessionRow", "Base", "BrowserRow", "ChallengeRow",
    "DealStockRow", "GameAckRow", "GameMoveRow", "GameRow", "GameStats", "MatchMoveRow", "MatchRow",
    "PasswordResetRow", "RatingHistoryRow", "RatingRow", "SavedGame", "SecretRow", "SigninFailureRow", "Store",
    "StoreError", "UserBrowserRow", "UserNameRow", "UserRow", "alembic_config", "database_url", "game_stats",
    "make_engine", "metadata", "migrations_head", "name_key", "now_ms", "safe_url", "server_secret", "sqlite_url",
    "write_acks", "write_figures", "write_games", "write_moves",
]


@dataclass(frozen=True)
class SavedGame:
    """A game as the live part of the server hands it over for saving (or gets it back)."""

    id: str
    browser_id: str
    game: str
    variant: str | None
    seed: str
    record: dict[str, Any]
    ms: int
    moves: int
    score: int
    outcome: str | None
    hints: int = 0  # hints the player asked for in this game
    # the last intent each page had carried out: client id -> (ack, version after it, the answer sent)
    acks: dict[str, tuple[int, int, bytes]] = field(default_factory=dict)


@dataclass(frozen=True)
class GameStats:
    """A player's figures for one game (its ``variants``: the same per variant, "custom" for games of
    other options). A game won with a hint counts apart (``won_hinted``): ``won``, the win rate, the
    streaks and the best score are of games played without one."""

    played: int = 0
    won: int = 0
    best: int | None = None
    streak: int = 0  # wins without a hint in a row up to the last game
    best_streak: int = 0
    won_hinted: int = 0
    variants: dict[str, GameStats] = field(default_factory=dict)

    @property
    def win_percent(self) -> float:
        return round(100 * self.won / self.played, 1) if self.played else 0.0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"played": self.played, "won": self.won, "win_percent": self.win_percent,
                               "best": self.best, "streak": self.streak, "best_streak": self.best_streak,
                               "won_hinted": self.won_hinted}
        if self.variants:
            out["variants"] = {name: figures.to_dict() for name, figures in self.variants.items()}
        return out


def now_ms() -> int:
    """The wall clock in milliseconds since the epoch, as rows keep their times."""
    return int(time.time() * 1000)


class Store:
    """The database: open it with a URL, :meth:`migrate` once, then save and read games."""

    def __init__(self, url: str, *, sole: bool = False) -> None:
        """``sole``: this process is the only one to use the database (an SQLite file then keeps its
        write-ahead log's index in this process's memory, see :func:`make_engine`)."""
        self.url = database_url(url)
        self.engine: Engine = make_engine(self.url, sole=sole)

    def ping(self) -> None:
        """Connect once, or raise :class:`StoreError` saying in one line why the database cannot be reached."""
        try:
            with self.engine.connect():
                pass
        except (SQLAlchemyError, OSError, TypeError, ValueError) as exc:  # TypeError: a connect option no driver knows
            raise StoreError(f"cannot reach the database {safe_url(self.url)}: {driver_reason(exc)}") from exc

    def migrate(self) -> None:
        """Bring the schema up to the newest migration (on PostgreSQL one process at a time: several
        servers that start together upgrade it once). A database already there is left as it is without
        loading Alembic (:meth:`at_head`: a start's half second)."""
        if self.at_head():
            return
        from alembic import command

        config = alembic_config(self.url)
        with self.engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def at_head(self) -> bool:
        """Whether the schema is at the newest migration (the one head of the migrations' files, read as
        text) by the database's ``alembic_version``; False when either cannot be told."""
        head = migrations_head()
        if head is None:
            return False
        try:
            with self.engine.connect() as connection:
                versions = [row[0] for row in connection.exec_driver_sql("SELECT version_num FROM alembic_version")]
        except SQLAlchemyError:  # no such table yet: a new database
            return False
        return versions == [head]

    def close(self) -> None:
        self.engine.dispose()

    def accepts_write(self) -> None:
        """Write a row and take it back, each committed: what a move or a result needs of the database.
        Raises what the database says when it takes no write (a read-only file, a full disk)."""
        with Session(self.engine) as db, db.begin():
            row = SigninFailureRow(key_hash="write-check", at_ms=0)
            db.add(row)
            db.flush()
            row_id = row.id
        with Session(self.engine) as db, db.begin():
            db.execute(delete(SigninFailureRow).where(SigninFailureRow.id == row_id))

    def checkpoint(self) -> None:
        """Copy what SQLite's write-ahead log holds into the database file, without holding up any writer
        or reader (a passive checkpoint: the commits go on appending to the log meanwhile). Nothing to do
        on PostgreSQL."""
        if self.engine.dialect.name != "sqlite":
            return
        with self.engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    # -- writing -----------------------------------------------------------------------------

    def save_games(self, games: Iterable[SavedGame]) -> None:
        """Insert or update games (and their browsers) in one transaction, as two bulk statements."""
        with self.engine.begin() as connection:
            write_games(connection, games)

    def delete_game(self, game_id: str) -> None:
        with Session(self.engine) as db, db.begin():
            row = db.get(GameRow, game_id)
            if row is not None:
                db.delete(row)

    # -- reading -----------------------------------------------------------------------------

    def load_game(self, game_id: str) -> SavedGame | None:
        with Session(self.engine) as db:
            row = db.get(GameRow, game_id)
            if row is None:
                return None
            saved = _saved(row)
            known = len(saved.record.get("actions", []))
            later = db.scalars(select(GameMoveRow.action).where(GameMoveRow.game_id == game_id,
                                                                GameMoveRow.seq >= known).order_by(GameMoveRow.seq))
            saved.record.setdefault("actions", []).extend(json.loads(text) for text in later)
            for cid, ack, version, reply in db.execute(select(GameAckRow.cid, GameAckRow.ack, GameAckRow.version,
                                                              GameAckRow.reply).where(GameAckRow.game_id == game_id)):
                saved.acks[cid] = (ack, version, reply.encode())
            return saved

    def unfinished(self, browser_id: str, limit: int = 10) -> list[SavedGame]:
        """The browser's games still going on, newest first."""
        with Session(self.engine) as db:
            rows = db.scalars(select(GameRow).where(GameRow.browser_id == browser_id, GameRow.outcome.is_(None))
                              .order_by(GameRow.updated_ms.desc()).limit(limit))
            return [_saved(row) for row in rows]

    def stats(self, browser_ids: str | Iterable[str]) -> dict[str, GameStats]:
        """Played, won, best score and streaks of every game and of each of its variants, over the
        finished games of one browser (or of several: an account's), wins with a hint apart."""
        with Session(self.engine) as db:
            return game_stats(db, [browser_ids] if isinstance(browser_ids, str) else browser_ids)


def game_stats(db: Session, browser_ids: Iterable[str]) -> dict[str, GameStats]:
    """The statistics of :meth:`Store.stats` read in ``db`` (the profile page's too). The games of Play now
    (``now:ID``) are duels: they count in the duel figures once their match is over, never here (here
    they would tell the other player a host's score before the match's end)."""
    query = (select(GameRow.game, GameRow.variant, GameRow.outcome, GameRow.score, GameRow.hints)
             .where(GameRow.browser_id.in_(sorted(set(browser_ids))), GameRow.outcome.is_not(None),
                    GameRow.seed.not_like("now:%"))
             .order_by(GameRow.ended_ms, GameRow.updated_ms))
    results: dict[str, list[tuple[str, str, int, bool]]] = {game: [] for game in GAMES}
    for game, variant, outcome, score, hints in db.execute(query):
        # (the query keeps the finished games: each has an outcome)
        results.setdefault(game, []).append((variant or "custom", cast(str, outcome), score, bool(hints)))
    out = {}
    for game, rows in results.items():
        variants: dict[str, list[tuple[str, str, int, bool]]] = {}
        for row in rows:
            variants.setdefault(row[0], []).append(row)
        out[game] = replace(_figures(rows), variants={name: _figures(part) for name, part in variants.items()})
    return out


def _figures(rows: list[tuple[str, str, int, bool]]) -> GameStats:
    won = won_hinted = streak = best_streak = 0
    for _, outcome, _, hinted in rows:
        if outcome == "won" and hinted:
            won_hinted += 1
            streak = 0
        elif outcome == "won":
            won += 1
            streak += 1
            best_streak = max(best_streak, streak)
        else:
            streak = 0
    best = max((score for _, _, score, hinted in rows if not hinted), default=None)
    return GameStats(len(rows), won, best, streak, best_streak, won_hinted)


def _insert_for(dialect: str, table: Any) -> Any:
    """An INSERT that can say what to do on a conflict, in this database's dialect."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


def write_games(connection: Connection, games: Iterable[SavedGame]) -> None:
    """Insert or update games (and their browsers) on ``connection``, as two bulk statements
    (a part of a larger transaction: see :class:`patience.server.storage.writer.GroupWriter`)."""
    batch = list(games)
    if not batch:
        return
    now = now_ms()
    browsers = [{"id": b, "created_ms": now} for b in sorted({g.browser_id for g in batch})]
    rows = [{
        "id": g.id, "browser_id": g.browser_id, "game": g.game, "variant": g.variant, "seed": g.seed,
        "record": msgspec.json.encode(g.record).decode(), "ms": g.ms, "moves": g.moves, "score": g.score,
        "outcome": g.outcome, "hints": g.hints, "created_ms": now, "updated_ms": now,
        "ended_ms": now if g.outcome is not None else None,
    } for g in batch]
    games_table = GameRow.__table__
    dialect = connection.dialect.name
    upsert = _insert_for(dialect, games_table)
    new = upsert.excluded
    upsert = upsert.on_conflict_do_update(index_elements=["id"], set_={
        "variant": new.variant, "seed": new.seed, "record": new.record, "ms": new.ms, "moves": new.moves,
        "score": new.score, "outcome": new.outcome, "hints": new.hints, "updated_ms": new.updated_ms,
        # a game ends once: its end time is the first save that knows its outcome
        "ended_ms": case((games_table.c.outcome.is_(None), new.ended_ms), else_=games_table.c.ended_ms),
    })
    connection.execute(_insert_for(dialect, BrowserRow.__table__).on_conflict_do_nothing(index_elements=["id"]),
                       browsers)
    connection.execute(upsert, rows)
    # the actions the records now hold need no rows of their own any more
    moves = GameMoveRow.__table__
    connection.execute(delete(moves).where(moves.c.game_id == bindparam("gid"), moves.c.seq < bindparam("known")),
                       [{"gid": g.id, "known": len(g.record.get("actions", []))} for g in batch])


def write_figures(connection: Connection, figures: Iterable[tuple[str, int, int, int]]) -> None:
    """Set the time played, moves and score of solo games going on (game id, ms, moves, score) on
    ``connection``, their records left as they are: a row that must show a game as it stands now (the
    deal of the day's board) without its record rewritten at every move."""
    now = now_ms()
    rows = [{"gid": game_id, "g_ms": ms, "g_moves": moves, "g_score": score, "g_now": now}
            for game_id, ms, moves, score in figures]
    if rows:
        games = GameRow.__table__
        connection.execute(update(games).where(games.c.id == bindparam("gid"), games.c.outcome.is_(None))
                           .values(ms=bindparam("g_ms"), moves=bindparam("g_moves"), score=bindparam("g_score"),
                                   updated_ms=bindparam("g_now")), rows)


def write_moves(connection: Connection, moves: Iterable[tuple[str, int, dict[str, Any]]]) -> None:
    """Append solo games' actions (game id, place in its log, the record's action) on ``connection``."""
    rows = [{"game_id": game_id, "seq": seq, "action": json.dumps(action, separators=(",", ":"))}
            for game_id, seq, action in moves]
    if rows:
        connection.execute(_append_moves(connection.dialect.name), rows)


def write_acks(connection: Connection, acks: Iterable[tuple[str, str, int, int, bytes]]) -> None:
    """Set the last intent carried out for pages of solo games (game id, client id, ack, the game's
    version after it, the answer sent) on ``connection``; a later ack only, whatever the order."""
    latest: dict[tuple[str, str], tuple[int, int, bytes]] = {}
    for game_id, cid, ack, version, reply in acks:  # one row a page in one statement
        if (game_id, cid) not in latest or ack > latest[game_id, cid][0]:
            latest[game_id, cid] = (ack, version, reply)
    rows = [{"game_id": game_id, "cid": cid, "ack": ack, "version": version, "reply": reply.decode()}
            for (game_id, cid), (ack, version, reply) in latest.items()]
    if rows:
        connection.execute(_set_acks(connection.dialect.name), rows)


@functools.cache
def _set_acks(dialect: str) -> Any:
    table = GameAckRow.__table__
    upsert = _insert_for(dialect, table)
    new = upsert.excluded
    return upsert.on_conflict_do_update(index_elements=["game_id", "cid"],
                                        set_={"ack": new.ack, "version": new.version, "reply": new.reply},
                                        where=new.ack > table.c.ack)


@functools.cache
def _append_moves(dialect: str) -> Any:
    # built once: the statement of every group commit (its compiled form is cached by SQLAlchemy too)
    return _insert_for(dialect, GameMoveRow.__table__).on_conflict_do_nothing(index_elements=["game_id", "seq"])


def _saved(row: GameRow) -> SavedGame:
    return SavedGame(row.id, row.browser_id, row.game, row.variant, row.seed, json.loads(row.record), row.ms,
                     row.moves, row.score, row.outcome, row.hints or 0)
