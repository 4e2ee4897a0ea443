"""What moves a rating, in the database (migration 0016): the ledger of every rated match's changes, the
traces that link accounts, and what a mark or a clear does to the ledger.

A finished match's changes are decided by :func:`patience.ladder.decide` from facts read here, written
to ``rating_changes`` (one row a player and match) and added to the ratings as deltas, all in the
transaction that writes the match's end (:func:`rate`): a refund or a release written meanwhile is
never overwritten. docs/fairplay.md ("What moves a rating") says what each rule does and why.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Float,
    ForeignKey,
    Index,
    String,
    and_,
    case,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, aliased, mapped_column

from patience.duel import Match, MatchResult
from patience.fairplay import Reason
from patience.ladder import Change, Effort, Facts, SeriesMatch, decide, effort_of, series_reason
from patience.ratings import DEFAULT, Rating, expected_score
from patience.server.storage.store import Base, RatingHistoryRow, RatingRow

__all__ = ["LINK_DAYS", "RatingChangeRow", "Release", "TraceRow", "add_traces", "advisory_locks", "browser_trace",
           "changes_of", "clear_changes", "held_of", "linked", "mark_changes", "player_lock", "rate", "refunds_for",
           "series_of"]

DAY_MS = 86_400_000
LINK_DAYS = 30  # accounts that shared a browser or an address group in the last 30 days are one for rating
REFUND_DAYS = 30  # a mark gives back what its opponents genuinely lost to it in the last 30 days
APPLIED = ("applied", "released")
PER_OPPONENT = 2  # how many matches against one opponent count towards being established
EFFORT_REASONS = ("rated", "capped", "new", "held")  # a rated match with effort (held ones once released)


class RatingChangeRow(Base):
    """One player's rating change of one match: what Glicko-2 proposed, what is applied and what is held,
    the deviation's change that goes with it, the state and the reason (:class:`patience.ladder.Change`)."""

    __tablename__ = "rating_changes"

    match_id: Mapped[str] = mapped_column(String(24), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    game: Mapped[str] = mapped_column(String(16))
    opponent_id: Mapped[str] = mapped_column(String(24))
    points: Mapped[float] = mapped_column(Float)  # the rating score: 1, 0.5, 0
    expected: Mapped[float] = mapped_column(Float)  # the score both ratings predicted at the start
    proposed: Mapped[float] = mapped_column(Float)
    applied: Mapped[float] = mapped_column(Float)  # in the rating now
    held: Mapped[float] = mapped_column(Float)  # waiting for a moderator (held), or kept while voided by a mark
    dev_delta: Mapped[float] = mapped_column(Float)  # the deviation's change, applied with ``held``
    state: Mapped[str] = mapped_column(String(8))  # applied, held, void, voided (by a mark), released
    reason: Mapped[str] = mapped_column(String(16))
    at_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_rating_changes_pair", "user_id", "opponent_id", "at_ms"),
                      Index("ix_rating_changes_opponent", "opponent_id", "at_ms"))


class TraceRow(Base):
    """Where an account signed up or in: a digest of the address group (``net``) or of the browser's id
    (``browser``), never the address itself; first and last seen."""

    __tablename__ = "account_traces"

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(8), primary_key=True)  # net, browser
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    first_ms: Mapped[int] = mapped_column(BigInteger)
    last_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_account_traces_digest", "kind", "digest", "last_ms"),)


_C = RatingChangeRow.__table__
_TR = TraceRow.__table__


def _upsert(connection: Connection, table: Any) -> Any:
    from sqlalchemy.dialects import postgresql, sqlite

    dialect: Any = postgresql if connection.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


# -- traces and links ------------------------------------------------------------------------------------


def browser_trace(browser: str) -> str:
    """A digest of a browser's id, as the traces keep it."""
    return hashlib.sha256(f"patience-browser|{browser}".encode()).hexdigest()[:32]


def add_traces(connection: Connection, user_id: str, traces: Iterable[tuple[str, str]], now_ms: int) -> None:
    """Remember that ``user_id`` signed up or in with these ``(kind, digest)`` (part of that transaction)."""
    for kind, digest in traces:
        upsert = _upsert(connection, TraceRow).values(user_id=user_id, kind=kind, digest=digest, first_ms=now_ms,
                                                      last_ms=now_ms)
        connection.execute(upsert.on_conflict_do_update(index_elements=["user_id", "kind", "digest"],
                                                        set_={"last_ms": now_ms}))


