"""The fair hashing scheduler: argon2 on threads of its own, at a bounded pace, in turns shared so that
no flood of wrong passwords refuses a real user (:class:`Hashing`; its rules are said there).

Every password the server checks or keeps goes through it: sign-ins, sign-ups, the account page's
forms (:mod:`patience.server.accounts.service`) and tournament passwords (the arena).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from patience.server.identity import AccountError

__all__ = ["HASHES_AT_ONCE", "HASHES_WAITING", "SIGNIN", "SIGNUP", "TOURNAMENT", "Hashing", "Lane", "owasp_hasher"]

# argon2 hashes computed at once (19 MiB and a core each): half the cores, the rest for the games
HASHES_AT_ONCE = max(1, (os.cpu_count() or 2) // 2)
HASHES_WAITING = 32  # sign-ins waiting for a hash at most (sign-ups and tournament passwords: half as many each)
HASH_RATE = 5.0  # hashes a second at most (about 20 % of a core), so a storm leaves the games their CPU
HASH_NICE = 10  # and the hashing threads yield the CPU to the event loop's (this much nicer than the process)
HASH_PER_KEY = 2  # places one address (or account) may hold in a queue at once
HASH_MAX_WAIT = 10.0  # seconds a try may wait for its turn; then it is answered 429
REFUSALS_WINDOW = 60.0  # a key refused as busy this lately waits behind those that were not


def _yield_cpu() -> None:
    """Lower the priority of the calling thread (on Linux a thread has its own) :data:`HASH_NICE` below the
    process's own, if the system allows: a server started with ``nice`` still has its hashes yield to it."""
    with contextlib.suppress(AttributeError, OSError):
        mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, mine + HASH_NICE))


def owasp_hasher() -> PasswordHasher:
    """argon2id with the OWASP Password Storage recommendation: 19 MiB, 2 passes, 1 lane."""
    return PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


SIGNIN, SIGNUP, TOURNAMENT = "signin", "signup", "tournament"
"""The queues of :class:`Hashing`."""


@dataclass(frozen=True)
class Lane:
    """A queue of :class:`Hashing`: how many tries may wait in it, how many of one key, and its turns
    in each round of the queues."""

    waiting: int
    per_key: int
    turns: int


class _Waiter:
    __slots__ = ("future", "key", "lane", "rank", "seq", "started")

    def __init__(self, lane: str, key: str, rank: int, seq: int, future: asyncio.Future[None]) -> None:
        self.lane, self.key, self.rank, self.seq, self.future = lane, key, rank, seq, future
        self.started = False


