"""Storage of the app: browsers, games (their logs) and the statistics drawn from them.

Everything the server keeps goes through :class:`Store`, built from a database URL (an SQLite
file by default, in WAL mode so that reading statistics never waits for a write). The schema
is made and upgraded by the Alembic migrations in ``migrations/``; a new schema change is a new
file in ``migrations/versions`` (``alembic_config(url)`` gives a configuration for the Alembic
commands). A game row holds the game's record (see :mod:`patience.record`): its event log, which
is enough to rebuild the game exactly.

PostgreSQL works as well, through psycopg 3: ``postgresql+psycopg://user:password@host/dbname``
(see :func:`database_url` for the spellings accepted). Only SQL both databases share is used here,
and the test suite runs every storage test on both.

>>> store = Store("sqlite://")
>>> store.migrate()
>>> store.stats("nobody")["teppich"].played
0
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import time
import unicodedata
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    bindparam,
    case,
    create_engine,
    delete,
    event,
    false,
    select,
    update,
)
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.pool import StaticPool

from patience.errors import PatienceError
from patience.games import GAMES

__all__ = [
    "ArenaLock", "Base", "BrowserRow", "DealStockRow", "GameAckRow", "GameMoveRow", "GameRow", "GameStats",
    "SavedGame", "Store", "StoreError", "alembic_config", "database_url", "make_engine", "metadata", "name_key",
    "now_ms", "server_secret", "sqlite_url", "write_acks", "write_figures", "write_games", "write_moves",
]

MIGRATIONS = Path(__file__).with_name("migrations")
MIGRATION_LOCK = 0x70617468  # PostgreSQL advisory lock held while the schema is upgraded


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
    hints: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  # hints asked for (migration 0007)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    updated_ms: Mapped[int] = mapped_column(BigInteger)
    ended_ms: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_games_browser_game_ended", "browser_id", "game", "ended_ms"),)


class GameMoveRow(Base):
    """A solo game's actions since its record was last written whole (migration 0005): one small row
    an action, written before the move is acknowledged. The record is rewritten every few seconds
    (then these rows go); reading a game puts the two together."""

    __tablename__ = "game_moves"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)  # its place in the log
    action: Mapped[str] = mapped_column(Text)  # JSON: the record's action ({"m", "t", "illegal"?})


class GameAckRow(Base):
    """The last intent a page (its client id) had carried out in a solo game, written with the move
    (migration 0010): the ack, the game's version after it and the answer sent. Another process that
    takes the game over answers the intent sent again with it instead of playing it twice."""

    __tablename__ = "game_acks"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    cid: Mapped[str] = mapped_column(String(40), primary_key=True)
    ack: Mapped[int] = mapped_column(BigInteger)
    version: Mapped[int] = mapped_column(Integer)
    reply: Mapped[str] = mapped_column(Text)  # the answer's JSON, as sent



# -- accounts and duels (migration 0002) ---------------------------------------------------------


class UserRow(Base):
    """An account: a login name, the name shown to others and the argon2 hash of the password."""

    __tablename__ = "users"

    __table_args__ = (Index("ux_users_name_key", "name_key", unique=True),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    login: Mapped[str] = mapped_column(String(32), unique=True)  # lower case
    name: Mapped[str] = mapped_column(String(40))
    password_hash: Mapped[str] = mapped_column(String(200))
    created_ms: Mapped[int] = mapped_column(BigInteger)
    # name_key(name): one account a name, whatever the letters' case or width (migration 0006)
    name_key: Mapped[str | None] = mapped_column(String(160), nullable=True)
    renamed_from: Mapped[str | None] = mapped_column(String(40), nullable=True)  # a name it had to give up
    email: Mapped[str | None] = mapped_column(String(254), nullable=True)  # private: password resets (0014)


def name_key(name: str) -> str:
    """What two display names must not share: the name NFKC-normalised and case-folded (``Straße``,
    ``STRASSE`` and full-width ``ｓｔｒａｓｓｅ`` are one name)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


class AuthSessionRow(Base):
    """A signed-in browser: the SHA-256 of its session cookie (the cookie itself is never stored)."""

    __tablename__ = "auth_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    expires_ms: Mapped[int] = mapped_column(BigInteger)
    # what the account page lists (migration 0014): the browser, from its User-Agent at sign-in, and
    # when the session was last used (written at most every few minutes)
    browser: Mapped[str | None] = mapped_column(String(80), nullable=True)
    seen_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class UserNameRow(Base):
    """A display name an account had, until when (migration 0014): for moderators, never shown to players."""

    __tablename__ = "user_names"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(40))
    until_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_user_names_user", "user_id", "until_ms"),)


