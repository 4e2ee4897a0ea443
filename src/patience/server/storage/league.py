"""The duel tables and what is read from them: ratings, matches and their move logs, what the
pages show (leaderboards, profiles, match history, a finished match with its replay frames).

The writes here are small functions of a database connection; the arena hands them to its log
writer, which runs each batch in one transaction (see :class:`patience.server.storage.writer.GroupWriter`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from patience.duel import FORMATS, Match, MatchResult
from patience.errors import PatienceError
from patience.games import get_game
from patience.ladder import Change
from patience.ratings import PROVISIONAL_DEVIATION, Rating
from patience.record import replay
from patience.rng import check_seed
from patience.server.storage.analysis import queue_match
from patience.server.storage.fairplay import FairPlayRow, flag_series, marked_ids
from patience.server.storage.ladder import changes_of, held_of, rate
from patience.server.storage.roles import CLOSED_PREFIX
from patience.server.storage.store import (
    ChallengeRow,
    MatchMoveRow,
    MatchRow,
    RatingHistoryRow,
    RatingRow,
    UserBrowserRow,
    UserRow,
    game_stats,
    name_key,
    now_ms,
)
from patience.session import ManualClock
from patience.session import Session as GameSession

__all__ = [
    "DUEL_GAMES", "HISTORY_PAGE", "History", "MoveRow", "OpenChallenge", "applied_ratings", "delete_challenges",
    "finish_match",
    "insert_challenge", "insert_match", "insert_moves", "leaderboard", "live_match_ids", "load_rating", "match_history",
    "match_view", "names_of", "open_challenges", "profile", "recent_matches", "saved_matches",
]

DUEL_GAMES = tuple(FORMATS)
HISTORY_PAGE = 20  # finished matches a page of the match history


@dataclass(frozen=True)
class MoveRow:
    """One row of a match's move log (see :class:`patience.server.storage.store.MatchMoveRow`)."""

    seq: int
    kind: str  # act, tick
    side: int | None
    action: str | None
    t_ms: int
    cid: str | None = None
    ack: int | None = None


def _upsert(connection: Connection, table: Any) -> Any:
    """An INSERT that can say what to do on a conflict, in this connection's dialect."""
    from sqlalchemy.dialects import postgresql, sqlite

    dialect: Any = postgresql if connection.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def rating_text(rating: Rating) -> str:
    return f"{rating.rating!r} {rating.deviation!r} {rating.volatility!r}"


def parse_rating(text: str) -> Rating:
    r, d, v = (float(x) for x in text.split())
    return Rating(r, d, v)


# -- writes (run by the arena's log writer) ------------------------------------------------------


def insert_match(connection: Connection, match: Match) -> None:
    a, b = match.players
    connection.execute(insert(MatchRow), [{
        "id": match.id, "game": match.game, "variant": match.format.variant_name, "limit_s": match.format.limit_s,
        "options": json.dumps(match.options, sort_keys=True), "seed": str(match.seed), "nonce": match.nonce,
        "commitment": match.commitment, "proved": match.proved, "player_a": a.id, "player_b": b.id,
        "rating_a": rating_text(a.rating), "rating_b": rating_text(b.rating), "state": "live", "created_ms": now_ms(),
    }])


def insert_moves(connection: Connection, rows: Iterable[tuple[str, MoveRow]]) -> None:
    batch = [{"match_id": match_id, "seq": r.seq, "kind": r.kind, "side": r.side, "action": r.action,
              "t_ms": r.t_ms, "cid": r.cid, "ack": r.ack} for match_id, r in rows]
    if batch:
        connection.execute(insert(MatchMoveRow), batch)


def applied_ratings(match: Match, after: tuple[Rating, Rating], changes: Sequence[Change]) -> list[Rating]:
    """Both ratings as a match's end left them: at the start plus the applied change, the deviation moved by
    the share of Glicko-2's change kept (when applied), the volatility Glicko-2's when any change is applied."""
    return [Rating(p.rating.rating + c.applied,
                   p.rating.deviation + (r.deviation - p.rating.deviation) * c.share * (c.state == "applied"),
                   r.volatility if c.state == "applied" and c.share > 0 else p.rating.volatility)
            for p, r, c in zip(match.players, after, changes, strict=True)]


