"""Accounts: sign up, sign in, sign out and the display name, with the safeguards they need.

- Passwords are kept only as argon2id hashes (argon2-cffi) with the OWASP parameters (19 MiB, two
  passes), rehashed when the parameters change. Hashing runs on threads of its own, never inside a
  database session nor on the event loop, at most a few at once and 5 a second: a burst waits its
  turn (or is answered 429 with the seconds to wait) instead of taking the database's connections,
  the memory and the duels' event loop. How the turns are shared so that no flood refuses a real
  user: :class:`Hashing`.
- A signed-in browser holds a random session token in an HttpOnly, SameSite=Lax cookie (Secure
  over HTTPS); the database keeps only the token's SHA-256, so a leaked table opens no session.
- Every form post carries a CSRF token: an HMAC of the browser's id under a server secret kept in
  the database (so tokens outlive a restart). A post from another site has neither.
- Failed sign-ins are counted per login name *and* address, and per address, in the database (a
  restart does not forget them); past the limit, sign-in answers 429 with the seconds to wait,
  without looking at the password. A stranger's wrong guesses never lock the owner out: they count
  against the stranger's address. The sign-ins of one address are checked one at a time under a
  lock of the bus (shared by every process), so parallel guesses cannot race past the limit. An
  "address" is an IPv4 address or an IPv6 /64 (:func:`address_group`): one IPv6 host has a /64
  to pick addresses from.
- Sign-ups are limited per address (a sliding window on the bus), and on the whole site: past
  :data:`SIGNUPS_PER_MINUTE` new accounts in the last minute (on every process), only an address
  that made no account in the last :data:`SIGNUP_WINDOW` seconds may make one (up to
  :data:`NEWCOMERS_PER_MINUTE` more), so that a storm from many addresses gets one account an address
  and then the site's quiet share, while a real newcomer, whose address is new, still gets in.
- The browser's solo games count for the account: the browser is linked at sign-up (and at
  sign-in, if no account has it yet).

The HTTP side (forms, cookies) is :mod:`patience.server.web.accounts`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import hmac
import ipaddress
import itertools
import math
import os
import re
import secrets
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import anyio
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from patience.server.bus import Bus, BusError, MemoryBus
from patience.server.storage.apart import net_of
from patience.server.storage.ladder import add_traces, browser_trace
from patience.server.storage.roles import RESERVED_DAYS, ClosedLoginRow
from patience.server.storage.store import (
    AuthSessionRow,
    PasswordResetRow,
    SigninFailureRow,
    Store,
    UserBrowserRow,
    UserNameRow,
    UserRow,
    name_key,
    now_ms,
    server_secret,
)

__all__ = ["SESSION_DAYS", "SIGNIN", "SIGNUP", "TOURNAMENT", "AccountError", "Accounts", "Hashing", "Lane",
           "RateLimiter", "User", "address_group", "owasp_hasher"]

SESSION_DAYS = 30
LOGIN = re.compile(r"^[a-z0-9][a-z0-9_.-]{2,31}$")
MIN_PASSWORD = 8
MAX_PASSWORD = 256
MAX_NAME = 40
# argon2 hashes computed at once (19 MiB and a core each): half the cores, the rest for the games
HASHES_AT_ONCE = max(1, (os.cpu_count() or 2) // 2)
HASHES_WAITING = 32  # sign-ins waiting for a hash at most (sign-ups and tournament passwords: half as many each)
HASH_RATE = 5.0  # hashes a second at most (about 20 % of a core), so a storm leaves the games their CPU
HASH_NICE = 10  # and the hashing threads yield the CPU to the event loop's (this much nicer than the process)
HASH_PER_KEY = 2  # places one address (or account) may hold in a queue at once
HASH_MAX_WAIT = 10.0  # seconds a try may wait for its turn; then it is answered 429
REFUSALS_WINDOW = 60.0  # a key refused as busy this lately waits behind those that were not

SIGNINS_PER_ADDRESS = 30  # sign-in tries (right or wrong) per address a minute
SIGNUPS_PER_ADDRESS = 20  # new accounts per address in SIGNUP_WINDOW seconds
SIGNUP_WINDOW = 600.0
SIGNUPS_PER_MINUTE = 30  # new accounts a minute on the whole site before only new addresses may sign up
NEWCOMERS_PER_MINUTE = 120  # new accounts a minute from addresses new in SIGNUP_WINDOW, beyond those
DB_THREADS = 2

SEEN_EVERY_MS = 300_000  # a session's "last seen" is written at most this often
RENAMES_PER_DAY = 1  # display name changes an account may make a day (each old name is kept for moderators)
PASSWORD_CHECKS = 10  # passwords an account may type (to change it, set its e-mail, close it) in CHECKS_WINDOW
CHECKS_WINDOW = 600.0
RESET_MINUTES = 30  # a password reset link works this long, once
RESETS_PER_ADDRESS = 5  # "forgot my password" forms an address may send an hour
RESETS_PER_ACCOUNT = 3  # reset mails an account (and an e-mail address) may get an hour
EMAIL = re.compile(r"^[^@\s<>()\[\],;:\"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+$")


@functools.lru_cache(maxsize=65_536)  # pure, and asked for every connection accepted: a flood repeats few addresses
def address_group(address: str) -> str:
    """The unit the limits count an address in: an IPv4 address itself, an IPv6 address's /64 (one
    host or household has a whole /64 to pick from), anything else as it is.

    >>> address_group("203.0.113.7"), address_group("2001:db8:1:2:a:b:c:d"), address_group("::ffff:192.0.2.1")
    ('203.0.113.7', '2001:db8:1:2::/64', '192.0.2.1')
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _traces(browser: str | None, address: str) -> list[tuple[str, str]]:
    """What a sign-up or sign-in leaves for linking accounts (docs/fairplay.md): digests of the address
    group and of the browser, never the address itself."""
    out = [("browser", browser_trace(browser))] if browser else []
    if address and address != "?":
        out.append(("net", net_of(address)))
    return out