def linked(connection: Connection, a: str, b: str, now_ms: int) -> bool:
    """Did ``a`` and ``b`` sign up or in from one browser or one address group in the last
    :data:`LINK_DAYS` days (both of them within the window)?"""
    if a == b:
        return True
    other = aliased(TraceRow)
    since = now_ms - LINK_DAYS * DAY_MS
    return connection.execute(
        select(TraceRow.user_id).join(other, and_(other.kind == TraceRow.kind, other.digest == TraceRow.digest))
        .where(TraceRow.user_id == a, other.user_id == b, TraceRow.last_ms >= since, other.last_ms >= since)
        .limit(1)).first() is not None


# -- a match's end ---------------------------------------------------------------------------------------


def player_lock(user: str) -> int:
    """The key of the advisory lock a match's end takes for each of its players (a signed 64-bit integer)."""
    return int.from_bytes(hashlib.sha256(f"patience-ladder|{user}".encode()).digest()[:8], "big", signed=True)


def advisory_locks(connection: Connection, keys: Iterable[int]) -> None:
    """Take PostgreSQL's transaction-level advisory locks ``keys``, in ascending order (two transactions that
    take theirs in one order never wait for each other in a circle); held until the commit. A lock taken
    again in the same transaction is granted at once. SQLite writes one transaction at a time anyway."""
    if connection.dialect.name != "postgresql":
        return
    for key in sorted(set(keys)):
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def _standings(connection: Connection, ids: Iterable[str]) -> dict[str, str]:
    table = Base.metadata.tables["fairplay_accounts"]
    wanted = sorted(set(ids))
    return {u: s for u, s in connection.execute(select(table.c.user_id, table.c.state)
                                                .where(table.c.user_id.in_(wanted))).all()}


def _taken(connection: Connection, a: str, b: str, game: str, day_ms: int, week_ms: int
           ) -> tuple[tuple[float, float], tuple[float, float]]:
    """The net rating ``a`` took from ``b`` and ``b`` from ``a`` in ``game`` since ``day_ms`` and since ``week_ms``
    (applied changes only): ((a's day, b's day), (a's week, b's week)), in one query."""
    day = func.coalesce(func.sum(case((_C.c.at_ms >= day_ms, _C.c.applied), else_=0.0)), 0.0)
    found = {u: (float(d or 0.0), float(w or 0.0)) for u, d, w in connection.execute(
        select(_C.c.user_id, day, func.coalesce(func.sum(_C.c.applied), 0.0)).where(
            or_(and_(_C.c.user_id == a, _C.c.opponent_id == b), and_(_C.c.user_id == b, _C.c.opponent_id == a)),
            _C.c.game == game, _C.c.at_ms >= week_ms, _C.c.state.in_(APPLIED)).group_by(_C.c.user_id)).all()}
    (ad, aw), (bd, bw) = found.get(a, (0.0, 0.0)), found.get(b, (0.0, 0.0))
    return (ad, bd), (aw, bw)


def _rated(connection: Connection, users: Sequence[str], game: str) -> list[int]:
    """The rated matches with effort of each of ``users`` in ``game``, at most :data:`PER_OPPONENT` counted per
    opponent (two puppets playing each other do not make each other established), in one query."""
    counts = dict.fromkeys(users, 0)
    for user, _, n in connection.execute(
            select(_C.c.user_id, _C.c.opponent_id, func.count()).where(
                _C.c.user_id.in_(list(users)), _C.c.game == game, _C.c.reason.in_(EFFORT_REASONS),
                _C.c.state.in_(APPLIED)).group_by(_C.c.user_id, _C.c.opponent_id)).all():
        counts[user] += min(PER_OPPONENT, int(n))
    return [counts[u] for u in users]


def _quits(connection: Connection, users: Sequence[str], since_ms: int) -> list[int]:
    """Each of ``users``' losses with no attempt since ``since_ms``, in one query."""
    found: dict[str, int] = dict(connection.execute(select(_C.c.user_id, func.count()).where(
        _C.c.user_id.in_(list(users)), _C.c.reason.in_(("no_attempt", "quit")), _C.c.points == 0.0,
        _C.c.at_ms >= since_ms).group_by(_C.c.user_id)).all())
    return [int(found.get(u, 0)) for u in users]


