"""Game analyses in the database (migration 0020): one row a game (a match's side, a game of the deal of the
day, a solo game), which is at once the job of the shared queue and, once worked, its stored result.

A row is made only when the deal is no longer secret (the web layer checks: :mod:`patience.server.web.analysis`)
and holds the game record to analyse. Its ``status`` goes ``queued`` -> ``running`` -> ``done`` (or ``failed``);
its ``stage`` says what is in ``results``: ``verdict`` (with every card known, :mod:`patience.solve.analysis`),
then ``chance`` (the win chance with what the player could see, position by position, written as it fills).

The queue is the table: :func:`claim` takes the oldest job that is queued (one with no verdict yet first: a server's
worker puts a job back after its verdict, so every game's verdict comes before any game's win chance), or running
under a lease that has lapsed (its process died), in one atomic step: ``SELECT ... FOR UPDATE SKIP LOCKED`` on
PostgreSQL (many processes claim at once, none waits for another's row), one conditional ``UPDATE`` on SQLite (one
writer at a time); with ``verdicts_only`` it takes only a job whose next stage is its verdict (a server's lane kept
for them, :class:`patience.server.analysis.Analyst`). A job taken :data:`MAX_ATTEMPTS` times without an end is
failed, never taken again. Results are
written by the claim's holder only (:func:`save`): a process whose lease lapsed and was taken over writes nothing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Float, Index, Integer, String, Text, and_, func, insert, or_, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from patience.server.storage.store import Base

__all__ = ["KINDS", "MAX_ATTEMPTS", "RATED", "RATED_DAILY_BUDGET", "STAGES", "AnalysisRow", "Claimed", "Source",
           "asked_today", "claim", "day_games", "enqueue", "find", "give_back", "queue_match", "release", "save",
           "source", "view"]

KINDS = ("match", "daily", "game")  # a duel's, Play now's or a tournament's match side; a day's game; a solo game
STAGES = ("verdict", "chance")  # in order: every card known, then what the player could see
RATED_DAILY_BUDGET = 2000  # analyses of rated matches' games the site computes a day (UTC), asked for or not
RATED = "rated"  # the asker the analyses of rated matches are counted under
MAX_ATTEMPTS = 3  # a job whose process died this many times is failed (it would kill the next one too)


class AnalysisRow(Base):
    """One game's analysis: the job (status, lease) and its results (JSON, stage by stage)."""

    __tablename__ = "analysis_jobs"

    key: Mapped[str] = mapped_column(String(80), primary_key=True)  # "match:ID:SIDE", "daily:GAMEID", "game:GAMEID"
    kind: Mapped[str] = mapped_column(String(8))
    ref: Mapped[str] = mapped_column(String(64))  # the match id, or the game id
    side: Mapped[int] = mapped_column(Integer, default=0)
    game: Mapped[str] = mapped_column(String(16))
    record: Mapped[str] = mapped_column(Text)  # the game record analysed (JSON)
    status: Mapped[str] = mapped_column(String(8))  # queued, running, done, failed
    stage: Mapped[str | None] = mapped_column(String(8))  # the last stage whose results are in
    results: Mapped[str | None] = mapped_column(Text)  # JSON {"verdict": ..., "chance": ...}
    cpu_s: Mapped[float] = mapped_column(Float, default=0.0)  # CPU time spent on it, every stage
    requested_by: Mapped[str | None] = mapped_column(String(40))  # the account (or browser) that asked first
    requested_ms: Mapped[int] = mapped_column(BigInteger)
    worker: Mapped[str | None] = mapped_column(String(80))  # the process holding the claim
    lease_ms: Mapped[int | None] = mapped_column(BigInteger)  # the claim lapses then
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    started_ms: Mapped[int | None] = mapped_column(BigInteger)
    finished_ms: Mapped[int | None] = mapped_column(BigInteger)
    error: Mapped[str | None] = mapped_column(String(200))

    __table_args__ = (Index("ix_analysis_jobs_queue", "status", "requested_ms"),
                      Index("ix_analysis_jobs_asker", "requested_by", "requested_ms"))


_T = AnalysisRow.__table__