def finish_match(connection: Connection, match: Match, result: MatchResult, after: tuple[Rating, Rating]
                 ) -> tuple[Change, Change]:
    """The end of a match: its result and record, both rating changes as the ladder's rules decide them
    (:func:`patience.server.storage.ladder.rate`: added to the ratings as they are now, with the ledger
    and history lines), and a lopsided series put before the moderators. Returns the changes."""
    now = now_ms()
    changes = rate(connection, match, result, after, now)
    record = match.record()
    if "ratings_after" in record:  # what was applied, not Glicko-2's proposal
        record["ratings_after"] = [{"rating": round(r.rating, 1), "deviation": round(r.deviation, 1),
                                    "volatility": r.volatility} for r in applied_ratings(match, after, changes)]
    connection.execute(update(MatchRow).where(MatchRow.id == match.id).values(
        state="over", ended_ms=now, winner=result.winner, score_a=result.scores[0], score_b=result.scores[1],
        final_a=result.finals[0], final_b=result.finals[1], outcome_a=result.outcomes[0],
        outcome_b=result.outcomes[1], record=json.dumps(record)))
    queue_match(connection, match.id, match.game, record["games"], now)  # analysed for everyone, budget permitting
    if result.winner is not None:
        winner, loser = match.players[result.winner].id, match.players[1 - result.winner].id
        flag_series(connection, winner, loser, match.game, now)
    return changes


@dataclass(frozen=True)
class OpenChallenge:
    """A challenge link waiting for a friend: its code, who made it, the format key, when (wall clock, ms)."""

    code: str
    user: str
    format: str
    made_ms: int


def insert_challenge(connection: Connection, challenge: OpenChallenge) -> None:
    """Keep a new challenge; a player has one open challenge, so an older one of theirs goes."""
    connection.execute(delete(ChallengeRow).where(ChallengeRow.user_id == challenge.user))
    connection.execute(insert(ChallengeRow), [{"code": challenge.code, "user_id": challenge.user,
                                               "format": challenge.format, "created_ms": challenge.made_ms}])


def delete_challenges(connection: Connection, codes: Iterable[str]) -> None:
    wanted = list(codes)
    if wanted:
        connection.execute(delete(ChallengeRow).where(ChallengeRow.code.in_(wanted)))


# -- reads ---------------------------------------------------------------------------------------


def open_challenges(engine: Engine, made_after_ms: int) -> list[OpenChallenge]:
    """The challenges made after ``made_after_ms`` (older ones have lapsed and are deleted here)."""
    with engine.begin() as connection:
        connection.execute(delete(ChallengeRow).where(ChallengeRow.created_ms <= made_after_ms))
        rows = connection.execute(select(ChallengeRow.code, ChallengeRow.user_id, ChallengeRow.format,
                                         ChallengeRow.created_ms)).all()
    return [OpenChallenge(code, user, fmt, made) for code, user, fmt, made in rows]


def load_rating(engine: Engine, user_id: str, game: str) -> Rating:
    """A player's rating in ``game`` (a new player's: 1500 ± 350)."""
    with Session(engine) as db:
        row = db.get(RatingRow, (user_id, game))
        return Rating() if row is None else Rating(row.rating, row.deviation, row.volatility)


_SEEKERS = (select(UserRow.id, RatingRow.rating, RatingRow.deviation, RatingRow.volatility,
                   select(FairPlayRow.category).where(FairPlayRow.user_id == UserRow.id, FairPlayRow.state == "marked")
                   .limit(1).scalar_subquery())
            .select_from(UserRow)
            .outerjoin(RatingRow, (RatingRow.user_id == UserRow.id) & (RatingRow.game == bindparam("game")))
            .where(UserRow.id.in_(bindparam("user_ids", expanding=True))))  # made once: a reading binds its values


def seekers_facts(engine: Engine, game: str, user_ids: Iterable[str]) -> dict[str, tuple[Rating, str | None]]:
    """What seeks need of the database, for many players in one query: each player's rating in
    ``game`` (a new player's, 1500 ± 350, when they have none) and the category of their account's
    mark (None: not marked). A player with no account is left out."""
    with engine.connect() as connection:
        rows = connection.execute(_SEEKERS, {"game": game, "user_ids": list(user_ids)}).all()
    return {user: (Rating() if rating is None else Rating(rating, deviation, volatility), mark)
            for user, rating, deviation, volatility, mark in rows}


def saved_matches(engine: Engine, *, state: str = "live", match_id: str | None = None,
                  ) -> list[tuple[MatchRow, dict[str, str], list[MoveRow]]]:
    """The matches in ``state`` (or just ``match_id``, if it is in that state) with their players'
    names and their move logs in order."""
    out = []
    query = select(MatchRow).where(MatchRow.state == state)
    if match_id is not None:
        query = query.where(MatchRow.id == match_id)
    with Session(engine) as db:
        for row in list(db.scalars(query)):
            names = dict(db.execute(select(UserRow.id, UserRow.name)
                                    .where(UserRow.id.in_([row.player_a, row.player_b]))).all())
            moves = [MoveRow(m.seq, m.kind, m.side, m.action, m.t_ms, m.cid, m.ack) for m in db.scalars(
                select(MatchMoveRow).where(MatchMoveRow.match_id == row.id).order_by(MatchMoveRow.seq))]
            db.expunge(row)
            out.append((row, names, moves))
    return out