class PasswordResetRow(Base):
    """A password reset link sent by e-mail (migration 0014): the SHA-256 of its token (the token itself
    is only in the mail), whose account, until when. Used once: the row goes when the password is set."""

    __tablename__ = "password_resets"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    made_ms: Mapped[int] = mapped_column(BigInteger)
    expires_ms: Mapped[int] = mapped_column(BigInteger)


class UserBrowserRow(Base):
    """A browser whose solo games count for an account (linked at sign-up and sign-in)."""

    __tablename__ = "user_browsers"

    browser_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    linked_ms: Mapped[int] = mapped_column(BigInteger)


class SecretRow(Base):
    """Server secrets that must outlive a restart (the key of the CSRF tokens)."""

    __tablename__ = "app_secrets"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


def server_secret(engine: Engine, name: str) -> bytes:
    """The server secret ``name`` (256 random bits, written once: every process reads the same; another
    process's when two write at the same moment), e.g. the CSRF tokens' key or the practice deals'."""
    import secrets

    from sqlalchemy.exc import IntegrityError

    try:
        with Session(engine) as db, db.begin():
            row = db.get(SecretRow, name)
            if row is None:
                row = SecretRow(name=name, value=secrets.token_hex(32))
                db.add(row)
            value = row.value
    except IntegrityError:  # another thread or process wrote it first, at the same moment: theirs
        with Session(engine) as db:
            value = db.get_one(SecretRow, name).value
    return bytes.fromhex(value)


class RatingRow(Base):
    """A player's Glicko-2 rating in one game."""

    __tablename__ = "ratings"

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    game: Mapped[str] = mapped_column(String(16), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer)
    updated_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_ratings_game_rating", "game", "rating"),)


class RatingHistoryRow(Base):
    """A player's rating in one game after one match."""

    __tablename__ = "rating_history"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    game: Mapped[str] = mapped_column(String(16))
    match_id: Mapped[str] = mapped_column(String(24))
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    at_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_rating_history_user_game", "user_id", "game", "id"),)


class MatchRow(Base):
    """A duel: its format, the committed deal (its key stays on the server until the end; matches
    of the first version have a game number and a nonce), whether that deal was proved winnable,
    the two players and, once over, the result and the whole match record."""

    __tablename__ = "matches"

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    game: Mapped[str] = mapped_column(String(16))
    variant: Mapped[str] = mapped_column(String(40))
    limit_s: Mapped[int] = mapped_column(Integer)
    options: Mapped[str] = mapped_column(Text)  # JSON
    seed: Mapped[str] = mapped_column(String(64))  # the deal key (migration 0004; a game number before)
    nonce: Mapped[str] = mapped_column(String(64))
    commitment: Mapped[str] = mapped_column(String(64))
    proved: Mapped[bool | None] = mapped_column(Boolean)  # the deal was proved winnable (migration 0004)
    player_a: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    player_b: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    rating_a: Mapped[str] = mapped_column(String(80))  # "rating deviation volatility" at the start
    rating_b: Mapped[str] = mapped_column(String(80))
    state: Mapped[str] = mapped_column(String(8))  # live, over
    created_ms: Mapped[int] = mapped_column(BigInteger)
    ended_ms: Mapped[int | None] = mapped_column(BigInteger)
    winner: Mapped[int | None] = mapped_column(Integer)  # 0, 1; None: a draw or not over
    score_a: Mapped[int | None] = mapped_column(Integer)
    score_b: Mapped[int | None] = mapped_column(Integer)
    final_a: Mapped[int | None] = mapped_column(Integer)
    final_b: Mapped[int | None] = mapped_column(Integer)
    record: Mapped[str | None] = mapped_column(Text)  # the match record (JSON), once over
    outcome_a: Mapped[str | None] = mapped_column(String(16))  # how each game ended (migration 0003)
    outcome_b: Mapped[str | None] = mapped_column(String(16))
    # played apart (Play now: each player at a time of their own; migration 0013)
    apart: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    __table_args__ = (
        Index("ix_matches_state", "state"),
        Index("ix_matches_player_a", "player_a", "created_ms"),
        Index("ix_matches_player_b", "player_b", "created_ms"),
        Index("ix_matches_state_ended", "state", "ended_ms"),  # the match history, newest first
    )


