"""The deal of the day on the server: choosing each day's secret deal, and the players' one attempt at it.

The day's deal of a game is taken from the private stock of proved keys (:mod:`.dealstock`, the duel
variant of :data:`patience.daily.DAILY`), or, when the stock is empty, proved on demand in a separate
process (off the event loop); it is written once per (day, game), so every process of the arena deals the
same one. A signed-in player's attempt is a solo game of that deal, written with the attempt before the
first card is shown; it is played through the solo hub like any game, whose page sees no key (the hub
shows ``day:YYYY-MM-DD`` where a game number would be).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio

from patience.daily import DAILY, daily_commitment, daily_options, day_of, is_over
from patience.errors import BadInputError
from patience.games import get_game
from patience.rng import new_deal_key
from patience.server.arena.dealstock import DEFAULT_BUDGET_S, prove, solver_pool, take_deal
from patience.server.marks import mark_of
from patience.server.storage.daily import (
    DailyDeal,
    attempt_days,
    choose_deal,
    day_board,
    entered,
    find_attempt,
    find_deal,
    is_practice,
    month_attempts,
    practice_key,
    start_attempt,
)
from patience.server.storage.league import frames
from patience.server.storage.store import SavedGame, Store
from patience.session import ManualClock, Session

__all__ = ["AttemptOver", "DailyDeals", "check_month", "day_label", "streaks"]

log = logging.getLogger("patience.server")

PROVE_TRIES = 40  # keys tried on demand before a day is dealt one not proved winnable


class AttemptOver(BadInputError):
    """The player's attempt at this day's deal has ended: it is not played again."""


def day_label(day: str) -> str:
    """What a day's game shows where a game number would be (and keeps in the games table)."""
    return f"day:{day}"


def check_month(month: object) -> str:
    """``month`` if it is a month written ``YYYY-MM``, else BadInputError."""
    if isinstance(month, str) and len(month) == 7 and month[4] == "-" and month[:4].isdigit() \
            and month[5:].isdigit() and 1 <= int(month[5:]) <= 12 and int(month[:4]) >= 1:
        return month
    raise BadInputError("a month is written YYYY-MM")


def streaks(days: Iterable[str], today: str) -> tuple[int, int]:
    """The current and the best streak of ``days`` (YYYY-MM-DD, UTC) played: consecutive days with an attempt.
    The current one ends today if today is played, else yesterday (a day not played yet breaks nothing)."""
    played = {dt.date.fromisoformat(day) for day in days}
    best = run = 0
    last: dt.date | None = None
    for day in sorted(played):
        run = run + 1 if last is not None and day - last == dt.timedelta(days=1) else 1
        best = max(best, run)
        last = day
    current = 0
    day = dt.date.fromisoformat(today)
    if day not in played:
        day -= dt.timedelta(days=1)
    while day in played:
        current += 1
        day -= dt.timedelta(days=1)
    return current, best


