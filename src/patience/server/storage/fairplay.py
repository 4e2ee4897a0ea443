"""Fair play in the database (migration 0015): the evidence of every rated game and its analysis, reports,
the accounts flagged or marked, the moderators' audit log and the rating points given back.

The evidence of a game (each action's think time and how the page says it was made, see
:mod:`patience.fairplay`) is kept in memory while it is played and written once, with the game's end:
no query per move. Its analysis (hint agreement, timing figures) is written later by a worker thread.
docs/fairplay.md describes what is kept and who sees it (moderators only).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import BigInteger, Float, ForeignKey, Index, Integer, String, Text, delete, insert, or_, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Mapped, mapped_column

import patience.server.storage.ladder as ladder
from patience.fairplay import (
    SCORE_FLAG,
    AccountScore,
    GameFigures,
    Reason,
    account_score,
    climb_sign,
    expected_agreement,
)
from patience.server.storage.roles import CLOSED_PREFIX
from patience.server.storage.store import Base, RatingHistoryRow, RatingRow, UserRow

__all__ = [
    "CATEGORIES",
    "HELD_VERDICTS",
    "MARK_DAYS",
    "NOTES",
    "REPORT_CATEGORIES",
    "AuditRow",
    "Evidence",
    "EvidenceRow",
    "FairPlayRow",
    "Note",
    "RefundRow",
    "ReportRow",
    "account_view",
    "act",
    "add_report",
    "analysed",
    "fairplay_of",
    "flag_series",
    "marked_category",
    "marked_ids",
    "pending",
    "queue",
    "rescore",
    "write_evidence",
]

REPORT_CATEGORIES = ("bot", "name", "other")  # bot or engine, offensive name, other
CATEGORIES = ("bot", "name", "other")  # why an account is marked (the marked player is told which)
MARK_DAYS = 30  # the opponents of a marked account's rated games of the last 30 days get their points back
ACTIONS = ("mark_bot", "clear", "close")


def _ms() -> int:
    return int(time.time() * 1000)


class EvidenceRow(Base):
    """One player's evidence of one rated game: the steps (compact JSON) and, once analysed, the figures."""

    __tablename__ = "fairplay_games"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)  # "m:MATCH:SIDE" or "g:GAME"
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(8))  # duel, apart, tour, daily
    game: Mapped[str] = mapped_column(String(16))
    match_id: Mapped[str | None] = mapped_column(String(24))
    game_id: Mapped[str | None] = mapped_column(String(40))
    rating: Mapped[float] = mapped_column(Float)
    steps: Mapped[str] = mapped_column(Text)  # JSON: [[log index, think ms, how, drag ms, drag px], ...]
    record: Mapped[str | None] = mapped_column(Text)  # the game record to replay (JSON), until analysed
    figures: Mapped[str | None] = mapped_column(Text)  # JSON GameFigures, once analysed
    verdict: Mapped[str | None] = mapped_column(String(16))  # clear, suspect, machine, clairvoyant (0016)
    at_ms: Mapped[int] = mapped_column(BigInteger)
    analysed_ms: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_fairplay_games_user", "user_id", "at_ms"),
                      Index("ix_fairplay_games_pending", "analysed_ms"))


class FairPlayRow(Base):
    """An account's fair-play standing: ``review`` (flagged, in the queue), ``marked``, ``cleared``."""

    __tablename__ = "fairplay_accounts"

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    state: Mapped[str] = mapped_column(String(8))
    category: Mapped[str | None] = mapped_column(String(8))  # of a mark: bot, name, other
    score: Mapped[int] = mapped_column(Integer)
    reasons: Mapped[str] = mapped_column(Text)  # JSON list
    note: Mapped[str | None] = mapped_column(Text)
    by_id: Mapped[str | None] = mapped_column(String(24))  # the moderator; None: the detection
    at_ms: Mapped[int] = mapped_column(BigInteger)
    since_ms: Mapped[int] = mapped_column(BigInteger)  # games before this (a clear) no longer count

    __table_args__ = (Index("ix_fairplay_accounts_state", "state", "score"),)


