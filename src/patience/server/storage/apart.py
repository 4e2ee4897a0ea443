"""Play now in the database (migration 0013): same-deal matches played apart.

A row of ``apart_matches`` is one match whose two players play the same secret deal each at a time
of their own. The host's game is written with the row, before the first card is shown
(:func:`host`); a challenger takes the row with one conditional UPDATE, in the same transaction as
their own game (:func:`take`): of two challengers at the same instant, on any processes, one finds
the row still ``open`` and the other finds nothing to take. When both games are over, the match is
written once more, as a finished row of ``matches`` (``apart`` true) with both new ratings, again
behind a conditional UPDATE (:func:`complete`), so it completes exactly once. The games themselves
are solo games (``games``), played and saved like any: their table rows show ``now:ID`` where a game
number would be, never the key.

States: ``open`` (no challenger yet), ``taken``, ``done`` (in ``matches``), ``expired`` (no
challenger within :data:`patience.duel.PENDING_DAYS` days: no rating change, the key shown),
``closed`` (open when its host was marked for fair play: never dealt again) and ``void`` (taken and
not done when either player was marked: no rating change) — :func:`close_marked`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Index, String, false, func, insert, or_, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Mapped, mapped_column

from patience.duel import Match, MatchResult, Pending
from patience.ratings import Rating
from patience.server.storage.league import finish_match, insert_match
from patience.server.storage.store import Base, GameRow, MatchRow, SavedGame, UserBrowserRow, UserRow, write_games

__all__ = ["OVER", "ApartRow", "apart_label", "close_marked", "complete", "expire", "find_apart", "host",
           "last_opponent", "mark_seen", "net_of", "of_user", "open_count", "open_games", "stale_games", "take",
           "unfinished_of", "unseen"]


OVER = ("done", "expired", "closed", "void")  # the states of a match that has come to its end


class ApartRow(Base):
    """A match of Play now: the format, the secret deal and its commitment, the host and their game,
    and, once taken, the challenger and theirs."""

    __tablename__ = "apart_matches"

    id: Mapped[str] = mapped_column(String(24), primary_key=True)  # the match's id in ``matches`` once done
    format: Mapped[str] = mapped_column(String(40))  # e.g. reloaded/standard/300
    game: Mapped[str] = mapped_column(String(16))
    deal: Mapped[str] = mapped_column(String(64))  # the key: never shown before the match ends or expires
    commitment: Mapped[str] = mapped_column(String(64))
    proved: Mapped[bool] = mapped_column(Boolean)
    host_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    host_game: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), unique=True)
    host_net: Mapped[str] = mapped_column(String(64))  # a digest of the host's address (an IPv6 /64): see net_of
    host_rating: Mapped[float] = mapped_column(Float)  # at the start: how challengers are matched to it
    challenger_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    challenger_game: Mapped[str | None] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), unique=True)
    state: Mapped[str] = mapped_column(String(8))  # open, taken, done, expired
    made_ms: Mapped[int] = mapped_column(BigInteger)
    taken_ms: Mapped[int | None] = mapped_column(BigInteger)
    ended_ms: Mapped[int | None] = mapped_column(BigInteger)
    host_seen: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())  # the result, once in
    challenger_seen: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    __table_args__ = (
        Index("ix_apart_open", "format", "state", "host_rating"),
        Index("ix_apart_host", "host_id", "state"),
        Index("ix_apart_challenger", "challenger_id", "state"),
    )


def apart_label(apart_id: str) -> str:
    """What a game of Play now shows where a game number would be (and keeps in the games table)."""
    return f"now:{apart_id}"


def net_of(address: str) -> str:
    """A digest of an address group (an IPv4 address, an IPv6 /64): enough to tell two players from one
    place apart, without keeping the address itself."""
    return hashlib.sha256(f"patience-net|{address}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Apart:
    id: str
    format: str
    game: str
    deal: str
    commitment: str
    proved: bool
    host_id: str
    host_game: str
    host_rating: float
    challenger_id: str | None
    challenger_game: str | None
    state: str
    made_ms: int
    taken_ms: int | None
    ended_ms: int | None


def _apart(row: Any) -> Apart:
    return Apart(row.id, row.format, row.game, row.deal, row.commitment, bool(row.proved), row.host_id, row.host_game,
                 float(row.host_rating), row.challenger_id, row.challenger_game, row.state, row.made_ms, row.taken_ms,
                 row.ended_ms)


_T = ApartRow.__table__


def host(engine: Engine, apart: Apart, net: str, saved: SavedGame) -> None:
    """Write a new match waiting for a challenger and its host's game (not played yet), in one transaction."""
    with engine.begin() as connection:
        write_games(connection, [saved])
        connection.execute(insert(ApartRow), [{
            "id": apart.id, "format": apart.format, "game": apart.game, "deal": apart.deal,
            "commitment": apart.commitment, "proved": apart.proved, "host_id": apart.host_id,
            "host_game": apart.host_game, "host_net": net, "host_rating": apart.host_rating, "state": "open",
            "made_ms": apart.made_ms}])