class DailyDeals:
    """Chooses the days' deals and starts (or continues) the players' attempts."""

    def __init__(self, store: Store, *, wall: Callable[[], float] = time.time,
                 budget_s: float = DEFAULT_BUDGET_S) -> None:
        self.store = store
        self.wall = wall  # seconds since the epoch: the UTC day
        self.budget_s = budget_s
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    def today(self) -> str:
        return day_of(self.wall() * 1000)

    def is_over(self, day: str) -> bool:
        return is_over(day, self.wall() * 1000)

    async def deal(self, game: str, day: str | None = None) -> DailyDeal:
        """The deal of ``game`` on ``day`` (today if None), chosen now if nobody has yet."""
        day = day or self.today()
        variant = f"{game}/{DAILY[game]}" if game in DAILY else None
        if variant is None:
            raise BadInputError(f"{game!r} has no deal of the day (games: {', '.join(DAILY)})")
        engine = self.store.engine
        found = await anyio.to_thread.run_sync(find_deal, engine, day, game)
        if found is not None:
            return found
        lock = self._locks.setdefault((day, game), asyncio.Lock())
        async with lock:  # one choice per process; the database settles it between processes
            found = await anyio.to_thread.run_sync(find_deal, engine, day, game)
            if found is not None:
                return found
            key = await anyio.to_thread.run_sync(take_deal, engine, variant)
            proved = key is not None
            if key is None:
                key, proved = await self._prove(variant)
            return await anyio.to_thread.run_sync(
                lambda: choose_deal(engine, day, game, variant, key, daily_commitment(game, key), proved))

    async def _prove(self, variant: str) -> tuple[str, bool]:
        """A key proved winnable now, in a process of its own; after :data:`PROVE_TRIES` keys in vain, a
        key not proved (``proved`` false in the day's record)."""
        log.info("no proved %s deal in stock for the deal of the day: proving one", variant)
        loop = asyncio.get_running_loop()
        with solver_pool() as pool:  # a process that dies with the server, even on kill -9
            for _ in range(PROVE_TRIES):
                key = new_deal_key()
                proved, _nodes = await loop.run_in_executor(pool, prove, variant, key, self.budget_s)
                if proved:
                    return key, True
        return new_deal_key(), False

    async def start(self, game: str, user_id: str, browser: str) -> str:
        """The id of the solo game of ``user_id``'s attempt at today's deal of ``game``: a new one, written
        before anything is shown, or the one begun before (in any tab or process) if it still goes on.
        Raises AttemptOver if it has ended, BadInputError if it was begun in another browser.

        An account that does not meet the board's entry rule when its attempt begins, or is marked, is dealt
        a practice deal of its own (:func:`~patience.server.storage.daily.practice_key`: same game and
        variant, never the day's deal) in the day's one attempt, on no board; the day's deal opens to it at
        its first attempt begun once it meets the rule (docs/fairplay.md, *Scouted deals of the day*)."""
        day = self.today()
        deal = await self.deal(game, day)
        engine = self.store.engine
        game_id = await anyio.to_thread.run_sync(find_attempt, engine, day, game, user_id)
        if game_id is None:
            practice = not await anyio.to_thread.run_sync(entered, engine, user_id)
            key = await anyio.to_thread.run_sync(practice_key, engine, day, game, user_id, deal.deal) \
                if practice else deal.deal
            session = Session(get_game(game), key, daily_options(game), clock=ManualClock())
            saved = SavedGame(id=secrets.token_urlsafe(12), browser_id=browser, game=game,
                              variant=DAILY[game], seed=day_label(day), record=session.record(), ms=0, moves=0,
                              score=session.score, outcome=None)
            game_id = await anyio.to_thread.run_sync(start_attempt, engine, day, game, user_id, saved, practice)
        saved_game = await anyio.to_thread.run_sync(self.store.load_game, game_id)
        if saved_game is None:  # pragma: no cover - the attempt's row holds its game
            raise BadInputError("the attempt's game is gone")
        if saved_game.outcome is not None:
            raise AttemptOver(f"your attempt at today's deal ended ({saved_game.outcome.replace('_', ' ')}, "
                              f"{saved_game.score} points): one attempt a day")
        if saved_game.browser_id != browser:
            raise BadInputError("your attempt at today's deal goes on in the browser where you began it")
        return game_id

    async def practice(self, game: str, user_id: str) -> dict[str, Any] | None:
        """Is ``user_id``'s attempt at today's deal of ``game`` a practice deal (begun as one, or, not begun
        yet, to be dealt one now)? None if not; else why (``entry``: the board's entry rule is not met;
        ``marked``), whether it is ``begun``, its ``outcome`` and ``score`` (None while it goes on or is not
        begun). Nothing of the practice deal's cards, nor of the day's."""
        day = self.today()
        engine = self.store.engine
        game_id = await anyio.to_thread.run_sync(find_attempt, engine, day, game, user_id)
        if game_id is not None and not await anyio.to_thread.run_sync(is_practice, engine, game_id):
            return None
        if game_id is None and await anyio.to_thread.run_sync(entered, engine, user_id):
            return None
        marked = await mark_of(engine, user_id)
        saved = await anyio.to_thread.run_sync(self.store.load_game, game_id) if game_id else None
        return {"why": "marked" if marked is not None else "entry", "begun": saved is not None,
                "outcome": saved.outcome if saved else None,
                "score": saved.score if saved and saved.outcome else None}

    async def board(self, game: str, day: str) -> dict[str, Any]:
        """The day's leaderboard; once the day is over, its key and the attempts' game ids for replays."""
        if game not in DAILY:
            raise BadInputError(f"{game!r} has no deal of the day (games: {', '.join(DAILY)})")
        engine = self.store.engine
        over = self.is_over(day)
        deal = await anyio.to_thread.run_sync(find_deal, engine, day, game)
        if deal is None and day == self.today():
            deal = await self.deal(game, day)
        rows = await anyio.to_thread.run_sync(day_board, engine, day, game)
        if not over:
            for row in rows:
                row.pop("game_id")  # replays only after the day
        out: dict[str, Any] = {
            "day": day, "today": self.today(), "game": game, "variant": DAILY[game], "options": daily_options(game),
            "over": over, "commitment": deal.commitment if deal else None, "proved": deal.proved if deal else None,
            "entries": rows,
        }
        if over and deal is not None:
            out["seed"] = deal.deal
        return out

    async def mine(self, user_id: str, month: str | None = None) -> dict[str, Any]:
        """A player's streaks and the month's calendar of their attempts (``month`` YYYY-MM, this one by
        default): per day played, each game's outcome (None while the attempt goes on). It says nothing of
        a deal that the day's board does not: the player's own results only, never a key nor a card."""
        today = self.today()
        month = check_month(month or today[:7])
        engine = self.store.engine
        days = await anyio.to_thread.run_sync(attempt_days, engine, user_id)
        rows = await anyio.to_thread.run_sync(month_attempts, engine, user_id, month)
        current, best = streaks(days, today)
        calendar: dict[str, dict[str, str | None]] = {}
        for day, game, outcome in rows:
            calendar.setdefault(day, {})[game] = outcome
        return {"month": month, "today": today, "streak": current, "best_streak": best,
                "days": [{"day": day, "games": games} for day, games in calendar.items()]}

    async def replay(self, game: str, day: str, game_id: str) -> dict[str, Any]:
        """One attempt of a day that is over, for the replay viewer (the shape of a match's view, one side):
        the player, the key and commitment, the record and its positions step by step. Refused
        (BadInputError) while the day goes on, or for a game that is no attempt of that day."""
        if game not in DAILY:
            raise BadInputError(f"{game!r} has no deal of the day (games: {', '.join(DAILY)})")
        if not self.is_over(day):
            raise BadInputError("the day's games are shown once the day is over (UTC)")
        engine = self.store.engine
        rows = await anyio.to_thread.run_sync(day_board, engine, day, game, 10_000)
        row = next((r for r in rows if r["game_id"] == game_id), None)
        deal = await anyio.to_thread.run_sync(find_deal, engine, day, game)
        saved = await anyio.to_thread.run_sync(self.store.load_game, game_id) if row is not None else None
        if row is None or deal is None or saved is None or saved.outcome is None:
            raise BadInputError(f"no finished game {game_id} of the deal of the day for {game} on {day}")
        positions = await anyio.to_thread.run_sync(frames, saved.record)
        return {"id": game_id, "daily": day, "state": "over", "game": game, "variant": DAILY[game],
                "options": daily_options(game), "commitment": deal.commitment,
                "players": [{"id": row["user"], "name": row["name"]}],
                "record": {"seed": deal.deal, "nonce": "", "games": [saved.record]}, "frames": [positions]}

    async def revealed(self, game: str, day: str, limit: int = 10) -> dict[str, Any]:
        """The record of a day that is over: the key, the commitment and the best attempts' game records,
        for :func:`patience.daily.verify_daily`. Refused (BadInputError) while the day goes on."""
        if game not in DAILY:
            raise BadInputError(f"{game!r} has no deal of the day (games: {', '.join(DAILY)})")
        if not self.is_over(day):
            raise BadInputError("the day's deal and its games are shown once the day is over (UTC)")
        engine = self.store.engine
        deal = await anyio.to_thread.run_sync(find_deal, engine, day, game)
        if deal is None:
            raise BadInputError(f"there was no deal of the day for {game} on {day}")
        rows = await anyio.to_thread.run_sync(day_board, engine, day, game, limit)
        games = []
        for row in rows:
            saved = await anyio.to_thread.run_sync(self.store.load_game, row["game_id"])
            if saved is not None:
                games.append({"name": row["name"], "game_id": row["game_id"], "record": saved.record})
        return {"format": "patience-daily", "day": day, "game": game, "variant": deal.variant.split("/")[1],
                "options": daily_options(game), "commitment": deal.commitment, "seed": deal.deal,
                "proved": deal.proved, "games": [g["record"] for g in games],
                "players": [{"name": g["name"], "game_id": g["game_id"]} for g in games]}