def _add_rating(connection: Connection, user: str, game: str, delta: float, dev_delta: float,
                volatility: float | None, now_ms: int, *, count: bool = False) -> tuple[float, float]:
    """Add a change to a rating (a new player's: 1500 ± 350 before it); the rating and its deviation after it."""
    start = DEFAULT
    row = {"user_id": user, "game": game, "rating": start.rating + delta, "deviation": start.deviation + dev_delta,
           "volatility": start.volatility if volatility is None else volatility, "matches": int(count),
           "updated_ms": now_ms}
    upsert = _upsert(connection, RatingRow).values(**row)
    changes: dict[str, Any] = {"rating": RatingRow.rating + delta, "deviation": RatingRow.deviation + dev_delta,
                               "updated_ms": now_ms}
    if volatility is not None:
        changes["volatility"] = volatility
    if count:
        changes["matches"] = RatingRow.matches + 1
    connection.execute(upsert.on_conflict_do_update(index_elements=["user_id", "game"], set_=changes))
    found = connection.execute(select(RatingRow.rating, RatingRow.deviation).where(
        RatingRow.user_id == user, RatingRow.game == game)).first()
    return (0.0, 0.0) if found is None else (float(found.rating), float(found.deviation))


def efforts(match: Match) -> tuple[Effort, Effort]:
    a, b = (effort_of(s.record()) for s in match.sessions)
    return a, b


def facts(connection: Connection, match: Match, result: MatchResult, after: tuple[Rating, Rating],
          now_ms: int) -> Facts:
    """What :func:`patience.ladder.decide` needs of a finished match, read in its transaction: five queries
    (the standings, the link, what each took from the other, the rated matches and the give-ups of both)."""
    (a, b), game = (p.id for p in match.players), match.game
    states = _standings(connection, (a, b))
    day, week = now_ms - DAY_MS, now_ms - 7 * DAY_MS
    before = (match.players[0].rating, match.players[1].rating)
    taken_day, taken_week = _taken(connection, a, b, game, day, week)
    rated, quits = _rated(connection, (a, b), game), _quits(connection, (a, b), day)
    return Facts(
        efforts=efforts(match), points=(result.points(0), result.points(1)),
        proposed=(after[0].rating - before[0].rating, after[1].rating - before[1].rating),
        linked=linked(connection, a, b, now_ms), taken_day=taken_day, taken_week=taken_week,
        rated=(rated[0], rated[1]), quits_day=(quits[0], quits[1]),
        review=(states.get(a) == "review", states.get(b) == "review"),
        marked=(states.get(a) == "marked", states.get(b) == "marked"))


def rate(connection: Connection, match: Match, result: MatchResult, after: tuple[Rating, Rating],
         now_ms: int) -> tuple[Change, Change]:
    """Decide and write a finished match's rating changes: the ledger rows, each rating plus its applied
    change (the deviation by the same share of Glicko-2's change, the volatility when any is applied),
    the history lines. Part of the transaction that writes the match's end.

    The facts are read under both players' advisory locks (:func:`advisory_locks`), held to the commit: two
    ends of matches of one player, on two processes at one moment, are decided one after the other, each
    reading what the other applied (the caps per opponent, the count of rated matches, the give-ups)."""
    advisory_locks(connection, (player_lock(p.id) for p in match.players))
    f = facts(connection, match, result, after, now_ms)
    changes = decide(f)
    players = match.players
    for side, (player, change) in enumerate(zip(players, changes, strict=True)):
        start, new = player.rating, after[side]
        dev_delta = (new.deviation - start.deviation) * change.share
        applied_dev = dev_delta if change.state == "applied" else 0.0
        volatility = new.volatility if change.state == "applied" and change.share > 0 else None
        rating, deviation = _add_rating(connection, player.id, match.game, change.applied, applied_dev, volatility,
                                        now_ms, count=True)
        connection.execute(insert(RatingChangeRow), [{
            "match_id": match.id, "user_id": player.id, "game": match.game, "opponent_id": players[1 - side].id,
            "points": f.points[side], "expected": expected_score(start, players[1 - side].rating),
            "proposed": change.proposed, "applied": change.applied, "held": change.held,
            "dev_delta": 0.0 if change.state == "applied" else dev_delta, "state": change.state,
            "reason": change.reason, "at_ms": now_ms}])
        connection.execute(insert(RatingHistoryRow), [{
            "user_id": player.id, "game": match.game, "match_id": match.id, "rating": rating,
            "deviation": deviation, "at_ms": now_ms}])
    return changes


def series_of(connection: Connection, winner: str, loser: str, game: str, now_ms: int, since_ms: int = 0
              ) -> Reason | None:
    """Why the series of ``winner`` against ``loser`` in the last 24 h (and since ``since_ms``, the winner's
    last clear) goes to the moderators, or None (:func:`patience.ladder.series_reason`)."""
    rows = connection.execute(select(_C.c.points, _C.c.expected, _C.c.reason).where(
        _C.c.user_id == winner, _C.c.opponent_id == loser, _C.c.game == game,
        _C.c.at_ms >= max(since_ms, now_ms - DAY_MS))).all()
    return series_reason(SeriesMatch(float(p), float(e), r == "no_attempt_opp" and p == 1.0) for p, e, r in rows)