def take(engine: Engine, apart_id: str, user_id: str, saved: SavedGame, now_ms: int) -> bool:
    """Take a waiting match as its challenger, with the challenger's game, in one transaction: True if
    it was still open, False (nothing written) if another challenger took it first or it expired."""
    with engine.begin() as connection:
        write_games(connection, [saved])  # first (the row refers to it); gone with a rollback
        taken = connection.execute(update(ApartRow).where(
            ApartRow.id == apart_id, ApartRow.state == "open", ApartRow.challenger_id.is_(None)).values(
            state="taken", challenger_id=user_id, challenger_game=saved.id, taken_ms=now_ms))
        if taken.rowcount != 1:
            connection.rollback()
            return False
    return True


def open_games(engine: Engine, fmt: str, rating: float, user_id: str, net: str, browser: str, not_before_ms: int,
               limit: int = 200) -> list[Pending]:
    """The open matches of a pool that ``user_id`` may take (in ``browser``, from the address ``net``):
    not their own, nor one hosted in their browser or from their address, nor of an account linked to
    one of their browsers, nor of their last opponent; the ``limit`` closest to ``rating``. ``since``
    is in seconds since the epoch."""
    games = GameRow.__table__
    with engine.connect() as connection:
        browsers = select(UserBrowserRow.browser_id).where(UserBrowserRow.user_id == user_id)
        kin = select(UserBrowserRow.user_id).where(UserBrowserRow.browser_id.in_(browsers))
        last = _last_opponent(connection, user_id)
        query = (select(_T.c.id, _T.c.host_id, _T.c.host_rating, _T.c.made_ms)
                 .join(games, games.c.id == _T.c.host_game)
                 .where(_T.c.format == fmt, _T.c.state == "open", _T.c.made_ms > not_before_ms,
                        _T.c.host_id != user_id, _T.c.host_net != net, _T.c.host_id.not_in(kin),
                        games.c.browser_id != browser)
                 .order_by(func.abs(_T.c.host_rating - rating)).limit(limit))
        if last is not None:
            query = query.where(_T.c.host_id != last)
        rows = connection.execute(query).all()
    return [Pending(r.id, r.host_id, float(r.host_rating), r.made_ms / 1000) for r in rows]


def _last_opponent(connection: Connection, user_id: str) -> str | None:
    """The player ``user_id`` last met, live or apart (a match taken counts from the taking)."""
    live = connection.execute(
        select(MatchRow.player_a, MatchRow.player_b, MatchRow.created_ms)
        .where(or_(MatchRow.player_a == user_id, MatchRow.player_b == user_id))
        .order_by(MatchRow.created_ms.desc()).limit(1)).first()
    apart = connection.execute(
        select(_T.c.host_id, _T.c.challenger_id, _T.c.taken_ms)
        .where(_T.c.challenger_id.is_not(None), or_(_T.c.host_id == user_id, _T.c.challenger_id == user_id))
        .order_by(_T.c.taken_ms.desc()).limit(1)).first()
    best = max((r for r in (live, apart) if r is not None), key=lambda r: r[2] or 0, default=None)
    if best is None:
        return None
    return str(best[1] if best[0] == user_id else best[0])