class ReportRow(Base):
    """A player's report of an account."""

    __tablename__ = "fairplay_reports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reporter_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    category: Mapped[str] = mapped_column(String(8))
    note: Mapped[str | None] = mapped_column(Text)
    at_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_fairplay_reports_user", "user_id", "at_ms"),)


class AuditRow(Base):
    """What was done to an account, by whom (None: the detection), why."""

    __tablename__ = "fairplay_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    by_id: Mapped[str | None] = mapped_column(String(24))
    action: Mapped[str] = mapped_column(String(16))  # flag, mark, mark_bot, clear, close, refund, unrefund, release
    note: Mapped[str] = mapped_column(Text)  # a moderator's text, or the server's in English (NOTES)
    why: Mapped[str | None] = mapped_column(Text)  # JSON {"k", "p"}: the server's note by key (0022); None: a person's
    at_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_fairplay_audit_user", "user_id", "id"),)


class RefundRow(Base):
    """Rating points given back to a player who lost them to a marked account."""

    __tablename__ = "rating_refunds"

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    match_id: Mapped[str] = mapped_column(String(24), primary_key=True)
    game: Mapped[str] = mapped_column(String(16))
    from_id: Mapped[str] = mapped_column(String(24))  # the marked account
    points: Mapped[float] = mapped_column(Float)
    at_ms: Mapped[int] = mapped_column(BigInteger)


# -- the evidence ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """A game's evidence as the server hands it over at the game's end."""

    key: str
    user_id: str
    kind: str
    game: str
    match_id: str | None
    game_id: str | None
    rating: float
    steps: list[list[Any]]
    record: dict[str, Any]


def write_evidence(connection: Connection, items: Iterable[Evidence]) -> None:
    """Write evidence rows (a part of the transaction that writes the game's end); one a key."""
    items = [_owned(connection, e) for e in items]
    rows = [{"key": e.key, "user_id": e.user_id, "kind": e.kind, "game": e.game, "match_id": e.match_id,
             "game_id": e.game_id, "rating": e.rating, "steps": json.dumps(e.steps, separators=(",", ":")),
             "record": json.dumps(e.record, separators=(",", ":")), "at_ms": _ms()} for e in items]
    if not rows:
        return
    known = set(connection.scalars(select(EvidenceRow.key).where(EvidenceRow.key.in_([r["key"] for r in rows]))))
    rows = [r for r in rows if r["key"] not in known and r["user_id"]]
    if rows:
        connection.execute(insert(EvidenceRow), rows)


def _owned(connection: Connection, e: Evidence) -> Evidence:
    """A solo game's evidence (the deal of the day, Play now) knows its browser, not its account: the
    attempt or the match played apart says whose it is; the rating is the account's now."""
    if e.user_id or e.game_id is None:
        return e
    tables = Base.metadata.tables
    attempts, apart = tables["daily_attempts"], tables["apart_matches"]
    user = connection.scalar(select(attempts.c.user_id).where(attempts.c.game_id == e.game_id))
    kind = "daily"
    if user is None:
        kind = "apart"
        row = connection.execute(select(apart.c.id, apart.c.host_id, apart.c.host_game, apart.c.challenger_id)
                                 .where(or_(apart.c.host_game == e.game_id, apart.c.challenger_game == e.game_id))
                                 ).first()
        user = None if row is None else row.host_id if row.host_game == e.game_id else row.challenger_id
    if user is None:
        return e
    rating = connection.scalar(select(RatingRow.rating).where(RatingRow.user_id == user, RatingRow.game == e.game))
    return Evidence(e.key, user, kind, e.game, e.match_id, e.game_id, float(rating or 1500.0), e.steps, e.record)


def pending(engine: Engine, limit: int = 20) -> list[EvidenceRow]:
    """Evidence not analysed yet, oldest first."""
    with engine.connect() as connection:
        rows = connection.execute(select(EvidenceRow.__table__).where(EvidenceRow.analysed_ms.is_(None))
                                  .order_by(EvidenceRow.at_ms).limit(limit)).all()
    return rows  # type: ignore[return-value]


HELD_VERDICTS = ("machine", "suspect", "clairvoyant", "scouted")  # a game with one of these: its result waits


