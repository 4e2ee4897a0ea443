"""Arena tournaments on one server process or many: the site's schedule, joining and pausing, the pairing
of free players, and the live standings (the rules: :mod:`patience.tournament`; the tables:
:mod:`patience.server.storage.tournaments`).

A player who joined is paired from the tournament's page: the page's process keeps it in the bus
(hash ``tour_pages:ID``: user -> process and page, as the lobby's pools do), and the match of each
pairing is started like any duel, its ``duel`` going to that page wherever it is. The pairing runs on
the process that holds the arena's ``pairer`` lease, once a second; each pair is first claimed in the
database by a conditional update of both players (:func:`claim_pair`), so a pair is made once even
when two processes pair at the same moment (a lease that lapsed), and the match is written with its
tournament duel in one transaction. A player is free again once their match is over, whichever process
played it; the standings are read from the database, so every process shows the same ones.

The site schedules one tournament of each duel game every hour (:data:`HOURLY_MINUTES` long, 5-minute
duels), made once whichever process makes it first (a unique slot).
"""

from __future__ import annotations

import functools
import json
import logging
import secrets
import time
from typing import Any

import anyio
import msgspec

from patience.duel import FORMATS, Format
from patience.errors import BadInputError
from patience.server.accounts import AccountError
from patience.server.live import Connection
from patience.server.protocol import TourAsk, TourDuel, TourJoin, TourLine, TourMsg, TourPause, encode
from patience.server.storage.league import load_rating, names_of
from patience.server.storage.tournaments import (
    Tournament,
    claim_pair,
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
from patience.tournament import Entrant, check_minutes, pair_free

__all__ = ["HOURLY_MINUTES", "TOURNAMENT_MESSAGES", "Tournaments"]

log = logging.getLogger("patience.server")

HOURLY_MINUTES = 57  # a scheduled tournament's length: the next one starts 3 minutes after it ends
HOURLY_LIMIT_S = 300
SCHEDULE_SECONDS = 60.0  # how often a process makes sure this hour's and the next one's tournaments exist
PAIR_SECONDS = 1.0
TELL_SECONDS = 1.0  # the standings of the tournaments shown here are read again this often
NAME_LONGEST = 60
AHEAD_DAYS = 7  # a tournament may be made to start at most this far ahead
TOURNAMENT_MESSAGES = (TourAsk, TourJoin, TourPause)


PASSWORD_LONGEST = 100


def check_password(password: str) -> str:
    """A tournament's password as given, checked (the empty string: none)."""
    if len(password) > PASSWORD_LONGEST:
        raise BadInputError(f"a password has at most {PASSWORD_LONGEST} characters")
    return password


def new_tournament(name: str, fmt: str, minutes: int, start_ms: int, now_ms: int, user_id: str,
                   password_hash: str | None = None) -> Tournament:
    """A tournament a player makes, checked: a name, a duel format, 15 to 120 minutes, a start from now
    to a week ahead, an optional password (``password_hash``: as the accounts' hashing made it from a
    password :func:`check_password` let through)."""
    name = " ".join(name.split())
    if not 3 <= len(name) <= NAME_LONGEST or not name.isprintable():
        raise BadInputError(f"a tournament's name has 3 to {NAME_LONGEST} characters")
    key = Format.from_key(fmt).key
    check_minutes(minutes)
    start_ms = max(start_ms, now_ms)
    if start_ms > now_ms + AHEAD_DAYS * 86_400_000:
        raise BadInputError(f"a tournament starts within {AHEAD_DAYS} days")
    return Tournament(secrets.token_urlsafe(9), name, key, start_ms, start_ms + minutes * 60_000,
                      created_by=user_id, password=password_hash)


def hourly(hour_ms: int) -> list[Tournament]:
    """The tournaments the site holds in the hour starting at ``hour_ms``: one for each duel game."""
    stamp = time.strftime("%Y-%m-%dT%H", time.gmtime(hour_ms / 1000))
    return [Tournament(secrets.token_urlsafe(9), "", Format(game, None, HOURLY_LIMIT_S).key, hour_ms,
                       hour_ms + HOURLY_MINUTES * 60_000, slot=f"hourly/{stamp}/{game}") for game in FORMATS]


class Tournaments:
    """The tournaments of one arena process: pages here that show one, the pairing, the schedule."""

    def __init__(self, arena: Any, *, schedule: bool = True) -> None:
        """``arena``: the :class:`patience.server.arena.lobby.Arena` whose matches the duels are."""
        self.arena = arena
        self.engine = arena.store.engine
        self.bus = arena.bus
        self.schedule = schedule
        self.pages: dict[str, set[Connection]] = {}  # tournament id -> pages here that show it
        self.shown: dict[str, str] = {}  # page id -> the tournament it shows
        self.sent: dict[str, tuple[Any, ...]] = {}  # page id -> what the last standings it got showed
        self._paired_at = 0.0
        self._told_at = 0.0
        self._scheduled_at = -SCHEDULE_SECONDS
        self._slots: set[str] = set()

    def _ms(self) -> int:
        return int(self.arena.wall() * 1000)

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
        for work in due:
            try:
                await work()
            except Exception as exc:  # the database is away: the matches' clocks go on, this is tried again
                said = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
                log.warning("tournaments: %s failed: %s", work.__name__, said)

    async def tell_all(self) -> None:
        for tournament_id in list(self.pages):
            await self.tell(tournament_id)

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
        nodes = {page["node"] for page in found.values()} - {self.arena.node}
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
        entrants = [Entrant(user, table[user]["points"] if user in table else 0,
                            table[user]["rating"] if user in table else 1500, last) for user, last in free]
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
            started = await self.arena.start_pair(fmt, sides, match_id, [functools.partial(
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

    async def handle(self, conn: Connection, message: TourAsk | TourJoin | TourPause) -> None:
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
                # the accounts' hashing: a bounded number of hashes at once, the rest refused as busy
                try:
                    right = await self.arena.hashing.verify(tournament.password, message.password)
                except AccountError as exc:
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

    async def _keep_page(self, tournament_id: str, conn: Connection) -> None:
        """The player is paired through this page (the newest page of theirs that shows the tournament)."""
        assert conn.user is not None
        await self.bus.hset(f"tour_pages:{tournament_id}", conn.user.id, json.dumps(
            {"node": self.arena.node, "peer": conn.id, "name": conn.user.name}).encode())

    async def disconnect(self, conn: Connection) -> None:
        """A page that has gone: nobody is paired through it."""
        shown = self.shown.get(conn.id)
        self._forget(conn)
        if shown is None or conn.user is None:
            return
        page = await self.bus.hget(f"tour_pages:{shown}", conn.user.id)
        if page is not None and json.loads(page)["peer"] == conn.id:
            await self.bus.hdel(f"tour_pages:{shown}", conn.user.id)

