"""The group writer: what the services must have in the database before they tell anyone,
written in batches of one transaction each."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio
from sqlalchemy import Connection
from sqlalchemy.exc import OperationalError

import patience.server.figures as figures
from patience.server.storage.ladder import advisory_locks
from patience.server.storage.league import MoveRow, insert_moves
from patience.server.storage.store import SavedGame, Store, write_acks, write_figures, write_games, write_moves

__all__ = ["CHECKPOINT_SECONDS", "GATHER_SECONDS", "GroupWriter"]

log = logging.getLogger("patience.server")

GATHER_SECONDS = 0.002  # how long the writer lets work gather before a transaction
CHECKPOINT_SECONDS = 1.0  # how often the write-ahead log is copied into the database file
SAY_AGAIN_SECONDS = 60.0  # a database refusing writes is said in one line, then at most once a minute
PING_IDLE_SECONDS = 1.0  # the writer's connection, unused this long, is asked whether it still works before a batch


@dataclass
class _Job:
    before: list[Callable[[Any], None]]
    moves: list[tuple[str, MoveRow]]
    games: list[SavedGame]
    game_moves: list[tuple[str, int, dict[str, Any]]]
    figures: list[tuple[str, int, int, int]]
    after: list[Callable[[Any], None]]
    done: asyncio.Future[None]
    acks: list[tuple[str, str, int, int, bytes]]
    locks: list[int]


class GroupWriter:
    """Writes what the services hand it in batches, one transaction each, and says when it is durable.

    Everything queued while a transaction runs goes into the next one, so a thousand players'
    moves cost a few commits a second rather than a thousand. Within a batch, the ``before``
    work (new matches, solo games) runs first, then every move row of a match, then the
    ``after`` work (results). A service tells a player of a change only once its write is durable.
    The rows of many jobs (a match's moves, a solo game's actions) go as one statement each per
    batch: a row costs the thread little, a statement much.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._jobs: list[_Job] = []
        self._wake = asyncio.Event()
        self._running = False
        self.batches = 0
        self.rows = 0
        self._failing: tuple[float, int] | None = None  # since a write failed: when it was said, batches refused
        # the writer keeps a connection of its own between batches: a batch costs a transaction, not also a
        # connection taken from the pool, its check (a round trip) and its reset
        self._held: Connection | None = None
        self._held_used = 0.0
        self._held_lock = threading.Lock()  # flushes without the loop (before it runs, or as it stops) may overlap

    async def write(self, moves: Iterable[tuple[str, MoveRow]] = (), *, before: Iterable[Callable[[Any], None]] = (),
                    games: Iterable[SavedGame] = (), game_moves: Iterable[tuple[str, int, dict[str, Any]]] = (),
                    figures: Iterable[tuple[str, int, int, int]] = (),
                    after: Iterable[Callable[[Any], None]] = (),
                    acks: Iterable[tuple[str, str, int, int, bytes]] = (), locks: Iterable[int] = ()) -> None:
        """Durable when this returns: ``moves`` (match id, move row), ``games`` (solo games whole),
        ``game_moves`` (solo game id, place in its log, the action), ``figures`` (solo game id, time
        played, moves, score: a game going on as its row shows it), ``acks`` (solo game id, client id,
        ack, version, answer: the last intent of a page), and what ``before`` and ``after`` write on the
        batch's connection. ``locks``: keys of PostgreSQL's transaction-level advisory locks the ``after`` work
        takes (:func:`patience.server.storage.ladder.pair_lock`): the batch takes all of its jobs' first, in
        ascending order, so two processes' batches never wait for each other in a circle."""
        job = _Job(list(before), list(moves), list(games), list(game_moves), list(figures), list(after),
                   asyncio.get_running_loop().create_future(), list(acks), list(locks))
        self._jobs.append(job)
        if self._running:
            self._wake.set()
        else:  # no writer loop (not started yet, or stopping): written at once
            await self.flush()
        await job.done

    async def run(self, gather_seconds: float = GATHER_SECONDS) -> None:
        self._running = True
        try:
            while True:
                await self._wake.wait()
                # a transaction costs far more than a row: let the moves of the next moment join this one
                await asyncio.sleep(gather_seconds)
                self._wake.clear()
                await self.flush()
        finally:
            self._running = False

    async def checkpoints(self, every: float = CHECKPOINT_SECONDS) -> None:
        """Checkpoint the database's write-ahead log (SQLite) every ``every`` seconds, on a thread of its
        own, so that no commit ever waits for the database file to reach the disk."""
        while True:
            await asyncio.sleep(every)
            # on failure the log only grows meanwhile, the next one catches up (a database refusing
            # writes is said by the writes)
            with contextlib.suppress(Exception):
                await anyio.to_thread.run_sync(self.store.checkpoint)

    async def flush(self) -> None:
        jobs, self._jobs = self._jobs, []
        if not jobs:
            return
        started = time.perf_counter()
        try:
            await anyio.to_thread.run_sync(self._commit, jobs)
            figures.COMMIT_SECONDS.observe(time.perf_counter() - started)
            figures.COMMIT_BATCH.observe(len(jobs))
        except Exception as exc:  # every job of the batch is told; the matches rebuild from what is durable
            self._failed(exc)
            for job in jobs:
                if not job.done.done():
                    job.done.set_exception(exc)
            return
        if self._failing is not None:
            log.warning("the database takes writes again (%d batches were refused)", self._failing[1])
            self._failing = None
        self.batches += 1
        self.rows += sum(len(j.moves) for j in jobs)
        for job in jobs:
            if not job.done.done():
                job.done.set_result(None)

    def _failed(self, exc: BaseException) -> None:
        """Say what is wrong in one line when the database starts refusing writes (a read-only or
        immutable file, a full disk), then at most once a minute; any other failure with its traceback."""
        if not isinstance(exc, OperationalError | OSError):
            log.error("writing to the database failed", exc_info=exc)
            return
        now = time.monotonic()
        said, count = self._failing or (-SAY_AGAIN_SECONDS, 0)
        if now - said >= SAY_AGAIN_SECONDS:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
            log.error("the database takes no write: %s (moves and results are refused meanwhile; %d before "
                      "this line)", reason[0][:200], count)
            said, count = now, 0
        self._failing = (said, count + 1)

    def _connection(self) -> Connection:
        """The writer's own connection: opened when there is none, and checked with a ping when it was idle
        (the database may have closed it meanwhile), as the pool checks the connections it hands out."""
        held = self._held
        if held is not None and (held.invalidated or held.closed or (
                time.monotonic() - self._held_used >= PING_IDLE_SECONDS and not self._answers(held))):
            self._drop()
            held = None
        if held is None:
            held = self._held = self.store.engine.connect()
        return held

    def _answers(self, held: Connection) -> bool:
        try:
            dbapi = held.connection.dbapi_connection  # (None: the pool let it go)
            return dbapi is not None and bool(self.store.engine.dialect.do_ping(dbapi))
        except Exception:
            return False

    def _drop(self) -> None:
        """Let the writer's connection go (after a failure: it may be broken, or read-only for good)."""
        held, self._held = self._held, None
        if held is not None:
            with contextlib.suppress(Exception):
                held.invalidate()
            with contextlib.suppress(Exception):
                held.close()

    def close(self) -> None:
        """Close the writer's connection (the server stops; a later batch would open another)."""
        with self._held_lock:
            self._drop()

    def _commit(self, jobs: list[_Job]) -> None:
        with self._held_lock:
            connection = self._connection()
            try:
                self._write(connection, jobs)
            except BaseException:
                self._drop()
                raise
            self._held_used = time.monotonic()

    def _write(self, connection: Connection, jobs: list[_Job]) -> None:
        with connection.begin():
            advisory_locks(connection, {key for job in jobs for key in job.locks})
            write_games(connection, [game for job in jobs for game in job.games])  # in queue order: the last wins
            for job in jobs:
                for work in job.before:
                    work(connection)
            write_moves(connection, [row for job in jobs for row in job.game_moves])
            write_acks(connection, [row for job in jobs for row in job.acks])
            write_figures(connection, [row for job in jobs for row in job.figures])  # in queue order: the last wins
            insert_moves(connection, [row for job in jobs for row in job.moves])
            for job in jobs:
                for work in job.after:
                    work(connection)
