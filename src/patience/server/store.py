"""Storage of the app: browsers, games (their logs) and the statistics drawn from them.

Everything the server keeps goes through :class:`Store`, built from a database URL (an SQLite
file by default, in WAL mode so that reading statistics never waits for a write). The schema
is made and upgraded by the Alembic migrations in ``migrations/``; a new schema change is a new
file in ``migrations/versions`` (``alembic_config(url)`` gives a configuration for the Alembic
commands). A game row holds the game's record (see :mod:`patience.record`): its event log, which
is enough to rebuild the game exactly.

>>> store = Store("sqlite://")
>>> store.migrate()
>>> store.stats("nobody")["teppich"].played
0
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, case, create_engine, event, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.pool import StaticPool

from patience.games import GAMES

__all__ = [
    "Base", "BrowserRow", "GameRow", "GameStats", "SavedGame", "Store", "alembic_config", "metadata", "sqlite_url",
]

MIGRATIONS = Path(__file__).with_name("migrations")


class Base(DeclarativeBase):
    pass


class BrowserRow(Base):
    """A browser that has played here, known by the random id in its cookie."""

    __tablename__ = "browsers"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class GameRow(Base):
    """One game: what was dealt, its log (the record) and, once over, its result."""

    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    browser_id: Mapped[str] = mapped_column(ForeignKey("browsers.id", ondelete="CASCADE"))
    game: Mapped[str] = mapped_column(String(16))
    variant: Mapped[str | None] = mapped_column(String(40))
    seed: Mapped[str] = mapped_column(String(20))
    record: Mapped[str] = mapped_column(Text)  # JSON game record
    ms: Mapped[int] = mapped_column(BigInteger)  # milliseconds played when last saved
    moves: Mapped[int] = mapped_column(Integer)
    score: Mapped[int] = mapped_column(Integer)
    outcome: Mapped[str | None] = mapped_column(String(16))  # None while the game goes on
    created_ms: Mapped[int] = mapped_column(BigInteger)
    updated_ms: Mapped[int] = mapped_column(BigInteger)
    ended_ms: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_games_browser_game_ended", "browser_id", "game", "ended_ms"),)


metadata = Base.metadata


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


@dataclass(frozen=True)
class GameStats:
    """One browser's figures for one game."""

    played: int = 0
    won: int = 0
    best: int | None = None
    streak: int = 0  # wins in a row up to the last game
    best_streak: int = 0

    @property
    def win_percent(self) -> float:
        return round(100 * self.won / self.played, 1) if self.played else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"played": self.played, "won": self.won, "win_percent": self.win_percent, "best": self.best,
                "streak": self.streak, "best_streak": self.best_streak}


def sqlite_url(path: str | Path) -> str:
    return f"sqlite:///{Path(path).expanduser().resolve()}"


def alembic_config(url: str) -> Any:
    """An Alembic configuration for ``url`` with this package's migrations."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def _now_ms() -> int:
    return int(time.time() * 1000)


class Store:
    """The database: open it with a URL, :meth:`migrate` once, then save and read games."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine: Engine = _make_engine(url)

    def migrate(self) -> None:
        """Bring the schema up to the newest migration."""
        from alembic import command

        config = alembic_config(self.url)
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def close(self) -> None:
        self.engine.dispose()

    # -- writing -----------------------------------------------------------------------------

    def save_games(self, games: Iterable[SavedGame]) -> None:
        """Insert or update games (and their browsers) in one transaction, as two bulk statements."""
        batch = list(games)
        if not batch:
            return
        now = _now_ms()
        browsers = [{"id": b, "created_ms": now} for b in sorted({g.browser_id for g in batch})]
        rows = [{
            "id": g.id, "browser_id": g.browser_id, "game": g.game, "variant": g.variant, "seed": g.seed,
            "record": msgspec.json.encode(g.record).decode(), "ms": g.ms, "moves": g.moves, "score": g.score,
            "outcome": g.outcome, "created_ms": now, "updated_ms": now,
            "ended_ms": now if g.outcome is not None else None,
        } for g in batch]
        games_table = GameRow.__table__
        upsert = self._insert(games_table)
        new = upsert.excluded
        upsert = upsert.on_conflict_do_update(index_elements=["id"], set_={
            "variant": new.variant, "seed": new.seed, "record": new.record, "ms": new.ms, "moves": new.moves,
            "score": new.score, "outcome": new.outcome, "updated_ms": new.updated_ms,
            # a game ends once: its end time is the first save that knows its outcome
            "ended_ms": case((games_table.c.outcome.is_(None), new.ended_ms), else_=games_table.c.ended_ms),
        })
        with self.engine.begin() as connection:
            connection.execute(self._insert(BrowserRow.__table__).on_conflict_do_nothing(index_elements=["id"]),
                               browsers)
            connection.execute(upsert, rows)

    def _insert(self, table: Any) -> Any:
        """An INSERT that can say what to do on a conflict, in this database's dialect."""
        if self.engine.dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        return insert(table)

    def delete_game(self, game_id: str) -> None:
        with Session(self.engine) as db, db.begin():
            row = db.get(GameRow, game_id)
            if row is not None:
                db.delete(row)

    # -- reading -----------------------------------------------------------------------------

    def load_game(self, game_id: str) -> SavedGame | None:
        with Session(self.engine) as db:
            row = db.get(GameRow, game_id)
            return None if row is None else _saved(row)

    def unfinished(self, browser_id: str, limit: int = 10) -> list[SavedGame]:
        """The browser's games still going on, newest first."""
        with Session(self.engine) as db:
            rows = db.scalars(select(GameRow).where(GameRow.browser_id == browser_id, GameRow.outcome.is_(None))
                              .order_by(GameRow.updated_ms.desc()).limit(limit))
            return [_saved(row) for row in rows]

    def stats(self, browser_id: str) -> dict[str, GameStats]:
        """Played, won, best score and streaks of every game, for one browser."""
        query = (select(GameRow.game, GameRow.outcome, GameRow.score)
                 .where(GameRow.browser_id == browser_id, GameRow.outcome.is_not(None))
                 .order_by(GameRow.ended_ms, GameRow.updated_ms))
        results: dict[str, list[tuple[str, int]]] = {game: [] for game in GAMES}
        with Session(self.engine) as db:
            for game, outcome, score in db.execute(query):
                results.setdefault(game, []).append((outcome, score))
        return {game: _figures(rows) for game, rows in results.items()}


def _figures(rows: list[tuple[str, int]]) -> GameStats:
    won = streak = best_streak = 0
    for outcome, _ in rows:
        if outcome == "won":
            won += 1
            streak += 1
            best_streak = max(best_streak, streak)
        else:
            streak = 0
    best = max((score for _, score in rows), default=None)
    return GameStats(len(rows), won, best, streak, best_streak)


def _saved(row: GameRow) -> SavedGame:
    return SavedGame(row.id, row.browser_id, row.game, row.variant, row.seed, json.loads(row.record), row.ms,
                     row.moves, row.score, row.outcome)


def _make_engine(url: str) -> Engine:
    if url in ("sqlite://", "sqlite:///:memory:"):
        # one shared connection, or every thread would see its own empty database
        engine = create_engine(url, connect_args={"check_same_thread": False}, poolclass=StaticPool)
    elif url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    else:
        return create_engine(url, pool_pre_ping=True)

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; a crash may lose the last commit only
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return engine