def live_match_ids(engine: Engine) -> list[str]:
    """The matches going on, by the database."""
    with Session(engine) as db:
        return list(db.scalars(select(MatchRow.id).where(MatchRow.state == "live")))


def _rating_dict(row: RatingRow) -> dict[str, Any]:
    return {"rating": round(row.rating), "deviation": round(row.deviation), "provisional":
            row.deviation > PROVISIONAL_DEVIATION, "matches": row.matches}


def leaderboard(engine: Engine, game: str, limit: int = 100) -> list[dict[str, Any]]:
    """Players of ``game`` by rating: established ratings first, provisional ones (marked) after; a closed
    account leaves the rankings (its matches stay in the history)."""
    with Session(engine) as db:
        rows = db.execute(select(RatingRow, UserRow.name).join(UserRow, UserRow.id == RatingRow.user_id)
                          .where(RatingRow.game == game, RatingRow.user_id.not_in(marked_ids()),  # fair play
                                 UserRow.login.not_like(f"{CLOSED_PREFIX}%"))
                          .order_by(RatingRow.rating.desc()).limit(limit)).all()
    board = [{"id": r.user_id, "name": name, **_rating_dict(r)} for r, name in rows]
    board.sort(key=lambda e: (e["provisional"], -e["rating"]))
    return board


def _match_summary(row: MatchRow, names: Mapping[str, str]) -> dict[str, Any]:
    return {"id": row.id, "game": row.game, "variant": row.variant, "limit_s": row.limit_s, "state": row.state,
            "created_ms": row.created_ms, "ended_ms": row.ended_ms, "winner": row.winner,
            "players": [{"id": row.player_a, "name": names.get(row.player_a, "?")},
                        {"id": row.player_b, "name": names.get(row.player_b, "?")}],
            "scores": [row.score_a, row.score_b], "finals": [row.final_a, row.final_b],
            "outcomes": [row.outcome_a, row.outcome_b], "apart": bool(row.apart)}


def names_of(engine: Engine, ids: Iterable[str]) -> dict[str, str]:
    """The names of these players, by id."""
    with Session(engine) as db:
        return _names(db, ids)


def _names(db: Session, ids: Iterable[str]) -> dict[str, str]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    return dict(db.execute(select(UserRow.id, UserRow.name).where(UserRow.id.in_(wanted))).all())


def recent_matches(engine: Engine, user_id: str | None, limit: int = 20, before_ms: int | None = None,
                   ) -> list[dict[str, Any]]:
    with Session(engine) as db:
        query = select(MatchRow).order_by(MatchRow.created_ms.desc()).limit(limit)
        if user_id is not None:
            query = query.where(or_(MatchRow.player_a == user_id, MatchRow.player_b == user_id))
        if before_ms is not None:
            query = query.where(MatchRow.created_ms < before_ms)
        rows = list(db.scalars(query))
        names = _names(db, [p for r in rows for p in (r.player_a, r.player_b)])
        return [_match_summary(r, names) for r in rows]


def find_players(engine: Engine, player: str) -> list[tuple[str, str]]:
    """``(id, name)`` of the account whose id is ``player``, else of the one account whose display name
    it is (names are unique, letters' case and width aside: see :func:`name_key`); none if neither."""
    with Session(engine) as db:
        row = db.get(UserRow, player)
        if row is not None:
            return [(row.id, row.name)]
        return [(user_id, name) for user_id, name in db.execute(
            select(UserRow.id, UserRow.name).where(UserRow.name_key == name_key(player)).limit(1))]


@dataclass(frozen=True)
class History:
    """One page of the match history: its matches (newest first), its number, how many pages and matches."""

    matches: list[dict[str, Any]]
    page: int
    pages: int  # 1 when there is no match at all
    total: int