def last_opponent(engine: Engine, user_id: str) -> str | None:
    with engine.connect() as connection:
        return _last_opponent(connection, user_id)


def open_count(engine: Engine, user_id: str, fmt: str) -> int:
    """The matches of a pool that ``user_id`` hosts and nobody has taken yet."""
    with engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(_T).where(
            _T.c.host_id == user_id, _T.c.format == fmt, _T.c.state == "open")) or 0)


def unfinished_of(engine: Engine, user_id: str) -> tuple[Apart, str] | None:
    """A match of Play now whose game ``user_id`` has not finished yet, and that game's id."""
    games = GameRow.__table__
    with engine.connect() as connection:
        for side, game_column in ((_T.c.host_id, _T.c.host_game), (_T.c.challenger_id, _T.c.challenger_game)):
            row = connection.execute(
                select(_T).join(games, games.c.id == game_column)
                .where(side == user_id, _T.c.state.in_(("open", "taken")), games.c.outcome.is_(None))
                .order_by(_T.c.made_ms.desc()).limit(1)).first()
            if row is not None:
                apart = _apart(row)
                return apart, str(apart.host_game if apart.host_id == user_id else apart.challenger_game)
    return None


def find_apart(engine: Engine, apart_id: str | None = None, *, game_id: str | None = None) -> Apart | None:
    """A match of Play now by its id, or by the id of either player's game."""
    with engine.connect() as connection:
        query = select(_T)
        if apart_id is not None:
            query = query.where(_T.c.id == apart_id)
        else:
            query = query.where(or_(_T.c.host_game == game_id, _T.c.challenger_game == game_id))
        row = connection.execute(query).first()
    return _apart(row) if row is not None else None


def complete(engine: Engine, apart_id: str, match: Match, result: MatchResult, after: tuple[Rating, Rating],
             now_ms: int) -> bool:
    """Finish a taken match once: its row in ``matches`` (played apart, over), the result and both new
    ratings, in one transaction. False (nothing written) if it was done already (by another process)."""
    with engine.begin() as connection:
        done = connection.execute(update(ApartRow).where(ApartRow.id == apart_id, ApartRow.state == "taken").values(
            state="done", ended_ms=now_ms))
        if done.rowcount != 1:
            connection.rollback()
            return False
        insert_match(connection, match)
        connection.execute(update(MatchRow).where(MatchRow.id == match.id).values(apart=True))
        finish_match(connection, match, result, after)
    return True


def close_marked(engine: Engine, user_id: str, now_ms: int) -> list[Apart]:
    """An account was marked: the matches it hosts that nobody took close (``closed``: no challenger is
    dealt them), and those taken but not done with it on either side are void (``void``: no rating
    changes, whatever the games' ends). The matches changed now, in their new state."""
    with engine.begin() as connection:
        rows = connection.execute(select(_T).where(
            or_(_T.c.host_id == user_id, _T.c.challenger_id == user_id), _T.c.state.in_(("open", "taken")))).all()
        changed = []
        for row in rows:
            state = "closed" if row.state == "open" else "void"
            if connection.execute(update(ApartRow).where(ApartRow.id == row.id, ApartRow.state == row.state).values(
                    state=state, ended_ms=now_ms)).rowcount == 1:
                changed.append(replace(_apart(row), state=state, ended_ms=now_ms))
    return changed


def expire(engine: Engine, made_before_ms: int, now_ms: int) -> list[Apart]:
    """Let the matches nobody took in time expire (no rating change); the ones expired now."""
    with engine.begin() as connection:
        rows = connection.execute(select(_T).where(_T.c.state == "open", _T.c.made_ms <= made_before_ms)).all()
        gone = []
        for row in rows:
            if connection.execute(update(ApartRow).where(ApartRow.id == row.id, ApartRow.state == "open").values(
                    state="expired", ended_ms=now_ms)).rowcount == 1:
                gone.append(_apart(row))
    return gone