def analysed(engine: Engine, key: str, figures: GameFigures, verdict: str) -> None:
    with engine.begin() as connection:
        connection.execute(update(EvidenceRow).where(EvidenceRow.key == key).values(
            figures=json.dumps(figures.to_dict()), verdict=verdict, analysed_ms=_ms(), record=None))


# -- the score and the marks ---------------------------------------------------------------------------


def _standing(connection: Connection, user_id: str) -> Any:
    return connection.execute(select(FairPlayRow.__table__).where(FairPlayRow.user_id == user_id)).first()


NOTES = {
    "note_mark": "marked at once by the detection",
    "note_flag": "flagged for review by the detection",
    "note_flag_series": "flagged for review by the detection: {series}",
    "note_release": "{delta:+.1f} held points of match {match} applied",
    "note_refund": "{points:.1f} points of match {match} given back",
    "note_unrefund": "{points:.1f} points of match {match} taken back: the account that took them was cleared",
    "note_reopen_open": "Play now match {match} open again: {cleared} cleared",
    "note_reopen_taken": "Play now match {match} taken again: {cleared} cleared",
}
"""The notes the server writes in the audit log, in English by key; the log keeps the English text and the key
with its figures, which the moderators' page writes in its language (``mod.reason`` in ``web/js/arena-text.js``)."""


@dataclass(frozen=True)
class Note:
    """A note of the server's: a key of :data:`NOTES` and its figures (a figure may be a :class:`Reason`)."""

    k: str
    p: dict[str, Any]

    def __str__(self) -> str:
        return NOTES[self.k].format(**self.p)

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "p": {n: v.to_dict() if isinstance(v, Reason) else v for n, v in self.p.items()}}


def _audit(connection: Connection, user_id: str, by: str | None, action: str, note: str | Note) -> None:
    why = json.dumps(note.to_dict()) if isinstance(note, Note) else None
    connection.execute(insert(AuditRow), [{"user_id": user_id, "by_id": by, "action": action,
                                           "note": str(note)[:2000], "why": why, "at_ms": _ms()}])


CLIMB_GAMES = 10  # the rating climb is read over an account's last this many rated results in one game
CLIMB_POPULATION = 5000  # ... against the climbs of others in the most recent this many rating results


def _climb(connection: Connection, user_id: str) -> Reason | None:
    """The rating-climb sign (:func:`patience.fairplay.climb_sign`): the account's gain over its last
    :data:`CLIMB_GAMES` results in the game it played last (from 1500, or the rating before them),
    against other accounts' gains over their first as many results."""
    last = connection.execute(select(RatingHistoryRow.game).where(RatingHistoryRow.user_id == user_id)
                              .order_by(RatingHistoryRow.id.desc()).limit(1)).scalar()
    if last is None:
        return None
    mine = list(connection.scalars(select(RatingHistoryRow.rating).where(
        RatingHistoryRow.user_id == user_id, RatingHistoryRow.game == last)
        .order_by(RatingHistoryRow.id.desc()).limit(CLIMB_GAMES + 1)))[::-1]
    window = mine[-CLIMB_GAMES:]
    own = window[-1] - (mine[0] if len(mine) > CLIMB_GAMES else 1500.0)
    others: dict[str, list[float]] = {}
    for user, rating in connection.execute(select(RatingHistoryRow.user_id, RatingHistoryRow.rating).where(
            RatingHistoryRow.game == last, RatingHistoryRow.user_id != user_id)
            .order_by(RatingHistoryRow.id.desc()).limit(CLIMB_POPULATION)).all():
        others.setdefault(user, []).append(rating)
    population = [ratings[::-1][len(window) - 1] - 1500.0 for ratings in others.values() if len(ratings) >= len(window)]
    return climb_sign(own, population)


def _score_of(connection: Connection, user_id: str, since_ms: int) -> AccountScore:
    rows = connection.execute(select(EvidenceRow.figures, EvidenceRow.rating).where(
        EvidenceRow.user_id == user_id, EvidenceRow.figures.is_not(None), EvidenceRow.at_ms >= since_ms)
        .order_by(EvidenceRow.at_ms.desc()).limit(30)).all()
    figures = [GameFigures.from_dict(json.loads(cast(str, f))) for f, _ in rows]  # (the query keeps those with figures)
    rating = float(rows[0][1]) if rows else 1500.0
    return account_score(figures, rating, _climb(connection, user_id) if figures else None)


