"""Arena tournaments on one server process or many: the site's schedule, joining and pausing, the pairing
of free players, and the live standings (the rules: :mod:`patience.tournament`; the tables:
:mod:`patience.server.storage.tournaments`).

A player who joined is paired from the tournament's page: the page's process keeps it in the bus
(hash ``tour_pages:ID``: user -> process and page, as the lobby's pools do), and the match of each
pairing is started like any duel, its ``duel`` going to that page wherever it is. The pairing runs on
the process that holds the arena's ``pairer`` lease, once a second; each pair is first claimed in the
database by a conditional update of both players (:func:`claim_pair`), so a pair is made once even
when two processes pair at the same moment (a lease that lapsed), and the match is written with its
tournament duel in one transaction. The pages of a process that looks stopped are taken out of
``tour_pages``; a process that was only stalled puts its players' pages back within
:data:`KEEP_SECONDS` of running again (:meth:`Tournaments.keep_pages`). A player is free again once
their match is over, whichever process played it; the standings are read from the database, so every
process shows the same ones.

The site schedules one tournament of each duel game every hour (:data:`HOURLY_MINUTES` long, 5-minute
duels), made once whichever process makes it first (a unique slot); the list shows them first.

Under hostile load (the counters are the bus's sliding windows, shared by every process):

- **making tournaments**: an account has at most :data:`OPEN_PER_ACCOUNT` open (to come or going
  on: counted in the database under a lock of the bus per account, so that requests at once on
  several processes cannot pass it), makes at most :data:`MADE_PER_ACCOUNT` a day, and one address
  (an IPv6 /64) :data:`MADE_PER_ADDRESS` a day for all its accounts (:meth:`Tournaments.make`);
- **guessing a password**: an account tries tournament passwords at most :data:`GUESSES_PER_ACCOUNT`
  times in :data:`GUESS_WINDOW_S` over every tournament, and :data:`GUESSES_PER_TOURNAMENT` times
  at one; the tries after an account's first at a tournament are :data:`GUESSES_AGAIN_PER_TOURNAMENT`
  for all accounts together, which holds many accounts of one guesser; and the accounts of one
  address (an IPv6 /64) try :data:`GUESSES_PER_ADDRESS` times together. An account's *first* try at
  a tournament never counts against the tournament's shared limit, so nobody's guesses keep a friend
  who knows the password out. Every budget is counted before any hash: a refused try costs the server
  no hash. The hash itself waits in the tournament passwords' queue of the accounts'
  :class:`patience.server.accounts.Hashing`, whose turns it shares fairly with the sign-ins and
  sign-ups (two places per address, however many accounts it has, a first try before the others).
  A wrong password is answered ``bad_password`` and nothing more. A process remembers whom (and
  which address) it refused at which tournament until they may try again: a script's next tries are
  answered without a database read, a bus call or a hash.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import anyio
import msgspec

from patience.duel import FORMATS, Format
from patience.errors import BadInputError
from patience.ratings import Rating
from patience.server.accounts import TOURNAMENT, AccountError, Hashing, address_group
from patience.server.bus import Bus, BusError
from patience.server.live import Connection, Now
from patience.server.protocol import TourAsk, TourDuel, TourJoin, TourLine, TourMsg, TourPause, encode
from patience.server.storage.league import load_rating, names_of
from patience.server.storage.store import Store
from patience.server.storage.tournaments import (
    Tournament,
    claim_pair,
    count_open,
    find_tournament,
    free_players,
    insert_duel,
    join_tournament,
    make_tournament,
    pause_tournament,
    players_of,
    release_claim,
    running_tournaments,
    standings,
)
from patience.tournament import MAX_MINUTES, MIN_MINUTES, Entrant, pair_free

__all__ = ["HOURLY_MINUTES", "TOURNAMENT_MESSAGES", "FormError", "Refused", "Tournaments", "check_password",
           "new_tournament", "whole_number"]

log = logging.getLogger("patience.server")

HOURLY_MINUTES = 57  # a scheduled tournament's length: the next one starts 3 minutes after it ends
HOURLY_LIMIT_S = 300
SCHEDULE_SECONDS = 60.0  # how often a process makes sure this hour's and the next one's tournaments exist
PAIR_SECONDS = 1.0
TELL_SECONDS = 1.0  # the standings of the tournaments shown here are read again this often
KEEP_SECONDS = 5.0  # a process puts its players' pages back in ``tour_pages`` this often if another took them out
NAME_LONGEST = 60
AHEAD_DAYS = 7  # a tournament may be made to start at most this far ahead
TOURNAMENT_MESSAGES = (TourAsk, TourJoin, TourPause)

PASSWORD_LONGEST = 100
ADDRESS = "address:"  # in a process's memory of refusals, an address's (of every tournament) rather than an account's

OPEN_PER_ACCOUNT = 3  # tournaments to come or going on that one account made
MADE_PER_ACCOUNT = 10  # tournaments one account makes in MADE_WINDOW_S
MADE_PER_ADDRESS = 20  # tournaments the accounts of one address make in MADE_WINDOW_S
MADE_WINDOW_S = 86_400.0
GUESS_WINDOW_S = 600.0
GUESSES_PER_ACCOUNT = 10  # tries of tournament passwords by one account, over every tournament
GUESSES_PER_TOURNAMENT = 5  # tries of one account at one tournament
GUESSES_AGAIN_PER_TOURNAMENT = 30  # tries after their first at one tournament, of all accounts together
GUESSES_PER_ADDRESS = 20  # tries of the accounts of one address (an IPv6 /64) together, over every tournament


class FormError(BadInputError):
    """A field of the tournament form that cannot be: ``code`` says which mistake (the page says it in
    the reader's language), the text says it in English."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Refused(Exception):
    """Too many tournaments or password tries: ``code``, and the seconds to wait (None: until one of
    the account's open tournaments is over)."""

    def __init__(self, code: str, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after = retry_after


def check_password(password: str) -> str:
    """A tournament's password as given, checked (the empty string: none)."""
    if len(password) > PASSWORD_LONGEST:
        raise FormError("long_password", f"a tournament's password has at most {PASSWORD_LONGEST} characters")
    return password


def whole_number(text: str, code: str, what: str) -> int:
    """A field that holds a whole number (empty: 0), else the form's ``code``."""
    try:
        return int(text.strip() or "0")
    except ValueError:
        raise FormError(code, f"{what} is a whole number, not {text[:20]!r}") from None


def new_tournament(name: str, fmt: str, minutes: int, start_ms: int, now_ms: int, user_id: str,
                   password_hash: str | None = None) -> Tournament:
    """A tournament a player makes, checked: a name, a duel format, 15 to 120 minutes, a start from now
    to a week ahead, an optional password (``password_hash``: as the accounts' hashing made it from a
    password :func:`check_password` let through). Each mistake is a :class:`FormError` of its own."""
    name = " ".join(name.split())
    if not 3 <= len(name) <= NAME_LONGEST or not name.isprintable():
        raise FormError("bad_name", f"a tournament's name has 3 to {NAME_LONGEST} characters")
    try:
        key = Format.from_key(fmt).key
    except BadInputError as exc:
        raise FormError("bad_format", str(exc)) from None
    if not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise FormError("bad_minutes", f"a tournament lasts {MIN_MINUTES} to {MAX_MINUTES} minutes")
    start_ms = max(start_ms, now_ms)
    if start_ms > now_ms + AHEAD_DAYS * 86_400_000:
        raise FormError("bad_start", f"a tournament starts within {AHEAD_DAYS} days")
    return Tournament(secrets.token_urlsafe(9), name, key, start_ms, start_ms + minutes * 60_000,
                      created_by=user_id, password=password_hash)


def _refuse(wait: float, code: str, said: str) -> None:
    """Refuse (:class:`Refused`) if a counter of the bus said to ``wait`` (0: go on)."""
    if wait:
        seconds = max(1, int(wait + 0.999))
        raise Refused(code, f"{said}: try again in {seconds} s", seconds)


def hourly(hour_ms: int) -> list[Tournament]:
    """The tournaments the site holds in the hour starting at ``hour_ms``: one for each duel game."""
    stamp = time.strftime("%Y-%m-%dT%H", time.gmtime(hour_ms / 1000))
    return [Tournament(secrets.token_urlsafe(9), "", Format(game, None, HOURLY_LIMIT_S).key, hour_ms,
                       hour_ms + HOURLY_MINUTES * 60_000, slot=f"hourly/{stamp}/{game}") for game in FORMATS]


class Pairs(Protocol):
    """What the tournaments need of the arena's lobby (:class:`patience.server.arena.lobby.Lobby`)."""

    async def start_pair(self, fmt: Format, sides: list[tuple[str, str, Rating, str, str]], match_id: str,
                         also: Iterable[Callable[[Any], None]] = ()) -> bool:
        """Start match ``match_id`` of two players (user, name, rating, process and page of each), out of
        any pool they wait in, writing ``also`` in its transaction; False if it could not be started."""
        ...


class Tournaments:
    """The tournaments of one arena process: pages here that show one, the pairing, the schedule.
    ``pairs`` starts their duels; ``hashing`` checks their passwords (the accounts'); ``wall`` is the clock
    the processes share."""

    def __init__(self, store: Store, bus: Bus, pairs: Pairs, hashing: Hashing, *, wall: Now = time.time,
                 schedule: bool = True) -> None:
        self.engine = store.engine
        self.bus = bus
        self.node = bus.node
        self.pairs = pairs
        self.hashing = hashing
        self.wall = wall
        self.schedule = schedule
        self.pages: dict[str, set[Connection]] = {}  # tournament id -> pages here that show it
        self.shown: dict[str, str] = {}  # page id -> the tournament it shows
        self.sent: dict[str, tuple[Any, ...]] = {}  # page id -> what the last standings it got showed
        self._paired_at = 0.0
        self._told_at = 0.0
        self._kept_at = 0.0
        self._scheduled_at = -SCHEDULE_SECONDS
        self._slots: set[str] = set()
        self._refused: dict[tuple[str, str], float] = {}  # (user, tournament) -> no password tries until then

    def _remember_refusal(self, user: str, tournament_id: str, seconds: int) -> None:
        now = time.monotonic()
        if len(self._refused) >= 10_000:
            self._refused = {key: until for key, until in self._refused.items() if until > now}
        self._refused[(user, tournament_id)] = now + seconds

    def _ms(self) -> int:
        return int(self.wall() * 1000)

    async def _run(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(functools.partial(func, self.engine, *args, **kwargs))

    # -- the clock ---------------------------------------------------------------------------

    async def tick(self, pairer: bool) -> None:
        """Called by the arena's clock: the schedule, the pairing (``pairer``: this process holds the
        arena's pairing lease) and the standings of the tournaments shown here."""
        now = time.monotonic()
        due = []
        if self.schedule and now - self._scheduled_at >= SCHEDULE_SECONDS:
            self._scheduled_at = now
            due.append(self.make_schedule)
        if pairer and now - self._paired_at >= PAIR_SECONDS:
            self._paired_at = now
            due.append(self.pair)
        if self.pages and now - self._told_at >= TELL_SECONDS:
            self._told_at = now
            due.append(self.tell_all)
        if self.pages and now - self._kept_at >= KEEP_SECONDS:
            self._kept_at = now
            due.append(self.keep_pages)
        for work in due:
            try:
                await work()
            except Exception as exc:  # the database is away: the matches' clocks go on, this is tried again
                said = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
                log.warning("tournaments: %s failed: %s", work.__name__, said)

    async def tell_all(self) -> None:
        for tournament_id in list(self.pages):
            await self.tell(tournament_id)

    # -- making one -------------------------------------------------------------------------

    async def make(self, made: Tournament, address: str, password: str, hashing: Hashing) -> Tournament:
        """Write a tournament a player made (checked by :func:`new_tournament`), with the hash of
        ``password`` (none if empty), within the limits (see above): else :class:`Refused`, or the
        hashing's :class:`AccountError` ``busy``. The account's requests take turns under a lock of
        the bus, so that the open ones are counted right whichever process is asked."""
        user = str(made.created_by)
        now_ms = self._ms()
        try:
            async with self.bus.lock(f"lock:tourmake:{user}", ttl_s=30.0, wait_s=15.0):
                if await self._run(count_open, user, now_ms) >= OPEN_PER_ACCOUNT:
                    raise Refused("too_many_open", f"you have {OPEN_PER_ACCOUNT} tournaments to come or going on "
                                  "already: make another once one is over")
                _refuse(await self.bus.hit(f"rate:tourmake:user:{user}", MADE_WINDOW_S, MADE_PER_ACCOUNT),
                        "too_many_tournaments", f"you have made {MADE_PER_ACCOUNT} tournaments today")
                _refuse(await self.bus.hit(f"rate:tourmake:addr:{address_group(address)}", MADE_WINDOW_S,
                                           MADE_PER_ADDRESS),
                        "too_many_tournaments", f"{MADE_PER_ADDRESS} tournaments were made from here today")
                if password:
                    made = dataclasses.replace(made, password=await hashing.hash(password, lane=TOURNAMENT,
                                                                                  key=address_group(address)))
                return await self._run(make_tournament, made)  # type: ignore[no-any-return]
        except BusError:
            raise AccountError("busy", "too many tournaments asked for at once: try again in a few seconds", 429,
                               3) from None

    async def _may_guess(self, tournament_id: str, user: str, group: str) -> int:
        """Count a password try of ``user`` from address group ``group`` at a tournament, or refuse it
        (:class:`Refused`), before any hash; returns the try's rank in the hashing queue (0: the account's
        first try at this tournament)."""
        first = not await self.bus.hit(f"rate:tourpw:first:{tournament_id}:{user}", GUESS_WINDOW_S, 1)
        if not first:
            _refuse(await self.bus.hit(f"rate:tourpw:again:{tournament_id}:{user}", GUESS_WINDOW_S,
                                       GUESSES_PER_TOURNAMENT - 1),
                    "too_many_guesses", "you have tried this tournament's password too many times")
            _refuse(await self.bus.hit(f"rate:tourpw:tour:{tournament_id}", GUESS_WINDOW_S,
                                       GUESSES_AGAIN_PER_TOURNAMENT),
                    "too_many_guesses", "this tournament's password has been tried too many times")
        _refuse(await self.bus.hit(f"rate:tourpw:user:{user}", GUESS_WINDOW_S, GUESSES_PER_ACCOUNT),
                "too_many_guesses", "you have tried tournament passwords too many times")
        try:
            _refuse(await self.bus.hit(f"rate:tourpw:addr:{group}", GUESS_WINDOW_S, GUESSES_PER_ADDRESS),
                    "too_many_guesses", "tournament passwords have been tried too many times from here")
        except Refused as exc:
            self._remember_refusal(ADDRESS, group, exc.retry_after or 1)
            raise
        return 0 if first else 1

    async def make_schedule(self) -> None:
        hour = self._ms() // 3_600_000 * 3_600_000
        for tournament in [*hourly(hour), *hourly(hour + 3_600_000)]:
            if tournament.slot not in self._slots:
                await self._run(make_tournament, tournament)
                self._slots.add(str(tournament.slot))

    async def pair(self) -> None:
        """Pair the free players of every tournament going on (on one process at a time: see above)."""
        now_ms = self._ms()
        for tournament in await self._run(running_tournaments, now_ms):
            try:
                await self._pair(tournament, now_ms)
            except Exception:  # pragma: no cover - one tournament must not stop the others' pairing
                log.exception("pairing tournament %s failed", tournament.id)

    async def _present(self, tournament_id: str) -> dict[str, dict[str, str]]:
        """The players whose page of the tournament is open, on a process that is alive."""
        kept = await self.bus.hgetall(f"tour_pages:{tournament_id}")
        found = {user: json.loads(data) for user, data in kept.items()}
        nodes = {page["node"] for page in found.values()} - {self.node}
        gone = {node for node in nodes if await self.bus.holder(f"node:{node}") is None}
        if gone:
            stale = [user for user, page in found.items() if page["node"] in gone]
            await self.bus.hdel(f"tour_pages:{tournament_id}", *stale)
            found = {user: page for user, page in found.items() if page["node"] not in gone}
        return found

    async def _pair(self, tournament: Tournament, now_ms: int) -> None:
        free = await self._run(free_players, tournament.id, now_ms)
        if len(free) < 2:
            return
        present = await self._present(tournament.id)
        busy = await self.bus.hgetall("busy")
        free = [(user, last) for user, last in free if user in present and user not in busy]
        if len(free) < 2:
            return
        table = {line["id"]: line for line in await self._run(standings, tournament)}
        # a marked account has left the standings (read now, on this process): it is paired no more
        entrants = [Entrant(user, table[user]["points"], table[user]["rating"], last) for user, last in free
                    if user in table]
        fmt = Format.from_key(tournament.format)
        for a, b in pair_free(entrants):
            match_id = secrets.token_urlsafe(12)
            if not await self._run(claim_pair, tournament.id, a, b, match_id, now_ms):
                continue  # one of them was paired by another process meanwhile
            sides = []
            for user in (a, b):
                page = present[user]
                rating = await self._run(load_rating, user, fmt.game)
                sides.append((user, page["name"], rating, page["node"], page["peer"]))
            started = await self.pairs.start_pair(fmt, sides, match_id, [functools.partial(
                insert_duel, tournament_id=tournament.id, match_id=match_id, a=a, b=b)])
            if not started:
                await self._run(release_claim, tournament.id, match_id)
            else:
                log.info("tournament %s: %s meets %s in match %s", tournament.id, a, b, match_id)

    # -- the pages ---------------------------------------------------------------------------

    async def _snapshot(self, tournament_id: str) -> tuple[Tournament, list[TourLine], str | None] | None:
        """A tournament, its standings and the name of who made it (None: no such tournament)."""
        tournament = await self._run(find_tournament, tournament_id)
        if tournament is None:
            return None
        lines = await self._run(standings, tournament)
        by = None
        if tournament.created_by is not None:
            by = (await self._run(names_of, [tournament.created_by])).get(tournament.created_by)
        players = [TourLine(line["rank"], line["id"], line["name"], line["rating"], line["provisional"],
                            line["points"], line["fire"], line["paused"], line["playing"],
                            [TourDuel(d["match"], d["opponent"], d["result"], d["points"], d["double"])
                             for d in line["duels"]])
                   for line in lines]
        return tournament, players, by

    def _message(self, snapshot: tuple[Tournament, list[TourLine], str | None], user_id: str | None) -> TourMsg:
        tournament, players, by = snapshot
        now_ms = self._ms()
        me = next((line for line in players if line.id == user_id), None)
        return TourMsg(tournament.id, tournament.name, tournament.format, tournament.state(now_ms),
                       max(0, tournament.starts_ms - now_ms), max(0, tournament.ends_ms - now_ms),
                       round((tournament.ends_ms - tournament.starts_ms) / 60_000), players,
                       tournament.slot is not None, tournament.password is not None, by, me is not None,
                       bool(me and me.paused), me.playing if me else None)

    async def view(self, tournament_id: str, user_id: str | None) -> TourMsg | None:
        """A tournament and its standings as ``user_id`` sees them (the API's answer), or None."""
        snapshot = await self._snapshot(tournament_id)
        return None if snapshot is None else self._message(snapshot, user_id)

    async def tell(self, tournament_id: str, only: Connection | None = None) -> None:
        """Send the standings to the pages here that show the tournament (those whose view changed)."""
        snapshot = await self._snapshot(tournament_id)
        if snapshot is None:
            return
        tournament, players, _ = snapshot
        # what every page's view has in common, but the clocks (which the pages count down themselves)
        shared = hash((tournament.state(self._ms()), msgspec.json.encode(players)))
        for conn in [only] if only is not None else list(self.pages.get(tournament_id, ())):
            if conn.dropped:
                continue  # forgotten when the arena hears it has gone
            message = self._message(snapshot, conn.user.id if conn.user is not None else None)
            seen = (shared, message.joined, message.paused, message.playing)
            if only is None and self.sent.get(conn.id) == seen:
                continue
            self.sent[conn.id] = seen
            conn.send(encode(message))

    def _forget(self, conn: Connection) -> None:
        shown = self.shown.pop(conn.id, None)
        self.sent.pop(conn.id, None)
        if shown is not None:
            pages = self.pages.get(shown)
            if pages is not None:
                pages.discard(conn)
                if not pages:
                    del self.pages[shown]

    def refused_lately(self, conn: Connection, message: TourJoin) -> bool:
        """Was this account (or its address) refused a try at this tournament's password lately? Then
        the page is told so from memory (True): no database, no bus, no hash."""
        if conn.user is None:
            return False
        until = max(self._refused.get((conn.user.id, message.id), 0.0),
                    self._refused.get((ADDRESS, address_group(conn.address)), 0.0)) - time.monotonic()
        if until <= 0:
            return False
        conn.error("too_many_guesses", f"too many tries of this password: try again in {int(until) + 1} s")
        return True

    async def handle(self, conn: Connection, message: TourAsk | TourJoin | TourPause) -> None:
        if isinstance(message, TourJoin) and self.refused_lately(conn, message):
            return
        tournament = await self._run(find_tournament, message.id)
        if tournament is None:
            conn.error("no_such_tournament", f"there is no tournament {message.id}")
            return
        if isinstance(message, TourAsk):
            self._forget(conn)
            self.pages.setdefault(tournament.id, set()).add(conn)
            self.shown[conn.id] = tournament.id
            if conn.user is not None and conn.user.id in await self._run(players_of, tournament.id):
                await self._keep_page(tournament.id, conn)
        elif conn.user is None:
            conn.error("sign_in", "tournaments are between people with an account: sign in first")
            return
        elif isinstance(message, TourJoin):
            if tournament.state(self._ms()) == "over":
                conn.error("tour_over", "this tournament is over")
                return
            joined = conn.user.id in await self._run(players_of, tournament.id)
            if not joined and tournament.password is not None:
                # within the limits of tries, then in the accounts' hashing queue of tournament passwords
                try:
                    group = address_group(conn.address)
                    rank = await self._may_guess(tournament.id, conn.user.id, group)
                    right = await self.hashing.verify(tournament.password, message.password, lane=TOURNAMENT,
                                                      key=group, rank=rank)
                except (Refused, AccountError) as exc:
                    if isinstance(exc, Refused) and exc.retry_after:
                        self._remember_refusal(conn.user.id, tournament.id, exc.retry_after)
                    conn.error(exc.code, str(exc))
                    return
                if not right:
                    conn.error("bad_password", "that is not this tournament's password")
                    return
            await self._run(join_tournament, tournament.id, conn.user.id)
            if self.shown.get(conn.id) != tournament.id:
                self._forget(conn)
                self.pages.setdefault(tournament.id, set()).add(conn)
                self.shown[conn.id] = tournament.id
            await self._keep_page(tournament.id, conn)
        else:
            if not await self._run(pause_tournament, tournament.id, conn.user.id):
                conn.error("not_joined", "you have not joined this tournament")
                return
        await self.tell(tournament.id, only=conn)

    async def keep_pages(self) -> None:
        """Put back the pages here of joined players that are missing from ``tour_pages`` (another process
        took them out while this one looked stopped: :meth:`_present`), so that a player whose page is
        open is paired. One read of the bus a tournament shown here; the database only if one is missing."""
        for tournament_id, conns in list(self.pages.items()):
            here = {conn.user.id: conn for conn in conns if conn.user is not None and not conn.dropped}
            if not here:
                continue
            kept = await self.bus.hmget(f"tour_pages:{tournament_id}", list(here))
            missing = [user for user, page in zip(here, kept, strict=True) if page is None]
            if not missing:
                continue
            joined = await self._run(players_of, tournament_id)
            for user in missing:
                if user in joined:
                    await self._keep_page(tournament_id, here[user])

    async def _keep_page(self, tournament_id: str, conn: Connection) -> None:
        """The player is paired through this page (the newest page of theirs that shows the tournament)."""
        assert conn.user is not None
        await self.bus.hset(f"tour_pages:{tournament_id}", conn.user.id, json.dumps(
            {"node": self.node, "peer": conn.id, "name": conn.user.name}).encode())

    async def disconnect(self, conn: Connection) -> None:
        """A page that has gone: nobody is paired through it."""
        shown = self.shown.get(conn.id)
        self._forget(conn)
        if shown is None or conn.user is None:
            return
        page = await self.bus.hget(f"tour_pages:{shown}", conn.user.id)
        if page is not None and json.loads(page)["peer"] == conn.id:
            await self.bus.hdel(f"tour_pages:{shown}", conn.user.id)