def _yield_cpu() -> None:
    """Lower the priority of the calling thread (on Linux a thread has its own) :data:`HASH_NICE` below the
    process's own, if the system allows: a server started with ``nice`` still has its hashes yield to it."""
    with contextlib.suppress(AttributeError, OSError):
        mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, mine + HASH_NICE))


def owasp_hasher() -> PasswordHasher:
    """argon2id with the OWASP Password Storage recommendation: 19 MiB, 2 passes, 1 lane."""
    return PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


class AccountError(ValueError):
    """A sign-up or sign-in that cannot be done: ``code`` for programs (and translations), the text for people."""

    def __init__(self, code: str, message: str, status: int = 400, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class User:
    id: str
    login: str
    name: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "login": self.login, "name": self.name}


class RateLimiter:
    """At most ``limit`` failures per key in ``window`` seconds; the next try must wait.

    The failures are rows of the store (table ``signin_failures``: the SHA-256 of the key and the
    time on ``now``, a wall clock), so that a restart of the server does not reset the count;
    rows older than the window are deleted as new failures come."""

    def __init__(self, store: Store, limit: int, window: float, now: Callable[[], float] = time.time) -> None:
        self.store = store
        self.limit = limit
        self.window = window
        self.now = now

    @staticmethod
    def _key(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    def _ms(self, seconds: float) -> int:
        return round(seconds * 1000)

    def recent(self, db: Session, key: str) -> list[int]:
        """The times (ms) of the last ``limit`` failures of ``key`` in the window, the newest first."""
        edge = self._ms(self.now() - self.window)
        return list(db.scalars(select(SigninFailureRow.at_ms)
                               .where(SigninFailureRow.key_hash == self._key(key), SigninFailureRow.at_ms > edge)
                               .order_by(SigninFailureRow.at_ms.desc()).limit(self.limit)))

    def wait_after(self, times: list[int]) -> int:
        """Seconds until a key whose :meth:`recent` failures are ``times`` may try again (0: now)."""
        if len(times) < self.limit:
            return 0
        # the oldest of the last ``limit`` failures must leave the window
        return max(1, int(times[-1] / 1000 + self.window - self.now() + 0.999))

    def wait(self, key: str) -> int:
        """Seconds until ``key`` may try again (0: now)."""
        with Session(self.store.engine) as db:
            return self.wait_after(self.recent(db, key))

    def fail(self, key: str) -> None:
        now = self._ms(self.now())
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(SigninFailureRow).where(SigninFailureRow.at_ms <= now - self._ms(self.window)))
            db.add(SigninFailureRow(key_hash=self._key(key), at_ms=now))

    def forget(self, key: str) -> None:
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(SigninFailureRow).where(SigninFailureRow.key_hash == self._key(key)))


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


# letters that show as nothing (blank fillers) though Unicode calls them letters or symbols
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")