def rescore(engine: Engine, user_id: str) -> tuple[AccountScore, str | None]:
    """Score an account again after a game was analysed: a game at machine speed marks it at once
    (category ``bot``, its opponents' points given back); a score at the flag threshold puts it in the
    moderators' queue. Returns the score and the account's state now."""
    with engine.begin() as connection:
        row = _standing(connection, user_id)
        if row is not None and row.state == "marked":
            return AccountScore(100, "mark", (), 0, 0, 0), "marked"
        since = row.since_ms if row is not None else 0
        score = _score_of(connection, user_id, since)
        if score.state == "mark":
            _set(connection, user_id, "marked", "bot", score, Note("note_mark", {}), None)
            _refund(connection, user_id)
            return score, "marked"
        if score.state == "review" and (row is None or row.state != "review" or row.score != score.score):
            _set(connection, user_id, "review", None, score, Note("note_flag", {}), None)
            return score, "review"
        if row is not None and row.state == "review":
            connection.execute(update(FairPlayRow).where(FairPlayRow.user_id == user_id).values(
                score=max(score.score, row.score)))
        return score, row.state if row is not None else None


def _set(connection: Connection, user_id: str, state: str, category: str | None, score: AccountScore | None,
         note: str | Note, by: str | None, since_ms: int | None = None, kept: Sequence[Any] = ()) -> None:
    """Put the account in ``state``, with the score's reasons after the ``kept`` ones (as stored)."""
    row = _standing(connection, user_id)
    values = {"state": state, "category": category, "note": str(note), "by_id": by, "at_ms": _ms()}
    if score is not None:
        values.update(score=score.score, reasons=json.dumps([*kept, *(r.to_dict() for r in score.reasons)]))
    if since_ms is not None:
        values["since_ms"] = since_ms
    if row is None:
        connection.execute(insert(FairPlayRow), [{"user_id": user_id, "score": 0, "reasons": "[]",
                                                  "since_ms": 0, **values}])
    else:
        connection.execute(update(FairPlayRow).where(FairPlayRow.user_id == user_id).values(**values))
    action = {"marked": "mark_bot" if by is not None else "mark", "review": "flag", "cleared": "clear"}[state]
    _audit(connection, user_id, by, action, note)


def _refund(connection: Connection, marked: str) -> None:
    """A mark of ``marked``: the held changes of its matches settled (its own and its opponents' losses
    voided, its opponents' gains applied), and what its opponents genuinely lost to it in the last
    MARK_DAYS days given back (:func:`patience.server.storage.ladder.refunds_for`: the net per opponent
    and game, never to a linked account), each a change added to the rating as it is now, written in the
    moderators' audit log."""
    now = _ms()
    for r in ladder.mark_changes(connection, marked, now):
        _audit(connection, r.user_id, None, "release", Note("note_release", {"delta": r.points, "match": r.match_id}))
    given: dict[tuple[str, str], float] = {}
    for user, game, points in connection.execute(select(RefundRow.user_id, RefundRow.game, RefundRow.points)
                                                 .where(RefundRow.from_id == marked)).all():
        given[(user, game)] = given.get((user, game), 0.0) + points
    for r in ladder.refunds_for(connection, marked, now, given):
        if connection.scalar(select(RefundRow.points).where(RefundRow.user_id == r.user_id,
                                                            RefundRow.match_id == r.match_id)) is not None:
            continue
        connection.execute(insert(RefundRow), [{"user_id": r.user_id, "match_id": r.match_id, "game": r.game,
                                                "from_id": marked, "points": r.points, "at_ms": now}])
        ladder.add_points(connection, r.user_id, r.game, r.points, now)
        _audit(connection, r.user_id, None, "refund", Note("note_refund", {"points": r.points, "match": r.match_id}))


