"""Arena tournaments in the database (migration 0009): the tournaments, who joined each, and its duels.

A scheduled tournament has a ``slot`` (e.g. ``hourly/2026-11-24T03/reloaded``), unique: the processes
that make the same slot's tournament at the same moment agree on the first row written
(:func:`make_tournament`). A pair is claimed in the database before its match is made
(:func:`claim_pair`): one conditional update per player (``WHERE match_id IS NULL``) in one
transaction, so of two processes that pair the same player at once only one succeeds. The match is
then written with its :class:`TournamentDuelRow` in one transaction; a claim whose match is over
(or never came, :data:`CLAIM_LAPSE_MS` later) is let go by :func:`free_players`, so a player is free
again as soon as their last duel has ended, whichever process played it.

The standings are read from the duels and their matches' results (:func:`standings`), by the rules of
:mod:`patience.tournament`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, String, and_, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from patience.ratings import PROVISIONAL_DEVIATION
from patience.server.storage.store import Base, MatchRow, RatingRow, UserRow, now_ms
from patience.tournament import DRAW, LOSS, POINTS, WIN, Standing, counted, duel_points, on_fire, rank

__all__ = ["CLAIM_LAPSE_MS", "Tournament", "TournamentDuelRow", "TournamentPlayerRow", "TournamentRow", "claim_pair",
           "count_open", "find_tournament", "free_players", "insert_duel", "join_tournament", "list_tournaments",
           "make_tournament", "pause_tournament", "player_tournaments", "release_claim",
           "running_tournaments", "standings"]

CLAIM_LAPSE_MS = 30_000  # a claimed pair whose match was never written is let go after this long


class TournamentRow(Base):
    """A tournament: its name, duel format, when it starts and ends (wall clock, ms), who made it (none:
    the site's schedule, then ``slot`` names it), and the hash of its password, if it has one."""

    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str] = mapped_column(String(60))
    format: Mapped[str] = mapped_column(String(40))
    starts_ms: Mapped[int] = mapped_column(BigInteger)
    ends_ms: Mapped[int] = mapped_column(BigInteger)
    slot: Mapped[str | None] = mapped_column(String(60), unique=True)
    created_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    password: Mapped[str | None] = mapped_column(String(120))  # an argon2id hash, as accounts' passwords
    made_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_tournaments_ends", "ends_ms"),)


class TournamentPlayerRow(Base):
    """A player in a tournament: paused or not, the duel they play now (claimed when paired), their
    last opponent (never met twice in a row)."""

    __tablename__ = "tournament_players"

    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    joined_ms: Mapped[int] = mapped_column(BigInteger)
    paused: Mapped[bool] = mapped_column(Boolean)
    match_id: Mapped[str | None] = mapped_column(String(24))
    claimed_ms: Mapped[int | None] = mapped_column(BigInteger)
    last_opponent: Mapped[str | None] = mapped_column(String(24))

    __table_args__ = (Index("ix_tournament_players_user", "user_id", "joined_ms"),)


class TournamentDuelRow(Base):
    """A duel of a tournament: its match (written in the match's own transaction) and both players."""

    __tablename__ = "tournament_duels"

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    player_a: Mapped[str] = mapped_column(String(24))
    player_b: Mapped[str] = mapped_column(String(24))
    made_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_tournament_duels_tournament", "tournament_id", "made_ms"),)


@dataclass(frozen=True)
class Tournament:
    id: str
    name: str
    format: str
    starts_ms: int
    ends_ms: int
    slot: str | None = None
    created_by: str | None = None
    password: str | None = None  # the hash

    def state(self, now_ms: int) -> str:
        """``soon``, ``on`` or ``over``."""
        return "soon" if now_ms < self.starts_ms else "on" if now_ms < self.ends_ms else "over"


def _tournament(row: Any) -> Tournament:
    return Tournament(row.id, row.name, row.format, row.starts_ms, row.ends_ms, row.slot, row.created_by, row.password)


# -- tournaments ---------------------------------------------------------------------------------


def make_tournament(engine: Engine, tournament: Tournament) -> Tournament:
    """Write a new tournament; one of a slot already made (by another process) is returned instead."""
    try:
        with engine.begin() as connection:
            connection.execute(insert(TournamentRow), [{
                "id": tournament.id, "name": tournament.name, "format": tournament.format,
                "starts_ms": tournament.starts_ms, "ends_ms": tournament.ends_ms, "slot": tournament.slot,
                "created_by": tournament.created_by, "password": tournament.password, "made_ms": now_ms()}])
    except IntegrityError:
        if tournament.slot is None:
            raise
        with engine.connect() as connection:
            row = connection.execute(select(TournamentRow.__table__)
                                     .where(TournamentRow.slot == tournament.slot)).first()
        if row is None:  # pragma: no cover - the conflict was on the slot
            raise
        return _tournament(row)
    return tournament