class Hashing:
    """argon2 on ``at_once`` threads of its own, at most ``rate`` hashes a second, in turns shared so
    that no flood of wrong passwords refuses a real user.

    Threads of their own, not the shared pool: the event loop and the database never wait for a hash,
    and a burst costs ``at_once`` hashes' memory (each thread's allocator would keep a hash's 19 MiB).

    The tries wait in three queues (:data:`SIGNIN`, :data:`SIGNUP`, :data:`TOURNAMENT`: tournament
    passwords, made and guessed), served in rounds (two sign-ins, a sign-up, a tournament password;
    an empty queue gives its turn to the others), so that a flood of one kind never takes the turns of
    another. In a queue:

    - each try has a *key* (the address, an IPv6 /64, for sign-ins and sign-ups; the account for
      tournament passwords), and one key holds at most ``per_key`` places: one address or one account
      over 40 sockets waits in two places, not forty;
    - each try has a *rank*, from what is known of it before any hash (lower first): a sign-in from a
      browser the account has signed in on is 0, any other 1 plus the failures of its address in the
      last minutes; a tournament password tried for the first time 0, again 1. A key answered "busy"
      lately ranks one worse for each time (:data:`REFUSALS_WINDOW`): a script that knocks again at
      once goes behind those that waited. Of one rank the newest goes first: under a flood, the tries
      that came first are the guessers' that fill the queue;
    - a full queue (``waiting``) or a key's full share gives the place of the worst try waiting (of
      those as bad, the oldest) to a new try of the same rank or a better one, and answers it 429 at
      once; a new try worse than every one waiting is answered 429. Each 429 says the seconds to
      wait. A try that waited :data:`HASH_MAX_WAIT` seconds is answered 429 too.

    So a guesser's address, once it has failed or been refused, always waits behind a real user's; a
    real user on a browser the account knows goes first even before the guessers have failed; and
    under a flood of fresh addresses a real user who comes later takes the place of one that came
    first (which, refused, ranks worse when it knocks again)."""

    def __init__(self, hasher: PasswordHasher, at_once: int = HASHES_AT_ONCE, waiting: int = HASHES_WAITING,
                 rate: float = HASH_RATE, *, per_key: int = HASH_PER_KEY, max_wait: float = HASH_MAX_WAIT) -> None:
        self.hasher = hasher
        self.at_once = at_once
        self.threads = ThreadPoolExecutor(at_once, thread_name_prefix="argon2", initializer=_yield_cpu)
        self.rate = rate
        self.max_wait = max_wait
        half = max(1, waiting // 2)
        self.lanes = {SIGNIN: Lane(waiting, per_key, 2), SIGNUP: Lane(half, per_key, 1),
                      TOURNAMENT: Lane(half, per_key, 1)}
        self._round = [SIGNIN, SIGNUP, SIGNIN, TOURNAMENT]
        self._turn = 0
        self._queues: dict[str, list[_Waiter]] = {lane: [] for lane in self.lanes}
        self._seq = itertools.count()
        self._refused: dict[tuple[str, str], deque[float]] = {}
        self.running = 0
        self._next = 0.0  # the loop time of the next free turn
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None

    @property
    def waiting(self) -> int:
        """Tries waiting for their turn, in all queues."""
        return sum(len(queue) for queue in self._queues.values())

    def _busy(self, lane: str, key: str) -> AccountError:
        now = time.monotonic()
        times = self._refused.setdefault((lane, key), deque())
        times.append(now)
        while times and times[0] < now - REFUSALS_WINDOW:
            times.popleft()
        if len(self._refused) > 10_000:  # forget the keys not refused lately
            self._refused = {k: t for k, t in self._refused.items() if t and t[-1] >= now - REFUSALS_WINDOW}
        share = self.lanes[lane].turns / len(self._round)
        wait = max(1, math.ceil(len(self._queues[lane]) / (self.rate * share)))
        return AccountError("busy", f"the server is busy checking passwords: try again in {wait} s", 429, wait)

    def _penalty(self, lane: str, key: str) -> int:
        times = self._refused.get((lane, key))
        if not times:
            return 0
        edge = time.monotonic() - REFUSALS_WINDOW
        return sum(1 for at in times if at >= edge)

    def _make_room(self, among: list[_Waiter], rank: int, lane: str, key: str) -> None:
        """Take the place of the worst try ``among`` those waiting (then the oldest), unless it ranks
        better than ``rank``."""
        worst = max(among, key=lambda w: (w.rank, -w.seq))
        if worst.rank < rank:
            raise self._busy(lane, key)
        self._queues[lane].remove(worst)
        worst.future.set_exception(self._busy(worst.lane, worst.key))

    def _admit(self, lane: str, key: str, rank: int) -> _Waiter:
        rules, queue = self.lanes[lane], self._queues[lane]
        rank += self._penalty(lane, key)
        mine = [w for w in queue if w.key == key]
        if len(mine) >= rules.per_key:
            self._make_room(mine, rank, lane, key)
        if len(queue) >= rules.waiting:
            self._make_room(queue, rank, lane, key)
        waiter = _Waiter(lane, key, rank, next(self._seq), asyncio.get_running_loop().create_future())
        queue.append(waiter)
        return waiter

    def _pick(self) -> _Waiter | None:
        """The next try: the next queue of the round that has one, and its best (then newest) try."""
        for _ in self._round:
            queue = self._queues[self._round[self._turn % len(self._round)]]
            self._turn += 1
            while queue:
                best = min(queue, key=lambda w: (w.rank, -w.seq))
                queue.remove(best)
                if not best.future.done() and not best.future.get_loop().is_closed():
                    return best
        return None

    def _dispatch(self) -> None:
        """Start the tries whose turn it is (a thread free, the pace kept); call again when one may be."""
        loop = asyncio.get_running_loop()
        while self.running < self.at_once and self.waiting:
            now = loop.time()
            if self._next > now:
                if self._timer is None or self._timer_loop is not loop:
                    self._timer, self._timer_loop = loop.call_at(self._next, self._on_timer), loop
                return
            waiter = self._pick()
            if waiter is None:
                return
            self._next = max(now, self._next) + 1 / self.rate
            self.running += 1
            waiter.started = True
            waiter.future.set_result(None)

    def _on_timer(self) -> None:
        self._timer = None
        self._dispatch()

    def _leave(self, waiter: _Waiter) -> None:
        if waiter.started:
            self.running -= 1
            self._dispatch()
        elif waiter in self._queues[waiter.lane]:
            self._queues[waiter.lane].remove(waiter)

    async def _run(self, lane: str, key: str, rank: int, fn: Callable[..., Any], *args: Any) -> Any:
        waiter = self._admit(lane, key, rank)
        self._dispatch()
        try:
            await asyncio.wait({waiter.future}, timeout=self.max_wait)
        except asyncio.CancelledError:
            self._leave(waiter)
            raise
        if not waiter.future.done():
            self._leave(waiter)
            raise self._busy(lane, key)
        waiter.future.result()  # the place was given to a better try: busy
        try:
            return await asyncio.get_running_loop().run_in_executor(self.threads, fn, *args)
        finally:
            self.running -= 1
            self._dispatch()

    async def hash(self, password: str, *, lane: str = SIGNUP, key: str = "?", rank: int = 0) -> str:
        return await self._run(lane, key, rank, self.hasher.hash, password)  # type: ignore[no-any-return]

    async def verify(self, stored: str, password: str, *, lane: str = SIGNIN, key: str = "?", rank: int = 1) -> bool:
        def check() -> bool:
            try:
                return bool(self.hasher.verify(stored, password))
            except (VerificationError, InvalidHashError):
                return False
        return await self._run(lane, key, rank, check)  # type: ignore[no-any-return]