def _unrefund(connection: Connection, cleared: str, by: str) -> None:
    """A clear of ``cleared``: the refunds its mark gave are taken back (each a change added to the rating
    as it is now, in the audit log), and the changes the mark voided are held again and settled as a
    clear settles them (:func:`patience.server.storage.ladder.clear_changes`)."""
    now = _ms()
    for user, match_id, game, points in connection.execute(
            select(RefundRow.user_id, RefundRow.match_id, RefundRow.game, RefundRow.points)
            .where(RefundRow.from_id == cleared)).all():
        ladder.add_points(connection, user, game, -points, now)
        _audit(connection, user, by, "unrefund", Note("note_unrefund", {"points": points, "match": match_id}))
    connection.execute(delete(RefundRow).where(RefundRow.from_id == cleared))
    for r in ladder.clear_changes(connection, cleared, now):
        _audit(connection, r.user_id, by, "release", Note("note_release", {"delta": r.points, "match": r.match_id}))


def _reopen(connection: Connection, cleared: str, by: str) -> None:
    """A clear of a mark undoes what the mark did to the account's matches of Play now
    (:func:`patience.server.storage.apart.close_marked`, the only step that closes or voids one): a match it
    hosted that the mark closed is open again (the sweep lets it expire as any open match, once it has waited
    :data:`patience.duel.PENDING_DAYS` days), a match the mark voided is taken again (completed, and rated,
    once both games are over), unless the other player is marked now; each in the audit log of both players.
    (The table is read by name: the module of Play now builds on this one.)"""
    table = Base.metadata.tables["apart_matches"]
    rows = connection.execute(select(table.c.id, table.c.host_id, table.c.challenger_id, table.c.state).where(
        or_(table.c.host_id == cleared, table.c.challenger_id == cleared),
        table.c.state.in_(("closed", "void")))).all()
    others = {r.challenger_id if r.host_id == cleared else r.host_id for r in rows} - {None}
    marked = set(connection.scalars(select(FairPlayRow.user_id).where(
        FairPlayRow.user_id.in_(sorted(others)), FairPlayRow.state == "marked"))) if others else set()
    for row in rows:
        if (row.challenger_id if row.host_id == cleared else row.host_id) in marked:
            continue
        state = "taken" if row.state == "void" else "open"
        if connection.execute(update(table).where(table.c.id == row.id, table.c.state == row.state).values(
                state=state, ended_ms=None)).rowcount != 1:
            continue
        note = Note(f"note_reopen_{state}", {"match": row.id, "cleared": cleared})
        for user in {row.host_id, row.challenger_id} - {None}:
            _audit(connection, str(user), by, "reopen", note)


def flag_series(connection: Connection, winner: str, loser: str, game: str, now_ms: int) -> None:
    """Put ``winner`` before the moderators (``review``: its gains are held from then on) when its series
    against ``loser`` in 24 h is lopsided (:func:`patience.ladder.series_reason`), with the evidence in its
    reasons; an account already in review or marked is left as it is, and a clear counts from then on."""
    row = _standing(connection, winner)
    if row is not None and row.state in ("review", "marked"):
        return
    why = ladder.series_of(connection, winner, loser, game, now_ms, row.since_ms if row is not None else 0)
    if why is None:
        return
    name = connection.scalar(select(UserRow.name).where(UserRow.id == loser)) or loser
    series = Reason("series", {"why": why, "name": name, "game": game, "user": loser})  # the name as it is now: queue
    score = AccountScore(max(SCORE_FLAG, row.score if row is not None else 0), "review", (series,), 0, 0, 0)
    _set(connection, winner, "review", None, score, Note("note_flag_series", {"series": series}), None,
         kept=json.loads(row.reasons) if row is not None else [])