def find_tournament(engine: Engine, tournament_id: str) -> Tournament | None:
    with engine.connect() as connection:
        row = connection.execute(select(TournamentRow.__table__).where(TournamentRow.id == tournament_id)).first()
    return _tournament(row) if row is not None else None


def count_open(engine: Engine, user_id: str, now_ms: int) -> int:
    """How many tournaments ``user_id`` made that are to come or going on."""
    from sqlalchemy import func

    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(TournamentRow).where(
            TournamentRow.created_by == user_id, TournamentRow.ends_ms > now_ms)).scalar_one())


def running_tournaments(engine: Engine, now_ms: int) -> list[Tournament]:
    """The tournaments going on now (those in which players are paired)."""
    with engine.connect() as connection:
        rows = connection.execute(select(TournamentRow.__table__).where(
            TournamentRow.starts_ms <= now_ms, TournamentRow.ends_ms > now_ms).order_by(TournamentRow.starts_ms)).all()
    return [_tournament(row) for row in rows]


def list_tournaments(engine: Engine, now_ms: int, *, ended_within_ms: int = 86_400_000,
                     limit: int = 50, user_id: str | None = None) -> list[dict[str, Any]]:
    """Tournaments to list: those to come and going on (the site's scheduled ones first, then the
    players'; soonest first in each), then those ended lately that anyone joined (newest first), each
    with how many players joined; with ``user_id`` (a signed-in player), each says whether that player
    ``joined`` it. However many tournaments players make, the site's are on the list."""
    from sqlalchemy import func

    table = TournamentRow.__table__
    count = (select(func.count()).select_from(TournamentPlayerRow)
             .where(TournamentPlayerRow.tournament_id == TournamentRow.id).scalar_subquery())
    names = UserRow.__table__
    with engine.connect() as connection:
        coming = connection.execute(select(table, count.label("players"), names.c.name.label("by"))
                                    .outerjoin(names, names.c.id == TournamentRow.created_by)
                                    .where(TournamentRow.ends_ms > now_ms)
                                    .order_by(TournamentRow.slot.is_(None), TournamentRow.starts_ms,
                                              TournamentRow.format, TournamentRow.id)
                                    .limit(limit)).all()
        ended = connection.execute(select(table, count.label("players"), names.c.name.label("by"))
                                   .outerjoin(names, names.c.id == TournamentRow.created_by)
                                   .where(TournamentRow.ends_ms <= now_ms,
                                          TournamentRow.ends_ms > now_ms - ended_within_ms, count > 0)
                                   .order_by(TournamentRow.ends_ms.desc()).limit(limit)).all()
        mine: set[str] = set()
        if user_id is not None and (coming or ended):
            mine = set(connection.execute(select(TournamentPlayerRow.tournament_id).where(
                TournamentPlayerRow.user_id == user_id,
                TournamentPlayerRow.tournament_id.in_([row.id for row in [*coming, *ended]]))).scalars())
    listed = [{"id": row.id, "name": row.name, "format": row.format, "starts_ms": row.starts_ms,
             "ends_ms": row.ends_ms, "scheduled": row.slot is not None, "locked": row.password is not None,
             "by": row.by, "players": int(row.players), "state": _tournament(row).state(now_ms)}
              for row in [*coming, *ended]]
    if user_id is not None:
        for item in listed:
            item["joined"] = item["id"] in mine
    return listed


def player_tournaments(engine: Engine, user_id: str, now_ms: int, *, limit: int = 10) -> list[dict[str, Any]]:
    """The tournaments a player joined that have begun, the last joined first (at most ``limit``), each
    with the player's place (shared places share a number), the number of players and their points.
    A marked account has no place in any (it left their standings): none is listed."""
    with engine.connect() as connection:
        rows = connection.execute(select(TournamentRow.__table__).join(
            TournamentPlayerRow, TournamentPlayerRow.tournament_id == TournamentRow.id)
            .where(TournamentPlayerRow.user_id == user_id, TournamentRow.starts_ms <= now_ms)
            .order_by(TournamentPlayerRow.joined_ms.desc()).limit(limit)).all()
    out = []
    for row in rows:
        tournament = _tournament(row)
        table = standings(engine, tournament)
        mine = next((line for line in table if line["id"] == user_id), None)
        if mine is None:  # a marked account left the standings: the tournament is not one it has a place in
            continue
        out.append({"id": tournament.id, "name": tournament.name, "format": tournament.format,
                    "starts_ms": tournament.starts_ms, "ends_ms": tournament.ends_ms,
                    "state": tournament.state(now_ms), "rank": mine["rank"], "players": len(table),
                    "points": mine["points"]})
    return out