def _ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Claimed:
    """A job a worker holds: what to analyse and what is already done."""

    key: str
    game: str
    record: dict[str, Any]
    stage: str | None
    results: dict[str, Any]
    cpu_s: float


def view(row: Any) -> dict[str, Any]:
    """A row as the API shows it (never the record: the caller has it, or may not see it)."""
    results = json.loads(row.results) if row.results else {}
    return {"key": row.key, "kind": row.kind, "status": row.status, "stage": row.stage,
            "stages": list(STAGES), "verdict": results.get("verdict"), "chance": results.get("chance"),
            "cpu_s": round(float(row.cpu_s or 0.0), 3), "error": row.error,
            "requested_ms": row.requested_ms, "finished_ms": row.finished_ms}


def find(engine: Engine, key: str) -> dict[str, Any] | None:
    with engine.connect() as connection:
        row = connection.execute(select(_T).where(_T.c.key == key)).first()
    return None if row is None else view(row)


def asked_today(engine: Engine, asker: str, now_ms: int | None = None) -> int:
    """How many analyses ``asker`` made be computed since the start of this UTC day."""
    now = _ms() if now_ms is None else now_ms
    day_start = now - now % 86_400_000
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(_T).where(
            _T.c.requested_by == asker, _T.c.requested_ms >= day_start)).scalar_one())


def enqueue(engine: Engine, key: str, kind: str, ref: str, side: int, game: str, record: dict[str, Any],
            asker: str | None, now_ms: int | None = None) -> tuple[dict[str, Any], bool]:
    """The analysis ``key``, queued now unless it exists; ``(view, made)``. Two processes that queue one key at
    once make one row (the primary key): the second reads the first's."""
    if kind not in KINDS:
        raise ValueError(f"an analysis is of a {', '.join(KINDS)}")
    known = find(engine, key)
    if known is not None:
        return known, False
    try:
        with engine.begin() as connection:
            connection.execute(insert(_T).values(
                key=key, kind=kind, ref=ref, side=side, game=game, record=json.dumps(record, separators=(",", ":")),
                status="queued", stage=None, results=None, cpu_s=0.0, requested_by=asker,
                requested_ms=_ms() if now_ms is None else now_ms, attempts=0))
    except IntegrityError:
        pass
    found = find(engine, key)
    assert found is not None
    return found, True


def queue_match(connection: Connection, match_id: str, game: str, records: list[dict[str, Any]],
                now_ms: int | None = None) -> int:
    """A rated match just ended (in its end's transaction, :func:`patience.server.storage.league.finish_match`):
    queue both games' analyses, for anyone to read, while the site's budget of the day
    (:data:`RATED_DAILY_BUDGET`) allows both; else none (a player may still ask, and is told the budget is
    spent). The games that are queued already are left as they are. Returns the jobs made."""
    now = _ms() if now_ms is None else now_ms
    day_start = now - now % 86_400_000
    used = connection.execute(select(func.count()).select_from(_T).where(
        _T.c.requested_by == RATED, _T.c.requested_ms >= day_start)).scalar_one()
    keys = [f"match:{match_id}:{side}" for side in range(len(records))]
    known = set(connection.execute(select(_T.c.key).where(_T.c.key.in_(keys))).scalars())
    missing = [(side, key) for side, key in enumerate(keys) if key not in known]
    if not missing or int(used) + len(missing) > RATED_DAILY_BUDGET:
        return 0
    connection.execute(insert(_T), [
        {"key": key, "kind": "match", "ref": match_id, "side": side, "game": game,
         "record": json.dumps(records[side], separators=(",", ":")), "status": "queued", "stage": None,
         "results": None, "cpu_s": 0.0, "requested_by": RATED, "requested_ms": now, "attempts": 0}
        for side, key in missing])
    return len(missing)


_ORDER = (_T.c.stage.is_not(None), _T.c.requested_ms)  # verdicts first (a job with none yet), then the oldest


def _free(now: int, verdicts_only: bool) -> Any:
    """Queued, or running under a lease that lapsed; with ``verdicts_only``, without a verdict yet."""
    free = or_(_T.c.status == "queued", and_(_T.c.status == "running", _T.c.lease_ms < now))
    return and_(free, _T.c.stage.is_(None)) if verdicts_only else free