class MatchMoveRow(Base):
    """The append-only log of a live duel: every event a player was told of, written before the telling.

    ``kind`` is ``act`` (``side`` played ``action``, the intent's ``cid`` and ``ack``) or ``tick``
    (the clock changed a score or ended a game). Played again in ``seq`` order, each at its time
    ``t_ms`` on the match clock, the rows rebuild the match exactly."""

    __tablename__ = "match_moves"

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(8))
    side: Mapped[int | None] = mapped_column(Integer)
    action: Mapped[str | None] = mapped_column(String(24))
    t_ms: Mapped[int] = mapped_column(BigInteger)
    cid: Mapped[str | None] = mapped_column(String(40))
    ack: Mapped[int | None] = mapped_column(BigInteger)


# -- what outlives a restart of the lobby and the sign-in (migration 0003) -------------------------


class ChallengeRow(Base):
    """An open challenge link: its code, who made it, the duel format and when (wall clock).
    One a player; it is deleted when taken up or an hour after it was made."""

    __tablename__ = "challenges"

    code: Mapped[str] = mapped_column(String(24), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), unique=True)
    format: Mapped[str] = mapped_column(String(40))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class SigninFailureRow(Base):
    """A failed sign-in, counted against a login name and an address: the SHA-256 of the key
    (``login:NAME`` or ``addr:ADDRESS``, so that no typed name is kept) and when (wall clock)."""

    __tablename__ = "signin_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key_hash: Mapped[str] = mapped_column(String(64))
    at_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (
        Index("ix_signin_failures_key_at", "key_hash", "at_ms"),
        Index("ix_signin_failures_at", "at_ms"),
    )


# -- the private stock of duel deals (migration 0004) ---------------------------------------------


class DealStockRow(Base):
    """A secret deal key proved winnable for a duel variant (``GAME/VARIANT``), waiting for its match.

    The solvers fill the stock in the background; a new match takes (deletes) the oldest row of its
    variant, so each key deals one match only, and no key is ever shown before its match ends."""

    __tablename__ = "deal_stock"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    variant: Mapped[str] = mapped_column(String(40))
    deal: Mapped[str] = mapped_column(String(64), unique=True)
    nodes: Mapped[int] = mapped_column(BigInteger)  # positions the solver searched to prove it
    made_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_deal_stock_variant", "variant", "id"),)


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


def sqlite_url(path: str | Path) -> str:
    return f"sqlite:///{Path(path).expanduser().resolve()}"