# -- players -------------------------------------------------------------------------------------


def join_tournament(engine: Engine, tournament_id: str, user_id: str) -> None:
    """Join, or come back after a pause: the player is paired again."""
    with engine.begin() as connection:
        done = connection.execute(update(TournamentPlayerRow).where(
            TournamentPlayerRow.tournament_id == tournament_id, TournamentPlayerRow.user_id == user_id,
        ).values(paused=False)).rowcount
        if not done:
            try:
                with connection.begin_nested():
                    connection.execute(insert(TournamentPlayerRow), [{
                        "tournament_id": tournament_id, "user_id": user_id, "joined_ms": now_ms(), "paused": False}])
            except IntegrityError:  # joined at the same moment from another page: joined
                pass


def pause_tournament(engine: Engine, tournament_id: str, user_id: str) -> bool:
    """Leave the pairing (a duel going on is played to its end); False if the player never joined."""
    with engine.begin() as connection:
        return bool(connection.execute(update(TournamentPlayerRow).where(
            TournamentPlayerRow.tournament_id == tournament_id, TournamentPlayerRow.user_id == user_id,
        ).values(paused=True)).rowcount)


def free_players(engine: Engine, tournament_id: str, now_ms: int) -> list[tuple[str, str | None]]:
    """The players of a tournament who may be paired now (joined, not paused, no duel going on), with
    their last opponents. First lets go of the claims of duels that have ended, and of claims whose
    match was never written (:data:`CLAIM_LAPSE_MS`)."""
    players = TournamentPlayerRow.__table__
    with engine.begin() as connection:
        claimed = connection.execute(select(players.c.user_id, players.c.match_id, players.c.claimed_ms,
                                            MatchRow.state).outerjoin(MatchRow, MatchRow.id == players.c.match_id)
                                     .where(players.c.tournament_id == tournament_id,
                                            players.c.match_id.is_not(None))).all()
        done = [(user, match) for user, match, at, state in claimed
                if state == "over" or (state is None and (at or 0) < now_ms - CLAIM_LAPSE_MS)]
        for user, match in done:
            connection.execute(update(TournamentPlayerRow).where(
                TournamentPlayerRow.tournament_id == tournament_id, TournamentPlayerRow.user_id == user,
                TournamentPlayerRow.match_id == match).values(match_id=None, claimed_ms=None))
        rows = connection.execute(select(players.c.user_id, players.c.last_opponent).where(
            players.c.tournament_id == tournament_id, players.c.paused.is_(False),
            players.c.match_id.is_(None))).all()
    return [(user, last) for user, last in rows]


class _Taken(Exception):
    pass


def claim_pair(engine: Engine, tournament_id: str, a: str, b: str, match_id: str, now_ms: int) -> bool:
    """Claim ``a`` and ``b`` for match ``match_id``: True if both were free (and now are not), False
    (nothing changed) if either is paired or paused already, by this process or another."""
    try:
        with engine.begin() as connection:
            for me, other in ((a, b), (b, a)):
                done = connection.execute(update(TournamentPlayerRow).where(
                    TournamentPlayerRow.tournament_id == tournament_id, TournamentPlayerRow.user_id == me,
                    TournamentPlayerRow.match_id.is_(None), TournamentPlayerRow.paused.is_(False),
                ).values(match_id=match_id, claimed_ms=now_ms, last_opponent=other)).rowcount
                if done != 1:
                    raise _Taken
    except _Taken:  # the transaction is rolled back: neither player was claimed
        return False
    return True


def release_claim(engine: Engine, tournament_id: str, match_id: str) -> None:
    """The match of a claimed pair could not be made: both players are free again."""
    with engine.begin() as connection:
        connection.execute(update(TournamentPlayerRow).where(
            TournamentPlayerRow.tournament_id == tournament_id, TournamentPlayerRow.match_id == match_id,
        ).values(match_id=None, claimed_ms=None))


def insert_duel(connection: Connection, tournament_id: str, match_id: str, a: str, b: str) -> None:
    """A tournament's duel, written in its match's transaction (run by the arena's log writer)."""
    connection.execute(insert(TournamentDuelRow), [{"match_id": match_id, "tournament_id": tournament_id,
                                                    "player_a": a, "player_b": b, "made_ms": now_ms()}])


# -- the standings -------------------------------------------------------------------------------