def _claimable(now: int, verdicts_only: bool) -> Any:
    return and_(_free(now, verdicts_only), _T.c.attempts < MAX_ATTEMPTS)


def claim(engine: Engine, worker: str, lease_s: float, now_ms: int | None = None,
          verdicts_only: bool = False) -> Claimed | None:
    """Take the oldest job that is free (queued, or its holder's lease lapsed) for ``lease_s`` seconds, or None;
    with ``verdicts_only``, a job whose next stage is its verdict. Jobs whose holders died
    :data:`MAX_ATTEMPTS` times are failed here."""
    now = _ms() if now_ms is None else now_ms
    lease = now + int(lease_s * 1000)
    with engine.connect() as connection:  # an idle queue is read, never written: no write lock a poll
        free = connection.execute(select(_T.c.key).where(_free(now, verdicts_only)).limit(1)).first()
    if free is None:
        return None
    claimable = _claimable(now, verdicts_only)
    with engine.begin() as connection:
        connection.execute(update(_T).where(_T.c.status == "running", _T.c.lease_ms < now,
                                            _T.c.attempts >= MAX_ATTEMPTS)
                           .values(status="failed", error="its worker stopped every time", finished_ms=now,
                                   worker=None, lease_ms=None))
        if engine.dialect.name == "postgresql":
            key = connection.execute(select(_T.c.key).where(claimable).order_by(*_ORDER)
                                     .limit(1).with_for_update(skip_locked=True)).scalar()
            if key is None:
                return None
            connection.execute(update(_T).where(_T.c.key == key).values(
                status="running", worker=worker, lease_ms=lease, attempts=_T.c.attempts + 1,
                started_ms=func.coalesce(_T.c.started_ms, now)))
        else:  # SQLite: one writer at a time, so one conditional UPDATE is the claim
            oldest = select(_T.c.key).where(claimable).order_by(*_ORDER).limit(1).scalar_subquery()
            key = connection.execute(update(_T).where(_T.c.key == oldest, claimable).values(
                status="running", worker=worker, lease_ms=lease, attempts=_T.c.attempts + 1,
                started_ms=func.coalesce(_T.c.started_ms, now)).returning(_T.c.key)).scalar()
            if key is None:
                return None
        row = connection.execute(select(_T).where(_T.c.key == key)).one()
    return Claimed(row.key, row.game, json.loads(row.record), row.stage,
                   json.loads(row.results) if row.results else {}, float(row.cpu_s or 0.0))


def save(engine: Engine, key: str, worker: str, *, stage: str, results: dict[str, Any], cpu_s: float,
         done: bool = False, error: str | None = None, lease_s: float | None = None, again: bool = False) -> bool:
    """Write a stage's results (and, with ``done``, end the job; with ``error``, fail it; with ``again``, put it
    back in the queue for its next stage, the claim not counted as an attempt) if ``worker`` still holds the
    claim; extend the lease by ``lease_s``. False when the claim was lost (nothing written)."""
    now = _ms()
    values: dict[str, Any] = {"stage": stage, "results": json.dumps(results, separators=(",", ":")),
                              "cpu_s": cpu_s}
    if done or error is not None:
        values.update(status="failed" if error is not None else "done", finished_ms=now, worker=None, lease_ms=None,
                      error=error)
    elif again:
        values.update(status="queued", worker=None, lease_ms=None, attempts=_T.c.attempts - 1)
    elif lease_s is not None:
        values["lease_ms"] = now + int(lease_s * 1000)
    with engine.begin() as connection:
        changed = connection.execute(update(_T).where(_T.c.key == key, _T.c.status == "running",
                                                      _T.c.worker == worker).values(**values)).rowcount
    return bool(changed)