def _script(char: str) -> str:
    """The script of a letter, from its Unicode name (LATIN, CYRILLIC, GREEK, CJK, …)."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "?"


def clean_name(name: str) -> str:
    """A display name: NFKC-normalised, trimmed, inner spaces folded, 1..40 printable characters.

    Refused: invisible characters (format characters, blank fillers such as U+3164), more than two
    combining marks on one letter, and letters of several scripts among Latin, Greek and Cyrillic
    (``Pаypal`` with a Cyrillic ``а`` would pass for another's name)."""
    text = " ".join(unicodedata.normalize("NFKC", str(name)).split())
    if not text or len(text) > MAX_NAME or not text.isprintable() or any(c in text for c in "<>"):
        raise AccountError("bad_name", f"a name is 1 to {MAX_NAME} characters (no < or >)")
    marks = 0
    for char in text:
        if char in _BLANKS or unicodedata.category(char) == "Cf":
            raise AccountError("bad_name", "a name cannot hold invisible characters")
        marks = marks + 1 if unicodedata.combining(char) else 0
        if marks > 2:
            raise AccountError("bad_name", "a name cannot pile marks on a letter")
    scripts = {_script(c) for c in text if c.isalpha()} & {"LATIN", "GREEK", "CYRILLIC"}
    if len(scripts) > 1:
        raise AccountError("bad_name", "a name writes its letters in one alphabet (no look-alike letters)")
    if not any(c.isalnum() for c in text):
        raise AccountError("bad_name", "a name has at least one letter or digit")
    return text


def _name_free(db: Session, name: str, user_id: str | None) -> None:
    """Refuse a display name another account has, letters' case and width aside: a name names one player
    (the unique index on ``users.name_key`` holds it against two sign-ups at the same instant)."""
    other = db.scalar(select(UserRow.id).where(UserRow.name_key == name_key(name), UserRow.id != (user_id or ""))
                      .limit(1))
    if other is not None:
        raise _name_taken(name)


def _login_free(db: Session, login: str, at_ms: int) -> None:
    """Refuse a login name an account has, or a closed account's while it is reserved (at ``at_ms``)."""
    if db.scalar(select(UserRow.id).where(UserRow.login == login)) is not None:
        raise AccountError("login_taken", f"the login name {login!r} is taken", 409)
    closed = _reserved(db, login, at_ms)
    if closed is not None:
        free = time.strftime("%Y-%m-%d", time.gmtime(closed.closed_ms / 1000 + RESERVED_DAYS * 86400))
        raise AccountError("login_taken", f"the login name {login!r} belonged to an account closed lately: it is "
                           f"kept for its player until {free}", 409)


def _reserved(db: Session, login: str, at_ms: int) -> Any:
    """The reservation of a closed account's login name, if its time is not up (one whose time is up counts
    for nothing, and is replaced when the login's next account closes)."""
    row = db.get(ClosedLoginRow, login)
    if row is not None and row.closed_ms <= at_ms - RESERVED_DAYS * 86_400_000:
        return None
    return row


def _reopen(db: Session, user: User) -> User:
    """Give the closed account ``user`` (its id and its reserved login) back to its player: its login name
    and password, and the display name it had if no other account has taken it meanwhile."""
    closed = db.get(ClosedLoginRow, user.login)
    row = db.get(UserRow, user.id)
    if closed is None or row is None or closed.user_id != user.id:
        raise AccountError("wrong_password", "wrong login name or password", 401)
    name = row.name
    former = db.scalar(select(UserNameRow.name).where(UserNameRow.user_id == user.id)
                       .order_by(UserNameRow.until_ms.desc(), UserNameRow.id.desc()).limit(1))
    if former is not None:
        try:
            _name_free(db, former, user.id)
            name = former
        except AccountError:
            pass  # another player's now: the neutral name stays, the player may choose another
    row.login, row.password_hash, row.name, row.name_key = user.login, closed.password_hash, name, name_key(name)
    db.delete(closed)
    return User(user.id, user.login, name)


def _name_taken(name: str) -> AccountError:
    return AccountError("name_taken", f"the name {name!r} is another player's", 409)


def _taken(exc: IntegrityError, user: User) -> AccountError:
    """What a unique index refused, said as the check before it would have (the other sign-up came first)."""
    said = str(exc.orig or exc).lower()
    if "name_key" in said:
        return _name_taken(user.name)
    return AccountError("login_taken", f"the login name {user.login!r} is taken", 409)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts:
    """Users, their sessions and browsers in the store; the CSRF key; the sign-in rate limits."""

    def __init__(self, store: Store, *, bus: Bus | None = None, now: Callable[[], float] = time.time,
                 hasher: PasswordHasher | None = None, login_limit: int = 5, address_limit: int = 20,
                 window: float = 300.0, hashes_at_once: int = HASHES_AT_ONCE,
                 hashes_waiting: int = HASHES_WAITING, signups: int = SIGNUPS_PER_ADDRESS,
                 site_signups: int = SIGNUPS_PER_MINUTE, newcomers: int = NEWCOMERS_PER_MINUTE) -> None:
        self.store = store
        self.bus = bus or MemoryBus()
        self.hasher = hasher or owasp_hasher()
        self.hashing = Hashing(self.hasher, hashes_at_once, hashes_waiting)
        self.signups = signups
        self.site_signups, self.newcomers = site_signups, newcomers
        # the threads sign-ins and sign-ups may use for the database at once: a storm of them must not
        # take every thread of the shared pool, which the games' group commits need
        self._db_threads = anyio.CapacityLimiter(DB_THREADS)
        self._swept_ms = 0
        # ``now`` is a wall clock: the failures are kept across restarts
        self.by_login = RateLimiter(store, login_limit, window, now)
        self.by_address = RateLimiter(store, address_limit, window, now)
        self._csrf_key: bytes | None = None
        self._sockets: dict[str, set[Callable[[], None]]] = {}  # session token hash -> its pages' "signed out"
        self.mailer: Any = None  # a patience.server.mail.Mailer when the server sends mail (password resets)
        self.public_url = ""  # the site's address, for the links in mails
        # a hash to check against when the login is unknown, so that the answer takes as long
        self._dummy = self.hasher.hash(secrets.token_hex(8))

    async def _db(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._db_threads)

    # -- CSRF --------------------------------------------------------------------------------

    def csrf_key(self) -> bytes:
        if self._csrf_key is None:
            self._csrf_key = server_secret(self.store.engine, "csrf")
        return self._csrf_key

    def csrf_token(self, browser: str) -> str:
        return hmac.new(self.csrf_key(), f"csrf|{browser}".encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, browser: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.csrf_token(browser), str(token))

    # -- accounts ----------------------------------------------------------------------------

    async def sign_up(self, login: str, name: str, password: str, browser: str | None,
                      address: str = "?", agent: str | None = None) -> tuple[User, str]:
        """A new account, signed in: the user and the session token for the cookie.

        Without a display name, the account is shown as "Player" and a number: the login name, which
        signs in, stays private."""
        login = str(login).strip().lower()
        if not LOGIN.match(login):
            raise AccountError("bad_login", "a login name is 3 to 32 letters, digits, '.', '_' or '-'")
        display = clean_name(name) if str(name or "").strip() else f"Player {secrets.randbelow(900_000) + 100_000}"
        if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise AccountError("bad_password", f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters")
        address = address_group(address)
        wait = await self.bus.hit(f"rate:signup:{address}", SIGNUP_WINDOW, self.signups)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rate_limited", f"too many new accounts from here: try again in {seconds} s", 429,
                               seconds)
        seen = await self._site_signup(address)
        try:
            await self._db(self._login_free, login)
            await self._db(self._name_free, display)
            digest = await self.hashing.hash(password, lane=SIGNUP, key=address)
            user = User(secrets.token_urlsafe(12), login, display)
            await self._db(self._insert_user, user, digest, browser, address)
        except BaseException:
            if seen is not None:  # no account made: the address is still new
                await self.bus.release(f"signup-seen:{address}", seen)
            raise
        return user, await self._db(self._new_session, user.id, agent)

    async def _site_signup(self, address: str) -> str | None:
        """Count a sign-up against the site's bound, or refuse it (see the module's text); the lease that
        marks ``address`` as having made an account lately, if it is new (given back if the sign-up fails)."""
        seen = await self.bus.acquire(f"signup-seen:{address}", SIGNUP_WINDOW)  # None: not new in the window
        busy = await self.bus.hit("rate:signups-site", 60.0, self.site_signups)
        if busy:
            wait = await self.bus.hit("rate:signups-newcomers", 60.0, self.newcomers) if seen is not None else busy
            if wait:
                if seen is not None:
                    await self.bus.release(f"signup-seen:{address}", seen)
                seconds = max(1, int(wait + 0.999))
                raise AccountError("rate_limited", "many new accounts on the site just now: try again in "
                                   f"{seconds} s", 429, seconds)
        return seen

    def _name_free(self, name: str) -> None:
        with Session(self.store.engine) as db:
            _name_free(db, name, None)

    def _login_free(self, login: str) -> None:
        with Session(self.store.engine) as db:
            _login_free(db, login, self._wall_ms())

    def _wall_ms(self) -> int:
        return int(self.by_login.now() * 1000)

    def _insert_user(self, user: User, digest: str, browser: str | None, address: str = "?") -> None:
        now = now_ms()
        try:
            with Session(self.store.engine) as db, db.begin():
                _login_free(db, user.login, self._wall_ms())
                _name_free(db, user.name, user.id)
                db.add(UserRow(id=user.id, login=user.login, name=user.name, name_key=name_key(user.name),
                               password_hash=digest, created_ms=now))
                db.flush()
                if browser:
                    # the solo statistics of this browser now belong to the account
                    db.merge(UserBrowserRow(browser_id=browser, user_id=user.id, linked_ms=now))
                add_traces(db.connection(), user.id, _traces(browser, address), now)
        except IntegrityError as exc:  # a sign-up of the same login or name committed in between
            raise _taken(exc, user) from None

    async def sign_in(self, login: str, password: str, browser: str | None, address: str,
                      old_token: str | None = None, agent: str | None = None) -> tuple[User, str]:
        """Check the password (under the rate limits) and open a session (``old_token``'s is closed).

        The failures counted are those of this login from this address, and of this address: a
        stranger's guesses slow the stranger, never the owner. The sign-ins of one address take
        turns under a lock of the bus, so that parallel guesses cannot pass the limit. The hash waits
        in the sign-ins' queue of :class:`Hashing`, ranked by what the database knows before it: a
        browser the account has signed in on goes first, then the addresses by their failures."""
        login = str(login).strip().lower()
        address = address_group(address)
        login_key, address_key = f"login:{login}|addr:{address}", f"addr:{address}"
        wait_s = await self.bus.hit(f"rate:signin:{address}", 60.0, SIGNINS_PER_ADDRESS)
        if wait_s:  # a script hammering the form: answered before any database work
            wait = max(1, int(wait_s + 0.999))
            raise AccountError("rate_limited", f"too many sign-ins from here: try again in {wait} s", 429, wait)
        try:
            async with self.bus.lock(f"lock:signin:{address}", ttl_s=30.0, wait_s=10.0):
                wait, found, rank = await self._db(self._before_hash, login, login_key, address_key, browser)
                if wait:
                    raise AccountError("rate_limited", f"too many failed sign-ins: try again in {wait} s", 429, wait)
                ok = await self.hashing.verify(found[1] if found else self._dummy, password, lane=SIGNIN,
                                               key=address, rank=rank)
                if not ok or found is None:
                    await self._db(self._failed, login_key, address_key)
                    raise AccountError("wrong_password", "wrong login name or password", 401)
        except BusError:
            raise AccountError("busy", "too many sign-ins from here at once: try again in a few seconds", 429,
                               3) from None
        user, stored = found
        rehashed = (await self.hashing.hash(password, lane=SIGNIN, key=address)
                    if self.hasher.check_needs_rehash(stored) else None)
        user = await self._db(self._signed_in, user, login_key, browser, rehashed, old_token, address)
        return user, await self._db(self._new_session, user.id, agent)

    def _before_hash(self, login: str, login_key: str, address_key: str,
                     browser: str | None) -> tuple[int, tuple[User, str] | None, int]:
        """What is known before the hash, in one database session: the seconds to wait (0: none), the
        account and its hash, and the try's rank in the queue (0: a browser the account has signed in
        on; else 1 and the address's failures in the window)."""
        with Session(self.store.engine) as db:
            failed = self.by_address.recent(db, address_key)
            wait = max(self.by_login.wait_after(self.by_login.recent(db, login_key)),
                       self.by_address.wait_after(failed))
            if wait:
                return wait, None, 0
            row = db.scalar(select(UserRow).where(UserRow.login == login))
            if row is None:  # a closed account its player may reopen: the login and the password it had
                closed = _reserved(db, login, self._wall_ms())
                if closed is None or not closed.password_hash:
                    return 0, None, 1 + len(failed)
                # no name yet: the account is reopened once the password is right (_signed_in)
                return 0, (User(closed.user_id, login, ""), closed.password_hash), 1 + len(failed)
            known = browser is not None and db.scalar(select(UserBrowserRow.user_id).where(
                UserBrowserRow.browser_id == browser)) == row.id
            return 0, (User(row.id, row.login, row.name), row.password_hash), 0 if known else 1 + len(failed)

    def _failed(self, login_key: str, address_key: str) -> None:
        """Count a failure against both keys in one short transaction; the rows past the windows are
        swept at most once a minute (a write fewer for every guess of a storm)."""
        now = self.by_login._ms(self.by_login.now())
        with Session(self.store.engine) as db, db.begin():
            if now - self._swept_ms >= 60_000:
                window = max(self.by_login.window, self.by_address.window)
                db.execute(delete(SigninFailureRow).where(SigninFailureRow.at_ms <= now - self.by_login._ms(window)))
                self._swept_ms = now
            db.add_all([SigninFailureRow(key_hash=RateLimiter._key(login_key), at_ms=now),
                        SigninFailureRow(key_hash=RateLimiter._key(address_key), at_ms=now)])

    def _signed_in(self, user: User, login_key: str, browser: str | None, rehashed: str | None,
                   old_token: str | None, address: str = "?") -> User:
        """Note a sign-in (and reopen the account if it was closed, and leave the ladder's traces of the
        browser and the address); the user signed in."""
        self.by_login.forget(login_key)
        now = now_ms()
        with Session(self.store.engine) as db, db.begin():
            if not user.name:
                user = _reopen(db, user)
            if rehashed is not None:
                db.get(UserRow, user.id).password_hash = rehashed  # type: ignore[union-attr]
            if browser and db.get(UserBrowserRow, browser) is None:
                db.add(UserBrowserRow(browser_id=browser, user_id=user.id, linked_ms=now))
            add_traces(db.connection(), user.id, _traces(browser, address), now)
            if old_token:  # a new session at every sign-in: a token known before it opens nothing
                db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash == _token_hash(old_token)))
        return user

    def _new_session(self, user_id: str, agent: str | None = None) -> str:
        token = secrets.token_urlsafe(32)
        now = now_ms()
        with Session(self.store.engine) as db, db.begin():
            db.add(AuthSessionRow(token_hash=_token_hash(token), user_id=user_id, created_ms=now,
                                  expires_ms=now + SESSION_DAYS * 86_400_000, browser=browser_label(agent),
                                  seen_ms=now))
        return token

    # -- the play sockets of a session ---------------------------------------------------------

    async def start(self) -> None:
        """Hear of sign-outs on every process of the arena."""
        await self.bus.subscribe("signout", self._heard_sign_out)

    def watch(self, token: str | None, signed_out: Callable[[], None]) -> Callable[[], None]:
        """Call ``signed_out`` when the session of ``token`` ends (on any process); returns the undo."""
        if not token:
            return lambda: None
        key = _token_hash(token)
        self._sockets.setdefault(key, set()).add(signed_out)

        def forget() -> None:
            watchers = self._sockets.get(key)
            if watchers is not None:
                watchers.discard(signed_out)
                if not watchers:
                    del self._sockets[key]
        return forget

    async def signed_out(self, token: str | None) -> None:
        """Tell every process that the session of ``token`` ended: its open play sockets close."""
        if token:
            await self.bus.publish("signout", _token_hash(token).encode())

    def _heard_sign_out(self, data: bytes) -> None:
        for signed_out in list(self._sockets.pop(data.decode(), ())):
            signed_out()

    def sign_out(self, token: str | None) -> None:
        if not token:
            return
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash == _token_hash(token)))

    def user_for(self, token: str | None) -> User | None:
        """The user a session token belongs to, if the session is still open."""
        if not token or len(token) > 100:
            return None
        key = _token_hash(token)
        with Session(self.store.engine) as db:
            row = db.execute(select(UserRow.id, UserRow.login, UserRow.name, AuthSessionRow.expires_ms,
                                    AuthSessionRow.seen_ms)
                             .join(AuthSessionRow, AuthSessionRow.user_id == UserRow.id)
                             .where(AuthSessionRow.token_hash == key)).first()
        now = now_ms()
        if row is None or row.expires_ms < now:
            return None
        if (row.seen_ms or 0) < now - SEEN_EVERY_MS:  # "last seen" of the account page, a write every few minutes
            with Session(self.store.engine) as db, db.begin():
                db.execute(update(AuthSessionRow).where(AuthSessionRow.token_hash == key).values(seen_ms=now))
        return User(row.id, row.login, row.name)

    def rename(self, user_id: str, name: str) -> User:
        """Give the account the display name ``name``; the one it had is kept for moderators (``user_names``)."""
        display = clean_name(name)
        try:
            with Session(self.store.engine) as db, db.begin():
                row = db.get(UserRow, user_id)
                if row is None:
                    raise AccountError("no_user", "no such account", 404)
                _name_free(db, display, user_id)
                if row.name != display:
                    db.add(UserNameRow(user_id=row.id, name=row.name, until_ms=now_ms()))
                row.name, row.name_key = display, name_key(display)
                user = User(row.id, row.login, row.name)
        except IntegrityError:  # another account took the name in between
            raise _name_taken(display) from None
        return user

    def user(self, user_id: str) -> User | None:
        with Session(self.store.engine) as db:
            row = db.get(UserRow, user_id)
            return None if row is None else User(row.id, row.login, row.name)

    def browsers(self, user_id: str) -> list[str]:
        with Session(self.store.engine) as db:
            return list(db.scalars(select(UserBrowserRow.browser_id).where(UserBrowserRow.user_id == user_id)))

    # -- the account page: password, sessions, name, e-mail, export, closing ------------------------

    async def _ended(self, hashes: list[str]) -> None:
        """Tell every process that these sessions ended: their open play sockets close."""
        for key in hashes:
            await self.bus.publish("signout", key.encode())

    async def check_password(self, user_id: str, password: str, address: str = "?") -> str:
        """Refuse (401 ``wrong_password``) unless ``password`` is the account's; the typed passwords of an
        account are limited (:data:`PASSWORD_CHECKS` in :data:`CHECKS_WINDOW`), right or wrong. Returns
        the stored hash."""
        wait = await self.bus.hit(f"rate:pwcheck:{user_id}", CHECKS_WINDOW, PASSWORD_CHECKS)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rate_limited", f"too many passwords typed: try again in {seconds} s", 429, seconds)
        stored = await self._db(self._hash_of, user_id)
        ok = await self.hashing.verify(stored or self._dummy, str(password)[:MAX_PASSWORD + 1], lane=SIGNIN,
                                       key=address_group(address), rank=0)
        if not ok or not stored:
            raise AccountError("wrong_password", "wrong password", 401)
        return stored

    def _hash_of(self, user_id: str) -> str | None:
        with Session(self.store.engine) as db:
            return db.scalar(select(UserRow.password_hash).where(UserRow.id == user_id))

    async def change_password(self, user_id: str, old: str, new: str, token: str | None,
                              address: str = "?") -> None:
        """Set a new password (the old one typed again); every other session of the account ends, on
        every process, and any reset link sent before stops working."""
        if not MIN_PASSWORD <= len(new) <= MAX_PASSWORD:
            raise AccountError("bad_password", f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters")
        await self.check_password(user_id, old, address)
        digest = await self.hashing.hash(new, lane=SIGNIN, key=address_group(address))
        keep = _token_hash(token) if token else None
        await self._ended(await self._db(self._set_password, user_id, digest, keep))

    def _set_password(self, user_id: str, digest: str, keep: str | None) -> list[str]:
        with Session(self.store.engine) as db, db.begin():
            db.execute(update(UserRow).where(UserRow.id == user_id).values(password_hash=digest))
            db.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user_id))
            return _end_sessions(db, user_id, keep)

    def sessions(self, user_id: str, token: str | None) -> list[dict[str, Any]]:
        """The account's open sessions, the newest first: an id (the start of the token's hash: it opens
        nothing), the browser, when signed in and last seen, and which one is this browser's."""
        mine = _token_hash(token) if token else ""
        now = now_ms()
        with Session(self.store.engine) as db:
            rows = db.scalars(select(AuthSessionRow).where(AuthSessionRow.user_id == user_id,
                                                           AuthSessionRow.expires_ms >= now)
                              .order_by(AuthSessionRow.created_ms.desc()))
            return [{"id": row.token_hash[:SESSION_ID], "browser": row.browser or "", "created_ms": row.created_ms,
                     "seen_ms": row.seen_ms or row.created_ms, "current": row.token_hash == mine} for row in rows]

    async def end_session(self, user_id: str, session_id: str) -> bool:
        """End one session of the account (by the id :meth:`sessions` gave it); False if there is none."""
        if not re.fullmatch(rf"[0-9a-f]{{{SESSION_ID}}}", str(session_id)):
            return False
        ended = await self._db(self._end_one, user_id, str(session_id))
        await self._ended(ended)
        return bool(ended)

    def _end_one(self, user_id: str, session_id: str) -> list[str]:
        with Session(self.store.engine) as db, db.begin():
            hashes = [h for h in db.scalars(select(AuthSessionRow.token_hash).where(AuthSessionRow.user_id == user_id))
                      if h.startswith(session_id)]
            if hashes:
                db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash.in_(hashes)))
            return hashes

    async def change_name(self, user_id: str, name: str) -> User:
        """A new display name, at most :data:`RENAMES_PER_DAY` a day (the same name again costs nothing);
        the old one is kept for moderators."""
        display = clean_name(name)
        current = await self._db(self.user, user_id)
        if current is None:
            raise AccountError("no_user", "no such account", 404)
        if current.name == display:
            return current
        await self._db(self._name_free_for, display, user_id)
        wait = await self.bus.hit(f"rate:rename:{user_id}", 86_400.0, RENAMES_PER_DAY)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rename_limited", f"the name was changed lately: try again in {seconds} s", 429,
                               seconds)
        return await self._db(self.rename, user_id, display)

    def _name_free_for(self, name: str, user_id: str) -> None:
        with Session(self.store.engine) as db:
            _name_free(db, name, user_id)

    def former_names(self, user_id: str) -> list[tuple[str, int]]:
        """The display names the account had and until when (ms), the oldest first: for moderators."""
        with Session(self.store.engine) as db:
            return [(name, until) for name, until in db.execute(
                select(UserNameRow.name, UserNameRow.until_ms).where(UserNameRow.user_id == user_id)
                .order_by(UserNameRow.until_ms, UserNameRow.id))]

    def email_of(self, user_id: str) -> str | None:
        with Session(self.store.engine) as db:
            return db.scalar(select(UserRow.email).where(UserRow.id == user_id))

    async def set_email(self, user_id: str, email: str, password: str, address: str = "?") -> str | None:
        """Set (or, empty, remove) the account's e-mail address, which only a password reset uses; the
        password is typed again, since the address can set a new one."""
        text = str(email or "").strip()
        if text and (len(text) > 254 or not EMAIL.match(text)):
            raise AccountError("bad_email", "that is not an e-mail address")
        if text:
            local, _, domain = text.rpartition("@")
            text = f"{local}@{domain.lower()}"
        await self.check_password(user_id, password, address)
        await self._db(self._store_email, user_id, text or None)
        return text or None

    def _store_email(self, user_id: str, email: str | None) -> None:
        with Session(self.store.engine) as db, db.begin():
            db.execute(update(UserRow).where(UserRow.id == user_id).values(email=email))
            db.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user_id))

    def export(self, user_id: str) -> dict[str, Any] | None:
        from patience.server.storage.export import export_account

        return export_account(self.store.engine, user_id)

    async def close(self, user_id: str, password: str, address: str = "?") -> None:
        """Close the account (the password typed again): see :mod:`patience.server.storage.roles`. Not in
        the middle of a duel: its end would write the name back."""
        await self.check_password(user_id, password, address)
        if await self.bus.hget("busy", user_id) is not None:
            raise AccountError("playing", "finish your match first", 409)
        await self._ended(await self._db(self._close, user_id))

    def _close(self, user_id: str) -> list[str]:
        from patience.server.storage.roles import close_user

        with Session(self.store.engine) as db, db.begin():
            row = db.get(UserRow, user_id)
            return [] if row is None else close_user(db, row, reopenable=True, at_ms=self._wall_ms())

    # -- a forgotten password: a reset link by e-mail -------------------------------------------------

    async def request_reset(self, who: str, address: str, send: Callable[[str, str], Any]) -> None:
        """Send a reset link to the e-mail address of the account whose login name or address is ``who``,
        if there is one; the answer is the same either way (only the limit of the address is said).
        ``send(email, token)`` sends the mail (off the event loop, its failure logged)."""
        address = address_group(address)
        wait = await self.bus.hit(f"rate:reset:addr:{address}", 3600.0, RESETS_PER_ADDRESS)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rate_limited", f"too many reset requests from here: try again in {seconds} s", 429,
                               seconds)
        text = str(who or "").strip()
        if not text or len(text) > 254:
            return
        found = await self._db(self._reset_target, text)
        if found is None:
            return
        user_id, email = found
        mail_key = hashlib.sha256(email.encode()).hexdigest()
        if (await self.bus.hit(f"rate:reset:user:{user_id}", 3600.0, RESETS_PER_ACCOUNT)
                or await self.bus.hit(f"rate:reset:mail:{mail_key}", 3600.0, RESETS_PER_ACCOUNT)):
            return  # enough mails lately: the same answer, no mail
        token = secrets.token_urlsafe(32)
        await self._db(self._store_reset, user_id, token)
        send(email, token)

    def _reset_target(self, who: str) -> tuple[str, str] | None:
        with Session(self.store.engine) as db:
            if "@" in who:
                local, _, domain = who.rpartition("@")
                row = db.execute(select(UserRow.id, UserRow.email).where(
                    UserRow.email == f"{local}@{domain.lower()}").limit(1)).first()
            else:
                row = db.execute(select(UserRow.id, UserRow.email).where(UserRow.login == who.lower())).first()
        if row is None or not row.email:
            return None
        return row.id, row.email

    def _store_reset(self, user_id: str, token: str) -> None:
        now = now_ms()
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(PasswordResetRow).where(PasswordResetRow.expires_ms < now))
            db.add(PasswordResetRow(token_hash=_token_hash(token), user_id=user_id, made_ms=now,
                                    expires_ms=now + RESET_MINUTES * 60_000))

    async def reset_password(self, token: str, new: str, address: str = "?") -> None:
        """Set a new password with a reset link's token: once, within :data:`RESET_MINUTES`; every
        session of the account ends, and every other link stops working."""
        if not MIN_PASSWORD <= len(new) <= MAX_PASSWORD:
            raise AccountError("bad_password", f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters")
        address = address_group(address)
        wait = await self.bus.hit(f"rate:newpw:{address}", 3600.0, RESETS_PER_ADDRESS * 4)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rate_limited", f"too many tries from here: try again in {seconds} s", 429, seconds)
        text = str(token or "")
        if not 20 <= len(text) <= 100 or await self._db(self._reset_user, text) is None:
            raise AccountError("bad_token", "this link is used or too old: ask for a new one", 400)
        digest = await self.hashing.hash(new, lane=SIGNIN, key=address)
        ended = await self._db(self._use_reset, text, digest)
        if ended is None:  # used at the same moment by another try
            raise AccountError("bad_token", "this link is used or too old: ask for a new one", 400)
        await self._ended(ended)

    async def reset_link_works(self, token: str) -> bool:
        """Whether a reset link's token would set a password now (not used, not too old): the page says so
        before it shows the link's form. It changes nothing; a token is too long (32 random bytes) to guess."""
        text = str(token or "")
        return 20 <= len(text) <= 100 and await self._db(self._reset_user, text) is not None

    def _reset_user(self, token: str) -> str | None:
        with Session(self.store.engine) as db:
            row = db.get(PasswordResetRow, _token_hash(token))
            return None if row is None or row.expires_ms < now_ms() else row.user_id

    def _use_reset(self, token: str, digest: str) -> list[str] | None:
        with Session(self.store.engine) as db, db.begin():
            row = db.get(PasswordResetRow, _token_hash(token))
            if row is None or row.expires_ms < now_ms():
                return None
            user_id = row.user_id
            done = db.execute(delete(PasswordResetRow).where(PasswordResetRow.token_hash == row.token_hash))
            if done.rowcount != 1:  # type: ignore[attr-defined]
                return None
            db.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user_id))
            db.execute(update(UserRow).where(UserRow.id == user_id).values(password_hash=digest))
            return _end_sessions(db, user_id, None)


