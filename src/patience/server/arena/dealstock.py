"""The private stock of duel deals: secret deal keys proved winnable, kept in the database.

A duel is dealt from a fresh 256-bit deal key (:func:`patience.rng.new_deal_key`), which nobody
can guess or compute from the cards they see. Winnable-only duels cannot come from a published
list (a player would find the deal in it from the first face-up cards), so the server proves
its own: :meth:`DealStock.run` draws keys, has the solvers search them in a separate process
(at a lower priority, off the event loop, dying with the server: :func:`solver_process`) and
keeps those proved winnable, up to ``target`` per duel variant. :meth:`DealStock.take` hands a
new match the oldest key of its variant and deletes it in the same statement, so two processes
sharing the database never deal one key twice. When the stock of a variant is empty, the match
gets a fresh key whose deal was not proved (``proved`` false): every deal is fair when both
players get it.

A key leaves the server only in the match record, once the match is over.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Any

import anyio
from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from patience.duel import FORMATS, Format
from patience.rng import new_deal_key
from patience.server.storage.store import DealStockRow, Store

__all__ = [
    "DEFAULT_BUDGET_S", "VARIANTS", "DealStock", "add_deal", "prove", "solver_pool", "solver_process", "stock_counts",
    "take_deal", "variant_of",
]

log = logging.getLogger("patience.server")

DEFAULT_BUDGET_S = 3.0  # the solver's time for one key: a deal it cannot decide in that time is dropped
IDLE_SECONDS = 5.0  # how often a full stock is looked at again
VARIANTS = [f"{game}/{variant}" for game, variants in FORMATS.items() for variant in variants]


def variant_of(fmt: Format) -> str:
    """The stock a format deals from: the game and variant (the time limit does not change a deal)."""
    return f"{fmt.game}/{fmt.variant_name}"


# -- the table -----------------------------------------------------------------------------------


def stock_counts(engine: Engine) -> dict[str, int]:
    """How many keys wait, per variant."""
    with engine.connect() as connection:
        found = {variant: count for variant, count in connection.execute(
            select(DealStockRow.variant, func.count()).group_by(DealStockRow.variant))}
    return {variant: int(found.get(variant, 0)) for variant in VARIANTS}


def add_deal(engine: Engine, variant: str, deal: str, nodes: int) -> None:
    """Keep a proved key (a key drawn twice, which 256 random bits never are, is kept once)."""
    try:
        with engine.begin() as connection:
            connection.execute(insert(DealStockRow), [{"variant": variant, "deal": deal, "nodes": nodes,
                                                      "made_ms": int(time.time() * 1000)}])
    except IntegrityError:
        pass


def take_deal(engine: Engine, variant: str) -> str | None:
    """Take the oldest key of ``variant`` out of the stock, or None when there is none.

    The row is deleted by the statement that reads it (``DELETE … RETURNING``): when two processes
    reach for the same row, one deletes it and the other finds nothing and tries the next."""
    for _ in range(8):
        with engine.begin() as connection:
            row_id = connection.scalar(select(DealStockRow.id).where(DealStockRow.variant == variant)
                                       .order_by(DealStockRow.id).limit(1))
            if row_id is None:
                return None
            deal = connection.scalar(delete(DealStockRow).where(DealStockRow.id == row_id)
                                     .returning(DealStockRow.deal))
        if deal is not None:
            return str(deal)
    return None


# -- proving keys --------------------------------------------------------------------------------


def prove(variant: str, deal: str, budget_s: float) -> tuple[bool, int]:
    """Is the deal of ``deal`` winnable under ``variant``'s rules? (proved, positions searched).

    Runs in the stock's worker process. A deal the solver cannot decide within ``budget_s`` counts
    as not proved."""
    from patience.solve import solve_deal
    from patience.solve.search import Budget, Status

    game, name = variant.split("/")
    solution = solve_deal(game, deal, FORMATS[game][name], Budget(seconds=budget_s, memory_mb=256.0))
    return solution.status is Status.WON, solution.nodes


PARENT_CHECK_SECONDS = 0.5  # how often a solver process looks whether its server is still there
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies (Linux)


def _lower_priority() -> None:
    with contextlib.suppress(OSError):
        os.nice(10)  # the solver gives way to the players


def solver_process(parent: int) -> None:
    """The initializer of a solver process (the deal stock's, the deal of the day's): it gives way to
    the players, and it dies with the server ``parent`` however the server ends, even by ``kill -9``,
    which runs no code of the server's: on Linux the kernel sends it SIGKILL when the server dies
    (``PR_SET_PDEATHSIG``, strictly when the server's thread that started it ends: the event loop's,
    which lasts as long as the server); everywhere a thread of its own ends it once its parent is no longer the
    server (the search runs without the GIL, so the thread runs during a search too). With the solver
    process gone, nothing holds the pipe of multiprocessing's resource tracker any more, and the
    tracker ends as well."""
    _lower_priority()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the server died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="patience-parent-watch", daemon=True).start()


def solver_pool() -> concurrent.futures.ProcessPoolExecutor:
    """A process of its own for the solvers (spawned: no fork of a process with threads and sockets),
    at a lower priority, that dies with this server (:func:`solver_process`)."""
    return concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=solver_process, initargs=(os.getpid(),))


class DealStock:
    """Takes deals for new matches and keeps the stock of proved ones filled."""

    def __init__(self, store: Store, target: int, *, budget_s: float = DEFAULT_BUDGET_S,
                 variants: list[str] | None = None) -> None:
        self.store = store
        self.target = target
        self.budget_s = budget_s
        self.variants = list(variants if variants is not None else VARIANTS)  # the ones to fill
        self.proved = 0  # keys proved and kept by this process
        self.dropped = 0  # keys not proved (unwinnable or undecided in time)
        self._wake = asyncio.Event()

    async def take(self, fmt: Format) -> tuple[str, bool]:
        """A deal key for a new match of ``fmt`` and whether its deal was proved winnable."""
        if self.target > 0:
            deal = await anyio.to_thread.run_sync(take_deal, self.store.engine, variant_of(fmt))
            self._wake.set()
            if deal is not None:
                return deal, True
            log.info("the stock of %s deals is empty: dealing one not proved winnable", variant_of(fmt))
        return new_deal_key(), False

    async def run(self) -> None:
        """Fill the stock up to ``target`` keys per variant, for as long as the server runs."""
        if self.target <= 0:
            return
        pool = solver_pool()
        loop = asyncio.get_running_loop()
        try:
            while True:
                counts = await anyio.to_thread.run_sync(stock_counts, self.store.engine)
                short = [v for v in self.variants if counts[v] < self.target]
                if not short:
                    self._wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), IDLE_SECONDS)
                    continue
                variant = min(short, key=lambda v: counts[v])  # the emptiest first
                deal = new_deal_key()
                try:
                    proved, nodes = await loop.run_in_executor(pool, prove, variant, deal, self.budget_s)
                except concurrent.futures.process.BrokenProcessPool:
                    log.exception("the deal stock's solver process died: starting another")
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = solver_pool()
                    continue
                if proved:
                    await anyio.to_thread.run_sync(add_deal, self.store.engine, variant, deal, nodes)
                    self.proved += 1
                else:
                    self.dropped += 1
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def figures(self) -> dict[str, Any]:
        return {"target": self.target, "proved": self.proved, "dropped": self.dropped}