_REVISION = re.compile(r"^revision(?:\s*:[^=]*)?\s*=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN = re.compile(r"^down_revision(?:\s*:[^=]*)?\s*=\s*(.+)$", re.M)


@functools.cache
def migrations_head() -> str | None:
    """The newest migration's revision, read from the migration files as text (Alembic, which imports
    them, is loaded only when there is something to upgrade); None unless there is exactly one head."""
    revisions: set[str] = set()
    below: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN.search(text)
        if revision is None or down is None:
            return None
        revisions.add(revision.group(1))
        below.update(re.findall(r"['\"]([^'\"]+)['\"]", down.group(1)))
    heads = revisions - below
    return heads.pop() if len(heads) == 1 else None


def alembic_config(url: str) -> Any:
    """An Alembic configuration for ``url`` with this package's migrations."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", database_url(url).replace("%", "%%"))
    return config


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
            raise StoreError(f"cannot reach the database {safe_url(self.url)}: {_reason(exc)}") from exc

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
        results.setdefault(game, []).append((variant or "custom", outcome, score, bool(hints)))
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
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table)


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


class StoreError(PatienceError):
    """A database URL that cannot be used, or a database that cannot be reached."""


class ArenaLock:
    """Keeps a second arena off a database: one process without a shared bus holds it.

    Two processes that do not share a bus (``--redis-url``) would each think they own every live
    match of the database and write its log twice, so the second one is refused: on SQLite by an
    exclusive lock on ``FILE.lock`` beside the database file, on PostgreSQL by a session advisory
    lock held on a connection of its own. Both go when the process does, however it ends. ``FILE.lock``
    names the process that holds it (``PID``, or ``PID backup admin`` when it answers ``patience backup``
    and ``patience admin``, see :meth:`offer_backups`)."""

    KEY = 0x70617469  # the advisory lock's number on PostgreSQL

    def __init__(self, store: Store) -> None:
        self.store = store
        self._file: Any = None
        self._connection: Any = None

    def acquire(self) -> None:
        """Hold the lock, or raise :class:`StoreError` saying who has it and what to do."""
        url = make_url(self.store.url)
        held = ("another patience serve uses the database {where}: stop it, or let both share one arena "
                "with --redis-url (and PostgreSQL)")
        if url.get_backend_name() == "sqlite":
            if not url.database or url.database == ":memory:":
                return
            import fcntl

            path = Path(url.database + ".lock")
            try:  # readable by its owner alone, as the database is (PRIVATE_FILE)
                self._file = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, PRIVATE_FILE), "a+")
            except OSError as exc:  # no such folder, or one that cannot be written
                raise StoreError(f"cannot reach the database {url.database}: {exc.strerror or exc}") from None
            try:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self._file.close()
                self._file = None
                raise StoreError(held.format(where=url.database)) from None
            self._say("")
            return
        self._connection = self.store.engine.connect()
        got = self._connection.exec_driver_sql(f"SELECT pg_try_advisory_lock({self.KEY})").scalar()
        self._connection.commit()
        if not got:
            self._connection.close()
            self._connection = None
            raise StoreError(held.format(where=safe_url(self.store.url)))

    def offer_backups(self, offered: bool) -> None:
        """Say in ``FILE.lock`` whether this process answers ``patience backup``'s SIGUSR1 (see
        :mod:`patience.server.storage.backups`): a process that does not would be ended by it."""
        if self._file is not None:
            self._say(" backup admin" if offered else "")

    def _say(self, what: str) -> None:
        """``FILE.lock`` holds the holder's process id (and `` backup`` when it makes copies)."""
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"{os.getpid()}{what}\n")
        self._file.flush()

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._connection is not None:
            try:
                self._connection.exec_driver_sql(f"SELECT pg_advisory_unlock({self.KEY})")
                self._connection.commit()
            finally:
                self._connection.invalidate()  # the session ends, and with it any lock it held
                self._connection.close()
                self._connection = None


def database_url(url: str) -> str:
    """``url`` checked and spelled for this store's engine, or :class:`StoreError` saying what is wrong.

    Only SQLite and PostgreSQL are supported. PostgreSQL goes through psycopg 3, which is
    installed with the package: ``postgresql://`` and ``postgres://`` mean
    ``postgresql+psycopg://``, and so does ``postgresql+asyncpg://`` (the store is synchronous,
    run in worker threads, and psycopg 3 reaches the same servers; asyncpg's ``ssl=`` becomes
    libpq's ``sslmode=``).

    >>> database_url("postgres://arena:secret@db.example/arena")
    'postgresql+psycopg://arena:secret@db.example/arena'
    >>> database_url("postgresql+asyncpg://db.example/arena?ssl=require")
    'postgresql+psycopg://db.example/arena?sslmode=require'
    >>> database_url("sqlite:////var/lib/patience/patience.sqlite3")
    'sqlite:////var/lib/patience/patience.sqlite3'
    >>> database_url("mysql://db.example/arena")
    Traceback (most recent call last):
    ...
    patience.server.storage.store.StoreError: unsupported database mysql://db.example/arena: use sqlite:///FILE or ...
    """
    text = url.strip()
    if text.startswith("postgres://"):
        text = "postgresql://" + text[len("postgres://"):]
    try:
        parsed = make_url(text)
    except ArgumentError:
        raise StoreError(f"not a database URL: {_shown(text)} (expected e.g. sqlite:///FILE or "
                         "postgresql+psycopg://user@host/dbname)") from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend not in ("sqlite", "postgresql"):
        raise StoreError(f"unsupported database {safe_url(text)}: use sqlite:///FILE or postgresql+psycopg://...")
    if backend == "postgresql" and driver in ("", "asyncpg"):
        query = dict(parsed.query)
        if driver == "asyncpg" and "ssl" in query and "sslmode" not in query:
            query["sslmode"] = query.pop("ssl")
        return parsed.set(drivername="postgresql+psycopg", query=query).render_as_string(hide_password=False)
    return text


