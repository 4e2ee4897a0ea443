"""Play now: same-deal matches against a real player who plays before or after you.

A live duel needs two people in one pool at one moment; Play now does not. A player who presses it
takes the closest-rated waiting match of that pool (:func:`patience.duel.take_pending`: within a reach
that widens with the match's age, never their own, nor one of an account of the same browser or
address, nor their last opponent's, at most :data:`patience.duel.PENDING_DAYS` old) and plays its
deal as the **challenger**; if none is in reach, they become the **host** of a new match on a secret
deal from the private stock of proved deals, and its result comes when a challenger has played.

Each side's game is a solo game of the hub (:mod:`patience.server.solo.hub`): saved before any move
is acknowledged, taken over by another process if this one dies, its table showing ``now:ID`` where a
game number would be — never the key — and no hints. Its options are the duel format's: the same
undo rule and time limit, and Der Fächer's pool counted at the time limit (a game played apart has
no common end), so ending early banks nothing. When the second game is over, the match is replayed
from both records into a :class:`patience.duel.Match` played apart, rated (Glicko-2, one rating per
game shared with live duels: docs/protocol.md) and written as a finished match, once, whatever
process sees both ends first (:func:`patience.server.storage.apart.complete`). Until then nobody
learns the key, nor the other player's score, moves or progress.

A match nobody took within :data:`patience.duel.PENDING_DAYS` days expires: no rating change, its key
shown. A game whose player left stands still while no process holds it (its clock runs in memory
only); the sweep brings such games back so that their clock runs to the time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol

import anyio

from patience.duel import LIMITS, PENDING_DAYS, Format, Match, Player, commitment, take_pending
from patience.errors import BadInputError, IllegalMoveError
from patience.options import options_to_dict
from patience.server.accounts import User, address_group
from patience.server.arena.dealstock import DealStock
from patience.server.bus import Bus
from patience.server.live import Connection
from patience.server.protocol import PlayNowMsg, encode
from patience.server.storage import apart as db
from patience.server.storage.league import load_rating, names_of
from patience.server.storage.store import SavedGame, Store
from patience.session import ManualClock, Session

__all__ = ["PENDING_MOST", "PlayNow", "PlayNowRefused"]

log = logging.getLogger("patience.server")

PENDING_MOST = 3
"""Matches a player may host in one pool that nobody has taken yet."""
SWEEP_SECONDS = 10.0  # how often expired matches, finished ones and games left standing are looked for
STALE_GRACE_S = 120  # a game left this long after its time limit (since it was dealt) is brought to its end
TAKE_TRIES = 8  # waiting matches tried in turn when other challengers take the first ones at the same moment


class PlayNowRefused(BadInputError):
    """Play now cannot start a game for this player now: ``code`` says why (``too_many``, ``elsewhere``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Resumes(Protocol):
    """What Play now needs of the solo games' hub (:class:`patience.server.solo.hub.Hub`)."""

    async def resume(self, game_id: str) -> bool:
        """Bring game ``game_id`` back to run on this process (its clock then ends it); True if it was."""


class PlayNow:
    """Starts the games of Play now, completes its matches and tells their players."""

    def __init__(self, store: Store, bus: Bus, deals: DealStock, peers: dict[str, Connection], *,
                 wall: Callable[[], float] = time.time, games: Resumes | None = None) -> None:
        self.store = store
        self.bus = bus
        self.deals = deals
        self.peers = peers  # this process's pages of the arena: told when a result comes in
        self.wall = wall
        self.games = games  # the solo games' hub: brings a stale game back to run
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await self.bus.subscribe("playnow", self._on_result)

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.bus.unsubscribe("playnow", self._on_result)
        for task in list(self._tasks):
            task.cancel()

    def _ms(self) -> int:
        return int(self.wall() * 1000)

    # -- starting a game ---------------------------------------------------------------------

    async def play(self, user: User, fmt: Format, browser: str, address: str) -> dict[str, Any]:
        """Start (or go on with) ``user``'s game of Play now in ``fmt``: as the challenger of the closest
        waiting match in reach, else as the host of a new one. What the page needs to join the game.

        The database work is two hops to a worker thread (the look and the taking, then, for a host,
        the writing), not one a query: a press costs a few milliseconds of the server, not tens."""
        net = db.net_of(address_group(address))
        found = await anyio.to_thread.run_sync(self._look_and_take, user, fmt, browser, net)
        if isinstance(found, dict):
            return found
        rating, count = found
        if count >= PENDING_MOST:
            raise PlayNowRefused("too_many", f"{count} of your games in this pool wait for a challenger already: "
                                             "play one live, or come back when a result is in")
        deal, proved = await self.deals.take(fmt)  # a secret key, proved winnable when the stock has one
        apart_id = secrets.token_urlsafe(12)
        game_id = secrets.token_urlsafe(12)
        apart = db.Apart(apart_id, fmt.key, fmt.game, deal, commitment(fmt.game, fmt.options(), deal, ""), proved,
                         user.id, game_id, rating, None, None, "open", self._ms(), None, None)
        saved = self._new_game(game_id, browser, fmt, deal, apart_id)
        await anyio.to_thread.run_sync(db.host, self.store.engine, apart, net, saved)
        log.info("play now: %s hosts match %s (%s)", user.id, apart_id, fmt.key)
        return self._answer(apart, user.id, game_id, role="host")

    def _look_and_take(self, user: User, fmt: Format, browser: str, net: str) -> dict[str, Any] | tuple[float, int]:
        """On a worker thread: the player's game going on, else the first waiting match in reach that is
        still there to take (taken here), as the answer; else (their rating, the matches they host
        untaken in this pool), for the caller to host a new one."""
        engine = self.store.engine
        going = db.unfinished_of(engine, user.id)
        if going is not None:  # one game of Play now at a time: the one begun goes on
            apart, game_id = going
            saved = self.store.load_game(game_id)
            if saved is not None and saved.browser_id != browser:
                raise PlayNowRefused("elsewhere", "your game of Play now goes on in the browser where you began it")
            return self._answer(apart, user.id, game_id, again=True)
        rating = load_rating(engine, user.id, fmt.game).rating
        now = self.wall()
        found = db.open_games(engine, fmt.key, rating, user.id, net, browser, int((now - PENDING_DAYS * 86400) * 1000))
        for pending in take_pending(rating, found, now)[:TAKE_TRIES]:
            candidate = db.find_apart(engine, pending.id)
            if candidate is None:
                continue
            game_id = secrets.token_urlsafe(12)
            if db.take(engine, candidate.id, user.id,
                       self._new_game(game_id, browser, fmt, candidate.deal, candidate.id), self._ms()):
                log.info("play now: %s takes match %s (%s)", user.id, candidate.id, fmt.key)
                return self._answer(candidate, user.id, game_id, role="challenger")
        return rating, db.open_count(engine, user.id, fmt.key)

    @staticmethod
    def _new_game(game_id: str, browser: str, fmt: Format, deal: str, apart_id: str) -> SavedGame:
        """A side's game, not played yet: the format's options, the deal's key in its record only."""
        session = Session(fmt.game, deal, fmt.options(), clock=ManualClock())
        return SavedGame(id=game_id, browser_id=browser, game=fmt.game, variant=fmt.variant_name,
                         seed=db.apart_label(apart_id), record=session.record(), ms=0, moves=0,
                         score=session.score, outcome=None)

    def _answer(self, apart: db.Apart, user_id: str, game_id: str, *, role: str | None = None,
                again: bool = False) -> dict[str, Any]:
        """What the page needs (a database read for a challenger's opponent: call it on a worker thread)."""
        role = role or ("host" if apart.host_id == user_id else "challenger")
        fmt = Format.from_key(apart.format)
        out: dict[str, Any] = {"id": apart.id, "game_id": game_id, "game": fmt.game, "variant": fmt.variant_name,
                               "limit_s": fmt.limit_s, "format": apart.format, "role": role,
                               "commitment": apart.commitment, "again": again, "opponent": None}
        if role == "challenger":  # who they play against: the name and rating, never the score
            names = names_of(self.store.engine, [apart.host_id])
            out["opponent"] = {"id": apart.host_id, "name": names.get(apart.host_id, "?"),
                               "rating": round(apart.host_rating)}
        return out

    # -- completing a match ------------------------------------------------------------------

    def game_ended(self, game_id: str) -> None:
        """The hub wrote the end of a game of Play now: complete its match if the other game is over too."""
        task = asyncio.get_running_loop().create_task(self._game_ended(game_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _game_ended(self, game_id: str) -> None:
        try:
            apart = await anyio.to_thread.run_sync(lambda: db.find_apart(self.store.engine, game_id=game_id))
            if apart is not None and apart.state == "taken":
                await self.complete(apart.id)
        except Exception:  # the sweep tries again
            log.exception("play now: completing the match of game %s failed", game_id)

    async def complete(self, apart_id: str) -> bool:
        """Rate and write a taken match whose two games are over, once (False: not ready, or done already)."""
        engine = self.store.engine
        apart = await anyio.to_thread.run_sync(db.find_apart, engine, apart_id)
        if apart is None or apart.state != "taken" or apart.challenger_id is None or apart.challenger_game is None:
            return False
        games = [await anyio.to_thread.run_sync(self.store.load_game, g)
                 for g in (apart.host_game, apart.challenger_game)]
        if any(g is None or g.outcome is None for g in games):
            return False
        ids = (apart.host_id, apart.challenger_id)
        names = await anyio.to_thread.run_sync(names_of, engine, ids)
        ratings = [await anyio.to_thread.run_sync(load_rating, engine, i, apart.game) for i in ids]
        match = replayed(apart, [g for g in games if g is not None],
                         (Player(ids[0], names.get(ids[0], "?"), ratings[0]),
                          Player(ids[1], names.get(ids[1], "?"), ratings[1])))
        result, after = match.finish()
        if not await anyio.to_thread.run_sync(db.complete, engine, apart.id, match, result, after, self._ms()):
            return False
        log.info("play now: match %s done (%s against %s: %s)", apart.id, ids[0], ids[1], result.scores)
        await self._tell(ids, apart.id, "done")
        return True

    async def _tell(self, users: tuple[str, ...], apart_id: str, state: str) -> None:
        data = json.dumps({"users": list(users), "id": apart_id, "state": state}).encode()
        with contextlib.suppress(Exception):  # a page that misses it sees the badge at its next load
            await self.bus.publish("playnow", data)

    def _on_result(self, data: bytes) -> None:
        try:
            told = json.loads(data)
            users, apart_id, state = set(told["users"]), str(told["id"]), str(told["state"])
        except (ValueError, KeyError, TypeError):
            return
        message = encode(PlayNowMsg(apart_id, state))
        for conn in list(self.peers.values()):
            if conn.user is not None and conn.user.id in users:
                conn.send(message)

    async def marked(self, user_id: str) -> list[db.Apart]:
        """An account was marked: its open matches close (no challenger is dealt them) and those taken but
        not done, on either side, are void (no rating change); each other player is told (``void``), and the
        marked one (``closed``). Once, by the process that marks: every process's pages hear it by the bus."""
        changed = await anyio.to_thread.run_sync(db.close_marked, self.store.engine, user_id, self._ms())
        for apart in changed:
            other = apart.challenger_id if apart.host_id == user_id else apart.host_id
            if other is not None:
                await self._tell((other,), apart.id, apart.state)
            await self._tell((user_id,), apart.id, apart.state)
        if changed:
            log.info("play now: %d matches of %s closed or void (marked)", len(changed), user_id)
        return changed

    # -- the sweep ---------------------------------------------------------------------------

    async def sweep(self) -> dict[str, int]:
        """Expire the matches nobody took in time, complete those whose end was missed (a process died
        between a game's end and its match's), and bring back games left standing. Every process may
        run it: each change is a conditional write that happens once."""
        engine = self.store.engine
        now_ms = self._ms()
        expired = await anyio.to_thread.run_sync(db.expire, engine, now_ms - PENDING_DAYS * 86_400_000, now_ms)
        for apart in expired:
            await self._tell((apart.host_id,), apart.id, "expired")
        done = 0
        for apart_id in await anyio.to_thread.run_sync(db.ready, engine):
            done += await self.complete(apart_id)
        resumed = 0
        if self.games is not None:
            shortest = min(LIMITS)
            stale = await anyio.to_thread.run_sync(db.stale_games, engine, now_ms - (shortest + STALE_GRACE_S) * 1000)
            for key, game_id, dealt_ms in stale:
                if dealt_ms < now_ms - (Format.from_key(key).limit_s + STALE_GRACE_S) * 1000:
                    resumed += await self.games.resume(game_id)
        return {"expired": len(expired), "completed": done, "resumed": resumed}

    async def run(self, every: float = SWEEP_SECONDS) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.sweep()
            except Exception:  # pragma: no cover - the database is away: try again
                log.exception("play now: the sweep failed")

    # -- what players see --------------------------------------------------------------------

    async def yours(self, user_id: str) -> dict[str, Any]:
        """A player's matches of Play now, newest first: their own game's figures, the other player once
        known (a challenger sees the host's name; a host the challenger's once taken), and only once
        the match is over, the other score and the result. How many results came in unseen."""
        engine = self.store.engine
        rows = await anyio.to_thread.run_sync(db.of_user, engine, user_id)
        unseen = await anyio.to_thread.run_sync(db.unseen, engine, user_id)
        return {"games": [shown(row, user_id) for row in rows], "unseen": unseen}

    async def seen(self, user_id: str) -> None:
        await anyio.to_thread.run_sync(db.mark_seen, self.store.engine, user_id)

    async def unseen(self, user_id: str) -> int:
        return await anyio.to_thread.run_sync(db.unseen, self.store.engine, user_id)


def replayed(apart: db.Apart, games: list[SavedGame], players: tuple[Player, Player]) -> Match:
    """The match played apart, from both players' game records (host first): each game replayed on a
    clock of its own, Der Fächer's pool counted at the time limit."""
    fmt = Format.from_key(apart.format)
    clocks = (ManualClock(), ManualClock())
    match = Match(apart.id, fmt, apart.deal, players=players, proved=apart.proved, clocks=clocks)
    for side, saved in enumerate(games):
        record = saved.record
        if dict(record.get("options") or {}) != options_to_dict(match.sessions[side].options, only_changed=True):
            raise BadInputError(f"game {saved.id} was not played with the options of {apart.format}")
        for action in record.get("actions", []):
            clocks[side].set_ms(int(action["t"]))
            try:
                match.act(side, str(action["m"]))
            except IllegalMoveError:
                if not action.get("illegal"):
                    raise
        end = record.get("end") or {}
        clocks[side].set_ms(int(end.get("t", saved.ms)))
        match.tick()
        if match.sessions[side].score != saved.score:
            log.warning("play now: game %s replays to %s points, it was saved with %s", saved.id,
                        match.sessions[side].score, saved.score)
    return match


def shown(row: dict[str, Any], user_id: str) -> dict[str, Any]:
    """One match of a player's list: the other side's figures and the key only once it is over."""
    mine = 0 if row["host_id"] == user_id else 1
    fmt = Format.from_key(row["format"])
    over = row["state"] in db.OVER
    me, them = ("h", "c") if mine == 0 else ("c", "h")
    other_id = row["challenger_id"] if mine == 0 else row["host_id"]
    out: dict[str, Any] = {
        "id": row["id"], "format": row["format"], "game": fmt.game, "variant": fmt.variant_name,
        "limit_s": fmt.limit_s, "role": "host" if mine == 0 else "challenger", "state": row["state"],
        "made_ms": row["made_ms"], "taken_ms": row["taken_ms"], "ended_ms": row["ended_ms"],
        "expires_ms": row["made_ms"] + PENDING_DAYS * 86_400_000 if row["state"] == "open" else None,
        "commitment": row["commitment"],
        "game_id": row["host_game"] if mine == 0 else row["challenger_game"],
        "mine": {"score": row[f"{me}_score"], "outcome": row[f"{me}_outcome"], "ms": row[f"{me}_ms"]},
        "opponent": {"id": other_id, "name": row[f"{them}_name"]} if other_id is not None else None,
        "seen": bool(row["host_seen"] if mine == 0 else row["challenger_seen"]),
        "theirs": None, "result": None,
    }
    if out["mine"]["outcome"] is None:
        out["mine"]["score"] = out["mine"]["ms"] = None  # the page shows the game itself while it goes on
    if over and (row["state"] in ("done", "expired") or out["mine"]["outcome"] is not None):
        out["seed"] = row["deal"]  # over (or expired): its key opens the commitment (closed or void: once
        # the player's own game is over too, never while it goes on)
    if row["state"] == "done":
        out["theirs"] = {"score": row[f"{them}_score"], "outcome": row[f"{them}_outcome"], "ms": row[f"{them}_ms"]}
        winner = row["winner"]
        finals = (row["final_a"], row["final_b"])
        out["result"] = {"winner": None if winner is None else ("you" if winner == mine else "them"),
                         "finals": {"you": finals[mine], "them": finals[1 - mine]}, "match": row["id"]}
    return out