def release(engine: Engine, key: str, worker: str, error: str) -> None:
    """A worker process died on the job ``worker`` held: queued again (its attempt counted), or failed with
    ``error`` after :data:`MAX_ATTEMPTS`."""
    now = _ms()
    with engine.begin() as connection:
        connection.execute(update(_T).where(_T.c.key == key, _T.c.status == "running", _T.c.worker == worker,
                                            _T.c.attempts < MAX_ATTEMPTS)
                           .values(status="queued", worker=None, lease_ms=None))
        connection.execute(update(_T).where(_T.c.key == key, _T.c.status == "running", _T.c.worker == worker)
                           .values(status="failed", worker=None, lease_ms=None, finished_ms=now, error=error[:200]))


def give_back(engine: Engine, key: str, worker: str) -> None:
    """A stopping process hands a job it held back to the queue (its attempt is not counted)."""
    with engine.begin() as connection:
        connection.execute(update(_T).where(_T.c.key == key, _T.c.status == "running", _T.c.worker == worker)
                           .values(status="queued", worker=None, lease_ms=None, attempts=_T.c.attempts - 1))


@dataclass(frozen=True)
class Source:
    """What a game to analyse is, for the secrecy rules: whether it is over, whose, when its deal is shown."""

    kind: str
    ref: str
    game: str
    records: list[dict[str, Any] | None]  # a match: both sides' records once over (else None); else one
    over: bool  # the game (a match: both games) has ended
    browser_id: str | None = None  # a solo game's browser
    day: str | None = None  # a day's game: its day (the deal is shown once it is over)
    shared: bool = False  # a game of the deal of the day or of Play now: never analysed as a solo game


def source(engine: Engine, kind: str, ref: str) -> Source | None:
    """The game ``ref`` of ``kind`` as the secrecy rules need it, or None when there is none."""
    from patience.server.storage.daily import AttemptRow
    from patience.server.storage.store import GameRow, MatchRow

    with engine.connect() as connection:
        if kind == "match":
            row = connection.execute(select(MatchRow.game, MatchRow.state, MatchRow.record)
                                     .where(MatchRow.id == ref)).first()
            if row is None:
                return None
            over = row.state == "over" and row.record is not None
            games = json.loads(row.record)["games"] if over else [None, None]
            return Source(kind, ref, row.game, list(games), over)
        game = connection.execute(select(GameRow.game, GameRow.browser_id, GameRow.outcome, GameRow.seed)
                                  .where(GameRow.id == ref)).first()
        if game is None:
            return None
        day = connection.execute(select(AttemptRow.day).where(AttemptRow.game_id == ref)).scalar()
        pairs = Base.metadata.tables["apart_matches"]  # Play now's (by name: its module ends matches, queueing here)
        apart = connection.execute(select(func.count()).select_from(pairs).where(
            or_(pairs.c.host_game == ref, pairs.c.challenger_game == ref))).scalar_one()
    shared = day is not None or bool(apart) or str(game.seed).startswith("now:")
    return Source(kind, ref, game.game, [None], game.outcome is not None, game.browser_id, day, shared)


def day_games(engine: Engine, day: str) -> tuple[list[tuple[str, str, int, str, dict[str, Any]]], list[str]]:
    """The games of UTC ``day`` whose deals are shown: both games of every match that ended that day, as ``(key,
    match id, side, game, record)``, and the ids of that day's finished games of the deal of the day. The caller
    checks that the day is over (its deals of the day are secret until then)."""
    import datetime as dt

    from patience.server.storage.daily import AttemptRow
    from patience.server.storage.store import GameRow, MatchRow

    start = int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp() * 1000)
    out: list[tuple[str, str, int, str, dict[str, Any]]] = []
    with engine.connect() as connection:
        for row in connection.execute(select(MatchRow.id, MatchRow.game, MatchRow.record).where(
                MatchRow.state == "over", MatchRow.record.is_not(None), MatchRow.ended_ms >= start,
                MatchRow.ended_ms < start + 86_400_000).order_by(MatchRow.ended_ms)):
            for side, record in enumerate(json.loads(row.record)["games"]):
                out.append((f"match:{row.id}:{side}", row.id, side, row.game, record))
        ids = list(connection.scalars(select(AttemptRow.game_id).where(AttemptRow.day == day)))
        finished = list(connection.scalars(select(GameRow.id).where(GameRow.id.in_(ids), GameRow.outcome.is_not(None))))
    return out, finished