NO_ATTEMPT = ("no_attempt", "quit")  # the ledger's reasons of a side that made no real attempt


def _result(winner: int | None, side: int) -> str:
    return DRAW if winner is None else WIN if winner == side else LOSS


def standings(engine: Engine, tournament: Tournament) -> list[dict[str, Any]]:
    """Every player of a tournament in the order of the standings: rank, name, rating in the game,
    points, on fire, paused, the duel going on, and each finished duel (match, opponent, result,
    points, ``double`` when it was a win on fire) in the order they ended."""
    game = tournament.format.split("/", 1)[0]
    players = TournamentPlayerRow.__table__
    with engine.connect() as connection:
        people = connection.execute(
            select(players.c.user_id, players.c.paused, players.c.match_id, UserRow.name, RatingRow.rating,
                   RatingRow.deviation)
            .join(UserRow, UserRow.id == players.c.user_id)
            .outerjoin(RatingRow, and_(RatingRow.user_id == players.c.user_id, RatingRow.game == game))
            .where(players.c.tournament_id == tournament.id)).all()
        # fair play: a marked account leaves the standings, and its duels count for nobody (recomputed)
        fairplay = Base.metadata.tables["fairplay_accounts"]
        marked = set(connection.scalars(select(fairplay.c.user_id).where(
            fairplay.c.state == "marked", fairplay.c.user_id.in_([row.user_id for row in people]))))
        people = [row for row in people if row.user_id not in marked]
        duels = connection.execute(
            select(MatchRow.id, MatchRow.player_a, MatchRow.player_b, MatchRow.winner, MatchRow.state,
                   MatchRow.ended_ms)
            .join(TournamentDuelRow, TournamentDuelRow.match_id == MatchRow.id)
            .where(TournamentDuelRow.tournament_id == tournament.id)
            .order_by(MatchRow.ended_ms, MatchRow.id)).all()
        # the rating's rule of no attempt, as the ledger wrote it at each duel's end: no points either
        ledger = Base.metadata.tables["rating_changes"]
        reasons = {(m, u): r for m, u, r in connection.execute(
            select(ledger.c.match_id, ledger.c.user_id, ledger.c.reason)
            .join(TournamentDuelRow, TournamentDuelRow.match_id == ledger.c.match_id)
            .where(TournamentDuelRow.tournament_id == tournament.id)).all()}
    names = {row.user_id: row.name for row in people}
    lines: dict[str, list[dict[str, Any]]] = {row.user_id: [] for row in people}
    playing: dict[str, str] = {}
    for match_id, a, b, winner, state, _ in duels:
        if a in marked or b in marked:
            continue
        for side, (me, other) in enumerate(((a, b), (b, a))):
            if me not in lines:
                continue
            if state != "over":
                playing[me] = match_id
                continue
            reason = reasons.get((match_id, me))
            lines[me].append({"match": match_id, "opponent": names.get(other, "?"),
                              "result": counted(_result(winner, side), reason not in NO_ATTEMPT,
                                                reason != "no_attempt_opp")})
    table = []
    for row in people:
        results = tuple(d["result"] for d in lines[row.user_id])
        for duel, points in zip(lines[row.user_id], duel_points(results), strict=True):
            duel["points"] = points
            duel["double"] = points > POINTS[duel["result"]]  # a win on fire
        rating = 1500.0 if row.rating is None else float(row.rating)
        table.append(Standing(row.user_id, rating, results))
    info = {row.user_id: row for row in people}
    out = []
    for place, standing in rank(table):
        row = info[standing.user]
        out.append({"rank": place, "id": standing.user, "name": row.name, "rating": round(standing.rating),
                    "provisional": row.deviation is None or row.deviation > PROVISIONAL_DEVIATION,
                    "points": standing.points, "fire": on_fire(standing.results), "paused": bool(row.paused),
                    "playing": playing.get(standing.user), "duels": lines[standing.user]})
    return out


def players_of(engine: Engine, tournament_id: str) -> dict[str, bool]:
    """Who joined a tournament: user id -> paused."""
    with engine.connect() as connection:
        rows = connection.execute(select(TournamentPlayerRow.user_id, TournamentPlayerRow.paused).where(
            TournamentPlayerRow.tournament_id == tournament_id)).all()
    return {user: bool(paused) for user, paused in rows}


def duels_going_on(engine: Engine, tournament_id: str) -> int:
    with engine.connect() as connection:
        rows = connection.execute(select(MatchRow.id).join(TournamentDuelRow, TournamentDuelRow.match_id == MatchRow.id)
                                  .where(TournamentDuelRow.tournament_id == tournament_id,
                                         MatchRow.state == "live")).all()
    return len(rows)