def match_history(engine: Engine, *, player_ids: Iterable[str] | None = None, game: str | None = None,
                  page: int = 1, per_page: int = HISTORY_PAGE) -> History:
    """Page ``page`` (from 1) of the finished matches, newest first, of these players and this game."""
    where = [MatchRow.state == "over"]
    if player_ids is not None:
        ids = list(player_ids)
        where.append(or_(MatchRow.player_a.in_(ids), MatchRow.player_b.in_(ids)))
    if game is not None:
        where.append(MatchRow.game == game)
    with Session(engine) as db:
        total = int(db.scalar(select(func.count()).select_from(MatchRow).where(*where)) or 0)
        pages = max(1, -(-total // per_page))
        rows = [] if page > pages else list(db.scalars(
            select(MatchRow).where(*where).order_by(MatchRow.ended_ms.desc(), MatchRow.id.desc())
            .offset((page - 1) * per_page).limit(per_page)))
        names = _names(db, [p for r in rows for p in (r.player_a, r.player_b)])
        matches = [_match_summary(r, names) for r in rows]
    return History(matches, page, pages, total)


def profile(engine: Engine, user_id: str) -> dict[str, Any] | None:
    """A player's page: ratings (with the points held, waiting for a moderator) and their history per game,
    duel and solo statistics, recent matches (each with this player's rating change and its reason)."""
    with Session(engine) as db:
        user = db.get(UserRow, user_id)
        if user is None:
            return None
        ratings = {r.game: _rating_dict(r) for r in db.scalars(select(RatingRow).where(RatingRow.user_id == user_id))}
        for game, points in held_of(db.connection(), user_id).items():
            ratings.setdefault(game, {})["held"] = round(points, 1)
        history: dict[str, list[dict[str, Any]]] = {}
        for h in db.scalars(select(RatingHistoryRow).where(RatingHistoryRow.user_id == user_id)
                            .order_by(RatingHistoryRow.id)):
            history.setdefault(h.game, []).append({"at_ms": h.at_ms, "rating": round(h.rating),
                                                   "deviation": round(h.deviation), "match": h.match_id})
        duels: dict[str, dict[str, int]] = {}
        for game, winner, side_a, apart in db.execute(
                select(MatchRow.game, MatchRow.winner, MatchRow.player_a == user_id, MatchRow.apart)
                .where(MatchRow.state == "over", or_(MatchRow.player_a == user_id, MatchRow.player_b == user_id))):
            # "apart": of those played, how many were Play now's (same deal, each at a time of their own)
            figures = duels.setdefault(game, {"played": 0, "won": 0, "lost": 0, "drawn": 0, "apart": 0})
            figures["played"] += 1
            figures["apart"] += bool(apart)
            mine = 0 if side_a else 1
            figures["drawn" if winner is None else "won" if winner == mine else "lost"] += 1
        browsers = list(db.scalars(select(UserBrowserRow.browser_id).where(UserBrowserRow.user_id == user_id)))
        solo: dict[str, dict[str, Any]] = {}
        if browsers:  # per game and variant, wins with a hint apart (as the start page shows them)
            solo = {game: figures.to_dict() for game, figures in game_stats(db, browsers).items() if figures.played}
        out: dict[str, Any] = {"user": {"id": user.id, "name": user.name, "since_ms": user.created_ms},
                               "ratings": ratings, "history": history, "duels": duels, "solo": solo}
    out["recent"] = recent_matches(engine, user_id, limit=20)
    with engine.connect() as connection:
        changes = changes_of(connection, user_id, [m["id"] for m in out["recent"]])
    for m in out["recent"]:
        m["change"] = changes.get(m["id"])
    return out


def match_view(engine: Engine, match_id: str) -> dict[str, Any] | None:
    """A match for its page: while live, only what everybody may know (never the seed); once
    over, the whole record and, for the replay viewer, both games step by step."""
    with Session(engine) as db:
        row = db.get(MatchRow, match_id)
        if row is None:
            return None
        names = _names(db, [row.player_a, row.player_b])
        out = _match_summary(row, names)
        out["commitment"] = row.commitment
        out["options"] = json.loads(row.options)
        if row.state != "over" or row.record is None:
            return out
        record = json.loads(row.record)
    out["record"] = record
    out["frames"] = [frames(g) for g in record["games"]]
    return out


def frames(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A game record as the positions its player saw, one after each action (the first: the deal).

    The server plays the record through the rules engine: the replay viewer draws tables and holds no rule.
    """
    final = replay(record)
    clock = ManualClock()
    session = GameSession(get_game(str(record["game"])), check_seed(record["seed"]), record.get("options") or {},
                          clock=clock)
    out = [_frame(session, None, 0, True)]
    for action in record.get("actions", []):
        clock.set_ms(int(action["t"]))
        ok = True
        try:
            session.apply_action(str(action["m"]))
        except PatienceError:
            ok = False  # a wrong click that cost points (Der Fächer)
        out.append(_frame(session, str(action["m"]), int(action["t"]), ok))
    end = record.get("end")
    if end is not None:
        clock.set_ms(int(end["t"]))
        session.tick()
        out.append(_frame(session, "end", int(end["t"]), True))
        if "match_t" in end:  # a duel's pool, added when the match ended
            session.settle(int(end["match_t"]))
            out.append(_frame(session, "match_end", int(end["match_t"]), True))
    assert session.score == final.score
    return out


def _frame(session: GameSession, action: str | None, t_ms: int, ok: bool) -> dict[str, Any]:
    view = session.state.view()
    return {"m": action, "t": t_ms, "ok": ok, "score": session.score, "piles": view["piles"],
            "counters": view["counters"], "outcome": session.outcome.value if session.outcome else None}