def act(engine: Engine, user_id: str, action: str, note: str, by: str) -> str:
    """A moderator's action on an account (``mark_bot``, ``clear``, ``close``), with a note; the account's
    state after it. Closing is done by the caller (:func:`patience.server.storage.roles.close_account`)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}: {', '.join(ACTIONS)}")
    with engine.begin() as connection:
        if action == "mark_bot":
            _set(connection, user_id, "marked", "bot", None, note, by)
            _refund(connection, user_id)
            return "marked"
        if action == "clear":
            was = _standing(connection, user_id)
            _set(connection, user_id, "cleared", None, None, note, by, since_ms=_ms())
            if was is not None and was.state in ("marked", "review"):
                _unrefund(connection, user_id, by)
            if was is not None and was.state == "marked":
                _reopen(connection, user_id, by)
            connection.execute(update(FairPlayRow).where(FairPlayRow.user_id == user_id).values(score=0))
            return "cleared"
        _audit(connection, user_id, by, "close", note)
        return "closed"


def marked_category(engine: Engine, user_id: str) -> str | None:
    """The category of an account's mark, or None when it is not marked."""
    with engine.connect() as connection:
        return connection.scalar(select(FairPlayRow.category).where(  # type: ignore[no-any-return]
            FairPlayRow.user_id == user_id, FairPlayRow.state == "marked"))


def marked_ids() -> Any:
    """A subquery of the marked accounts' ids (leaderboards and boards leave them out)."""
    return select(FairPlayRow.user_id).where(FairPlayRow.state == "marked")


def rated_games(engine: Engine, user_id: str) -> int:
    """How many rated duels an account has finished."""
    with engine.connect() as connection:
        return int(connection.scalar(select(RatingRow.matches).where(RatingRow.user_id == user_id)
                                     .order_by(RatingRow.matches.desc()).limit(1)) or 0)


# -- reports ---------------------------------------------------------------------------------------------


def add_report(engine: Engine, reporter: str, user_id: str, category: str, note: str | None) -> None:
    with engine.begin() as connection:
        connection.execute(insert(ReportRow), [{"reporter_id": reporter, "user_id": user_id, "category": category,
                                                "note": (note or None) and note[:500], "at_ms": _ms()}])


# -- what moderators and profiles see ------------------------------------------------------------------


def _name_series(connection: Connection, reasons: Iterable[list[Any]]) -> None:
    """Name the other account of each series among ``reasons`` (as stored) by its name now (a closed account's:
    its mark), not the one it had when the series was seen."""
    series = [r["p"] for rs in reasons for r in rs if isinstance(r, dict) and "user" in r.get("p", {})]
    if series:
        now = dict(connection.execute(select(UserRow.id, UserRow.name).where(
            UserRow.id.in_(sorted({p["user"] for p in series})))).all())
        for p in series:
            p["name"] = now.get(p["user"], p.get("name"))


def queue(engine: Engine, limit: int = 100) -> list[dict[str, Any]]:
    """Accounts flagged for review or reported (and not marked, cleared since, or closed), highest score first."""
    with engine.connect() as connection:
        standings = {r.user_id: r for r in connection.execute(select(FairPlayRow.__table__)).all()}
        reports: dict[str, list[Any]] = {}
        for r in connection.execute(select(ReportRow.__table__).order_by(ReportRow.id)).all():
            reports.setdefault(r.user_id, []).append(r)
        ids = {u for u, r in standings.items() if r.state == "review"}
        for user, rows in reports.items():
            standing = standings.get(user)
            if standing is None or (standing.state != "marked" and rows[-1].at_ms > standing.at_ms):
                ids.add(user)
        names = dict(connection.execute(select(UserRow.id, UserRow.name).where(
            UserRow.id.in_(sorted(ids)), UserRow.login.not_like(f"{CLOSED_PREFIX}%"))).all())  # not the closed
        reasons = {u: json.loads(standing.reasons) for u, standing in standings.items() if u in names}
        _name_series(connection, reasons.values())
    out = []
    for user in ids:
        if user not in names:
            continue
        standing = standings.get(user)
        mine = reports.get(user, [])
        out.append({"id": user, "name": names[user], "state": standing.state if standing else None,
                    "score": standing.score if standing else 0, "reasons": reasons.get(user, []),
                    "reports": len(mine), "categories": sorted({r.category for r in mine}),
                    "since_ms": min([r.at_ms for r in mine] + ([standing.at_ms] if standing else []))})
    out.sort(key=lambda e: (-e["score"], -e["reports"], e["since_ms"]))
    return out[:limit]


# the think-time histogram's bins (ms): the upper edges, the last bin open
THINK_EDGES = (150, 250, 400, 600, 1000, 1500, 2500, 4000, 7000, 12000)
POPULATION_GAMES = 300  # the most recent rated games of other (unmarked) accounts the population's histogram reads


