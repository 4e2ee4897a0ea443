"""The schema of the tables :mod:`patience.server.storage.store` defines: browsers and their games (the logs
of solo play), accounts and their sessions, ratings and matches (the duels' move logs), challenges,
failed sign-ins, the private stock of duel deals and the server's secrets.

These are SQLAlchemy's declarative rows (:class:`Base`; the Alembic migrations in ``migrations/`` make
and upgrade the tables, each change a file of its own in ``migrations/versions``). Tables that one room
alone uses are declared beside their statements, on the same :class:`Base` (``storage/roles.py``,
``storage/ladder.py``, ``storage/apart.py``, ...).
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, ClassVar

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    false,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

__all__ = [
    "AuthSessionRow", "Base", "BrowserRow", "ChallengeRow", "DealStockRow", "GameAckRow", "GameMoveRow", "GameRow",
    "MatchMoveRow", "MatchRow", "PasswordResetRow", "RatingHistoryRow", "RatingRow", "SecretRow", "SigninFailureRow",
    "UserBrowserRow", "UserNameRow", "UserRow", "metadata", "name_key", "server_secret",
]


class Base(DeclarativeBase):
    if TYPE_CHECKING:  # each row class makes a Table of its __tablename__ (SQLAlchemy types any FROM clause)
        __table__: ClassVar[Table]


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