def stale_games(engine: Engine, dealt_before_ms: int, limit: int = 100) -> list[tuple[str, str, int]]:
    """Games of open or taken matches still going that were dealt before ``dealt_before_ms`` (the host's
    with the match, the challenger's when taken): ``(format, game id, dealt ms)``, for the caller to
    bring back those whose time limit has passed (a player left and no process holds the game)."""
    games = GameRow.__table__
    out: list[tuple[str, str, int]] = []
    with engine.connect() as connection:
        for game_column, dealt in ((_T.c.host_game, _T.c.made_ms), (_T.c.challenger_game, _T.c.taken_ms)):
            out += [(r[0], r[1], int(r[2])) for r in connection.execute(
                select(_T.c.format, games.c.id, dealt).join(games, games.c.id == game_column)
                .where(_T.c.state.in_(("open", "taken")), games.c.outcome.is_(None), dealt < dealt_before_ms)
                .limit(limit))]
    return out


def ready(engine: Engine, limit: int = 100) -> list[str]:
    """Taken matches whose two games are both over: to complete."""
    host_game, challenger_game = GameRow.__table__.alias("h"), GameRow.__table__.alias("c")
    with engine.connect() as connection:
        return [str(r[0]) for r in connection.execute(
            select(_T.c.id).join(host_game, host_game.c.id == _T.c.host_game)
            .join(challenger_game, challenger_game.c.id == _T.c.challenger_game)
            .where(_T.c.state == "taken", host_game.c.outcome.is_not(None), challenger_game.c.outcome.is_not(None))
            .limit(limit))]


def of_user(engine: Engine, user_id: str, limit: int = 50) -> list[dict[str, Any]]:
    """A player's matches of Play now, newest first, as their page lists them: never the other player's
    figures before the end (the caller decides what to show; this gives both games' figures)."""
    host_game, challenger_game = GameRow.__table__.alias("h"), GameRow.__table__.alias("c")
    host_user, challenger_user = UserRow.__table__.alias("hu"), UserRow.__table__.alias("cu")
    match = MatchRow.__table__
    with engine.connect() as connection:
        rows = connection.execute(
            select(_T, host_game.c.score.label("h_score"), host_game.c.outcome.label("h_outcome"),
                   host_game.c.ms.label("h_ms"), challenger_game.c.score.label("c_score"),
                   challenger_game.c.outcome.label("c_outcome"), challenger_game.c.ms.label("c_ms"),
                   host_user.c.name.label("h_name"), challenger_user.c.name.label("c_name"),
                   match.c.winner, match.c.final_a, match.c.final_b)
            .join(host_game, host_game.c.id == _T.c.host_game)
            .outerjoin(challenger_game, challenger_game.c.id == _T.c.challenger_game)
            .join(host_user, host_user.c.id == _T.c.host_id)
            .outerjoin(challenger_user, challenger_user.c.id == _T.c.challenger_id)
            .outerjoin(match, match.c.id == _T.c.id)
            .where(or_(_T.c.host_id == user_id, _T.c.challenger_id == user_id))
            .order_by(func.coalesce(_T.c.taken_ms, _T.c.made_ms).desc()).limit(limit)).all()
    return [dict(r._mapping) for r in rows]


def unseen(engine: Engine, user_id: str) -> int:
    """Results of Play now that came in since the player last looked."""
    with engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(_T).where(
            _T.c.state.in_(OVER),
            or_((_T.c.host_id == user_id) & (_T.c.host_seen == false()),
                (_T.c.challenger_id == user_id) & (_T.c.challenger_seen == false())))) or 0)


def mark_seen(engine: Engine, user_id: str) -> None:
    """The player has seen every result that came in."""
    with engine.begin() as connection:
        connection.execute(update(ApartRow).where(ApartRow.host_id == user_id, ApartRow.state.in_(OVER))
                           .values(host_seen=True))
        connection.execute(update(ApartRow).where(ApartRow.challenger_id == user_id,
                                                  ApartRow.state.in_(OVER)).values(challenger_seen=True))