def think_histogram(steps_lists: Iterable[list[Any]]) -> list[int]:
    """How many think times fall in each bin of :data:`THINK_EDGES` (and one more for the rest)."""
    counts = [0] * (len(THINK_EDGES) + 1)
    for steps in steps_lists:
        for step in steps:
            think = step[1]
            counts[next((i for i, edge in enumerate(THINK_EDGES) if think < edge), len(THINK_EDGES))] += 1
    return counts


def account_view(engine: Engine, user_id: str) -> dict[str, Any] | None:
    """Everything a moderator sees of an account: standing, score, each rated game's evidence and figures,
    the think-time histogram of its games against the population's (the recent rated games of unmarked
    accounts), the hint agreement expected at its rating, the reports about it, the audit log."""
    with engine.connect() as connection:
        user = connection.execute(select(UserRow.id, UserRow.name, UserRow.login, UserRow.created_ms)
                                  .where(UserRow.id == user_id)).first()
        if user is None:
            return None
        standing = _standing(connection, user_id)
        score = _score_of(connection, user_id, standing.since_ms if standing is not None else 0)
        games = [{"key": g.key, "kind": g.kind, "game": g.game, "match": g.match_id, "game_id": g.game_id,
                  "rating": round(g.rating), "at_ms": g.at_ms, "verdict": g.verdict,
                  "figures": json.loads(g.figures) if g.figures else None, "steps": json.loads(g.steps)}
                 for g in connection.execute(select(EvidenceRow.__table__).where(EvidenceRow.user_id == user_id)
                                             .order_by(EvidenceRow.at_ms.desc()).limit(50)).all()]
        others = connection.execute(select(EvidenceRow.steps).where(
            EvidenceRow.user_id != user_id, EvidenceRow.user_id.not_in(marked_ids()))
            .order_by(EvidenceRow.at_ms.desc()).limit(POPULATION_GAMES)).scalars().all()
        think = {"edges": list(THINK_EDGES), "account": think_histogram(g["steps"] for g in games),
                 "population": think_histogram(json.loads(s) for s in others)}
        names = dict(connection.execute(select(UserRow.id, UserRow.name)).all())
        reports = [{"id": r.id, "by": r.reporter_id, "by_name": names.get(r.reporter_id, "?"), "category": r.category,
                    "note": r.note, "at_ms": r.at_ms}
                   for r in connection.execute(select(ReportRow.__table__).where(ReportRow.user_id == user_id)
                                               .order_by(ReportRow.id.desc())).all()]
        audit = [{"action": a.action, "by": a.by_id, "by_name": names.get(a.by_id) if a.by_id else None,
                  "note": a.note, "why": json.loads(a.why) if a.why else None, "at_ms": a.at_ms}
                 for a in connection.execute(select(AuditRow.__table__).where(AuditRow.user_id == user_id)
                                             .order_by(AuditRow.id.desc())).all()]
        _name_series(connection, [[a["why"]["p"]["series"]] for a in audit if a["why"] and "series" in a["why"]["p"]])
    return {"user": {"id": user.id, "name": user.name, "login": user.login, "since_ms": user.created_ms},
            "state": standing.state if standing else None, "category": standing.category if standing else None,
            "score": score.to_dict(), "games": games, "reports": reports, "audit": audit, "think": think,
            "expected": round(expected_agreement(games[0]["rating"] if games else 1500.0), 3)}


def fairplay_of(engine: Engine, user_id: str) -> dict[str, Any]:
    """What a profile shows of fair play: the mark and its category, and the rating points given back."""
    with engine.connect() as connection:
        category = connection.scalar(select(FairPlayRow.category).where(
            FairPlayRow.user_id == user_id, FairPlayRow.state == "marked"))
        refunds = [{"match": r.match_id, "game": r.game, "points": round(r.points, 1), "at_ms": r.at_ms}
                   for r in connection.execute(select(RefundRow.__table__).where(RefundRow.user_id == user_id)
                                               .order_by(RefundRow.at_ms.desc())).all()]
    return {"marked": category is not None, "category": category, "refunds": refunds}