def safe_url(url: str | URL) -> str:
    """``url`` fit to print: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return _shown(str(url))


def _shown(text: str) -> str:
    # a string that is not a URL may still hold a password: show only its start
    return repr(text if len(text) <= 12 else text[:12] + "...")


def _reason(exc: BaseException) -> str:
    """The first line of what the database driver said, without SQLAlchemy's wrapping."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    return lines[0] if lines else type(orig).__name__


POOL_SIZE = 10
"""Connections a process keeps open to a database server (PostgreSQL). Under a burst the worker
threads wait for one of them rather than each opening a connection of its own and closing it after
one query: a new PostgreSQL connection is a new backend process, costlier than the query. With
:data:`POOL_OVERFLOW` a process uses at most 12 connections: 8 processes stay within PostgreSQL's
default ``max_connections`` of 100 (docs/deploy.md)."""
POOL_OVERFLOW = 2


def make_engine(url: str, *, sole: bool = False) -> Engine:
    """The engine for a URL that :func:`database_url` has checked (SQLite gets WAL and foreign keys).

    With ``sole`` (one process owns the database: ``patience serve`` without a shared arena), an SQLite
    file is opened through SQLite's ``unix-excl`` VFS: the process holds an exclusive lock on the file
    (its own connections share it) and keeps the write-ahead log's index in its memory rather than in
    a ``-shm`` file mapped into memory, which anyone who can write the folder could cut short or make
    read-only and so kill the server with SIGBUS."""
    parsed = make_url(url)
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = _sqlite_engine(url, parsed.database in (None, "", ":memory:"), sole=sole)
        else:
            connect_args = {} if "connect_timeout" in parsed.query else {"connect_timeout": 10}
            return create_engine(url, pool_pre_ping=True, connect_args=connect_args, pool_size=POOL_SIZE,
                                 max_overflow=POOL_OVERFLOW, pool_timeout=30)
    except (NoSuchModuleError, ImportError) as exc:
        raise StoreError(f"no driver for {safe_url(parsed)}: {exc}") from exc
    except (ArgumentError, TypeError) as exc:
        raise StoreError(f"cannot use the database URL {safe_url(parsed)}: {exc}") from exc
    return engine


SQLITE_READONLY = 8  # SQLite's primary result code of "attempt to write a readonly database"
PRIVATE_FILE = 0o600  # an SQLite file the store makes: its owner alone reads it (it holds secret deal keys)


def _private_file(url: str) -> None:
    """Make the SQLite file of ``url`` empty with mode 0600 when it does not exist yet (an empty file is an
    empty database), so that SQLite, which makes a new file readable by everyone (0644 less the umask),
    never does: the secret deal keys of the duels and the days to come are kept in it, and its
    write-ahead log (``-wal``, ``-shm``) gets the file's mode from SQLite. A file that exists keeps its
    mode; a folder that is missing or cannot be written is left to SQLite to report."""
    database = make_url(url).database
    if not database or database.startswith("file:"):
        return
    with contextlib.suppress(OSError):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))


def _sqlite_engine(url: str, in_memory: bool, *, sole: bool = False) -> Engine:
    if not in_memory:
        _private_file(url)
    if in_memory:
        # one shared connection, or every thread would see its own empty database
        engine = create_engine(url, connect_args={"check_same_thread": False}, poolclass=StaticPool)
    elif sole and os.name == "posix":
        import sqlite3

        target = f"file:{urllib.parse.quote(str(Path(make_url(url).database or '').resolve()))}?vfs=unix-excl"
        engine = create_engine(url, creator=lambda: sqlite3.connect(target, uri=True, check_same_thread=False,
                                                                    timeout=30))
    else:
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; a crash may lose the last commit only
        # no checkpoint inside a commit (it writes the database file and waits for the disk): a server runs
        # them beside the commits (Store.checkpoint); a short-lived command's last connection does one as it closes
        cursor.execute("PRAGMA wal_autocheckpoint=0")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "handle_error")
    def _read_only_connection(context: Any) -> None:
        # a connection SQLite opened while the file could not be written stays read-only for its life, even
        # once the file takes writes again: such an answer ends the pool's connections, as a lost server's
        # would, so the next write opens the file anew
        code = getattr(context.original_exception, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF == SQLITE_READONLY:
            context.is_disconnect = True

    return engine