SESSION_ID = 16  # hex digits of a session's hash that name it on the account page


def _end_sessions(db: Session, user_id: str, keep: str | None) -> list[str]:
    """Delete the account's sessions but ``keep`` (a token hash); returns the hashes deleted."""
    hashes = [h for h in db.scalars(select(AuthSessionRow.token_hash).where(AuthSessionRow.user_id == user_id))
              if h != keep]
    if hashes:
        db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash.in_(hashes)))
    return hashes


_BROWSERS = (("Edg/", "Edge"), ("OPR/", "Opera"), ("SamsungBrowser/", "Samsung Internet"), ("Firefox/", "Firefox"),
             ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("Chrome/", "Chrome"), ("Safari/", "Safari"))
_SYSTEMS = (("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("Windows", "Windows"),
            ("Mac OS X", "macOS"), ("Macintosh", "macOS"), ("CrOS", "ChromeOS"), ("Linux", "Linux"))


def browser_label(agent: str | None) -> str | None:
    """A short name for a browser from its User-Agent, kept with its session (the rest is not kept).

    >>> browser_label("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
    'Firefox on Linux'
    >>> browser_label("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    ...               "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")
    'Safari on iPhone'
    >>> browser_label("python-httpx/0.27.0")
    'python-httpx/0.27.0'
    """
    if not agent:
        return None
    text = str(agent)
    name = next((label for mark, label in _BROWSERS if mark in text), None)
    system = next((label for mark, label in _SYSTEMS if mark in text), None)
    if name is None:  # a program: its first word, printable and short
        word = text.split(" ", 1)[0]
        return "".join(c for c in word if c.isprintable())[:40] or None
    return f"{name} on {system}" if system else name