# -- marks and clears ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Release:
    """A change a mark or a clear applied (or took back): whose, which match, the points."""

    user_id: str
    match_id: str
    game: str
    points: float


def _involving(user: str) -> Any:
    return or_(_C.c.user_id == user, _C.c.opponent_id == user)


def _resolve(connection: Connection, user: str, now_ms: int) -> list[Release]:
    """Settle the held changes of ``user``'s matches by both players' standing now: a marked player's
    change and a loss to a marked player are voided (kept, for a clear to undo); a gain over a marked
    player is applied; with either player in review a change stays held; else it is applied (released)."""
    rows = connection.execute(select(_C).where(_involving(user), _C.c.state == "held")).all()
    states = _standings(connection, [u for r in rows for u in (r.user_id, r.opponent_id)])
    out = []
    for r in rows:
        mine, theirs = states.get(r.user_id), states.get(r.opponent_id)
        where = and_(_C.c.match_id == r.match_id, _C.c.user_id == r.user_id)
        if mine == "marked" or (theirs == "marked" and r.held < 0):
            connection.execute(update(RatingChangeRow).where(where).values(state="voided"))
        elif "review" in (mine, theirs):
            continue
        else:
            _add_rating(connection, r.user_id, r.game, r.held, r.dev_delta, None, now_ms)
            connection.execute(update(RatingChangeRow).where(where).values(
                state="released", applied=r.applied + r.held, held=0.0, dev_delta=0.0))
            out.append(Release(r.user_id, r.match_id, r.game, r.held))
    return out


def refunds_for(connection: Connection, marked: str, now_ms: int, given: dict[tuple[str, str], float]
                ) -> list[Release]:
    """What the opponents of ``marked`` genuinely lost to it: per opponent and game, the net of the
    applied changes of their matches in the last :data:`REFUND_DAYS` days (losses less gains, never
    below 0) less what was given back already (``given``: by opponent and game), spread over their
    lost matches, newest first. Never to an account linked to it."""
    rows = connection.execute(select(_C).where(
        _C.c.opponent_id == marked, _C.c.user_id != marked, _C.c.state.in_(APPLIED),
        _C.c.at_ms >= now_ms - REFUND_DAYS * DAY_MS).order_by(_C.c.at_ms.desc())).all()
    by_pair: dict[tuple[str, str], list[Any]] = {}
    for r in rows:
        by_pair.setdefault((r.user_id, r.game), []).append(r)
    out = []
    for (user, game), mine in by_pair.items():
        owed = -sum(r.applied for r in mine) - given.get((user, game), 0.0)
        if owed <= 0.005 or linked(connection, user, marked, now_ms):
            continue
        for r in mine:
            if owed <= 0.005:
                break
            if r.applied >= 0:
                continue
            part = min(owed, -r.applied)
            out.append(Release(user, r.match_id, game, part))
            owed -= part
    return out


def mark_changes(connection: Connection, marked: str, now_ms: int) -> list[Release]:
    """A mark's effect on the ledger: held changes of its matches settled (:func:`_resolve`); the
    released ones returned."""
    return _resolve(connection, marked, now_ms)


def clear_changes(connection: Connection, cleared: str, now_ms: int) -> list[Release]:
    """A clear's effect on the ledger: the changes a mark of ``cleared`` voided are held again, then all
    held changes of its matches settled by the standings now (applied unless a player is in review)."""
    connection.execute(update(RatingChangeRow).where(_involving(cleared), _C.c.state == "voided")
                       .values(state="held"))
    return _resolve(connection, cleared, now_ms)


def add_points(connection: Connection, user: str, game: str, points: float, now_ms: int) -> None:
    """Add ``points`` to a rating (a refund, or one taken back)."""
    _add_rating(connection, user, game, points, 0.0, None, now_ms)


# -- what a profile shows -----------------------------------------------------------------------------


def held_of(connection: Connection, user: str) -> dict[str, float]:
    """The points held per game of a player (waiting for a moderator's decision)."""
    return {g: float(h) for g, h in connection.execute(
        select(_C.c.game, func.sum(_C.c.held)).where(_C.c.user_id == user, _C.c.state == "held")
        .group_by(_C.c.game)).all()}


def changes_of(connection: Connection, user: str, match_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """A player's change in each of these matches: applied, held, state, reason."""
    if not match_ids:
        return {}
    return {r.match_id: {"applied": round(r.applied, 1), "held": round(r.held, 1), "proposed": round(r.proposed, 1),
                         "state": r.state, "reason": r.reason}
            for r in connection.execute(select(_C).where(_C.c.user_id == user, _C.c.match_id.in_(list(match_ids))))}
