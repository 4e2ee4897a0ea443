"""Challenge links: a player makes one for a duel format and passes it on; whoever opens it sees
who and which duel (``look``) and may accept it while the maker's lobby page is open.

A challenge is a row of the database before its link is handed out (it works after a restart),
and an entry of the hash ``challenges``, one per player (``challenge_of``: the newest). It is
taken once: by deleting it under the lock ``lock:challenge:CODE``, and its row goes in the same
transaction that makes the match.
"""

from __future__ import annotations

import functools
import json
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio

from patience.duel import Format
from patience.ratings import Rating
from patience.server.arena.matches import LiveMatch
from patience.server.arena.pools import Pools, Side
from patience.server.arena.view import LobbyView
from patience.server.bus import Bus
from patience.server.live import Connection, Now
from patience.server.protocol import AcceptIntent, ChallengeIntent, ChallengeMsg, DuelPlayer, LookMsg, encode
from patience.server.storage.league import (
    OpenChallenge,
    delete_challenges,
    insert_challenge,
    names_of,
    open_challenges,
)
from patience.server.storage.store import Store
from patience.server.storage.writer import GroupWriter

__all__ = ["CHALLENGE_SECONDS", "Challenges"]

CHALLENGE_SECONDS = 3600.0
TAKEN_KEPT_SECONDS = 86400.0  # how long a challenge link taken up says "taken" (then: unknown)

Make = Callable[[Format, Side, Side, Iterable[Callable[[Any], None]]], Awaitable[LiveMatch | None]]


class Challenges:
    """The open challenges of the arena. ``make`` starts the match of an accepted one; ``busy``
    says (to the page) whether its player plays a match already; ``rating`` is a player's rating;
    ``playing`` the match a player plays now (None: none); ``marked`` the category of an account's
    mark (None: not marked), read at the moment of asking."""

    def __init__(self, store: Store, bus: Bus, writer: GroupWriter, view: LobbyView, pools: Pools,
                 pages: dict[str, Connection], wall: Now, make: Make, busy: Callable[[Connection], Awaitable[bool]],
                 rating: Callable[[str, str], Awaitable[Rating]], playing: Callable[[str], Awaitable[str | None]],
                 marked: Callable[[str], Awaitable[str | None]]) -> None:
        self.store = store
        self.bus = bus
        self.node = bus.node
        self.writer = writer
        self.view = view
        self.pools = pools
        self.pages = pages
        self.wall = wall
        self.make = make
        self.busy = busy
        self.rating = rating
        self.playing = playing
        self.marked = marked

    async def take_up(self) -> None:
        """After a start: the open challenges of the database, on the bus again."""
        lapsed_ms = round((self.wall() - CHALLENGE_SECONDS) * 1000)
        for kept in await anyio.to_thread.run_sync(open_challenges, self.store.engine, lapsed_ms):
            if await self.bus.hget("challenges", kept.code) is None:
                await self._keep(kept.code, kept.user, kept.format, kept.made_ms / 1000)

    async def _keep(self, code: str, user: str, fmt: str, made: float) -> None:
        old = await self.bus.hget("challenge_of", user)
        if old is not None:
            await self.bus.hdel("challenges", old.decode())  # one open challenge each: the newest
        await self.bus.hset("challenges", code, json.dumps({"user": user, "format": fmt, "made": made}).encode())
        await self.bus.hset("challenge_of", user, code.encode())

    async def withdraw(self, user_id: str) -> bool:
        """Close ``user_id``'s open challenge link (a marked account); False if they had none."""
        code = await self.bus.hget("challenge_of", user_id)
        if code is None:
            return False
        await self.bus.hdel("challenges", code.decode())
        await self.bus.hdel("challenge_of", user_id)
        return True

    async def challenge(self, conn: Connection, fmt: Format, message: ChallengeIntent) -> None:
        user = conn.user
        assert user is not None
        if await self.busy(conn):
            return
        code = secrets.token_urlsafe(9)
        made = self.wall()
        kept = OpenChallenge(code, user.id, fmt.key, round(made * 1000))
        try:
            # the link is in the database before it is handed out: it works after a restart too
            await self.writer.write(before=[functools.partial(insert_challenge, challenge=kept)])
        except Exception:
            conn.error("server_error", "the challenge could not be saved: try again")
            return
        await self._keep(code, user.id, fmt.key, made)
        await self.view.watch(conn)
        conn.send(encode(ChallengeMsg(code, fmt.key, f"/duel?c={code}")))

    async def accept(self, conn: Connection, message: AcceptIntent) -> None:
        user = conn.user
        assert user is not None
        found = await self.bus.hget("challenges", message.code)
        challenge = json.loads(found) if found is not None else None
        if found is None or challenge is None or self.wall() - challenge["made"] > CHALLENGE_SECONDS:
            conn.error("no_such_challenge", "this challenge is no longer open")
            return
        if challenge["user"] == user.id:
            conn.error("own_challenge", "this is your own challenge: pass the link on to a friend")
            return
        if await self.busy(conn):
            return
        host_page = await self.view.page_of(challenge["user"])
        if host_page is None:
            conn.error("challenger_away", "the player who made this challenge is not here right now")
            return
        if await self.playing(challenge["user"]) is not None:
            conn.error("challenger_away", "the player who made this challenge is playing another match")
            return
        if await self.marked(challenge["user"]) is not None:  # marked since the link was made: no rated match
            conn.error("marked", "the player who made this challenge is marked for fair play: no match")
            return
        fmt = Format.from_key(challenge["format"])
        async with self.bus.lock(f"lock:challenge:{message.code}"):
            if not await self.bus.hdel("challenges", message.code):  # taken by someone else meanwhile
                conn.error("no_such_challenge", "this challenge is no longer open")
                return
        host_name = await self._name_of(challenge["user"], host_page)
        host = Side(challenge["user"], host_name, await self.rating(challenge["user"], fmt.game),
                    host_page["node"], host_page["peer"])
        guest = Side(user.id, user.name, await self.rating(user.id, fmt.game), self.node, conn.id)
        await self.pools.unseek(user.id)
        await self.pools.unseek(challenge["user"])
        # the challenge goes in the transaction that makes the match: taken exactly when the match exists
        live = await self.make(fmt, host, guest, [functools.partial(delete_challenges, codes=[message.code])])
        if live is None:
            await self.bus.hset("challenges", message.code, found)  # nothing was written: the link is still open
            return
        await self._remember_taken(message.code, live.id)
        if await self.bus.hget("challenge_of", challenge["user"]) == message.code.encode():
            await self.bus.hdel("challenge_of", challenge["user"])

    async def _remember_taken(self, code: str, match_id: str) -> None:
        """A link taken up says so for a day (``look``); older ones are forgotten as new ones come."""
        now = self.wall()
        old = [kept for kept, data in (await self.bus.hgetall("challenges_taken")).items()
               if now - json.loads(data)["at"] > TAKEN_KEPT_SECONDS]
        if old:
            await self.bus.hdel("challenges_taken", *old)
        await self.bus.hset("challenges_taken", code, json.dumps({"match": match_id, "at": now}).encode())

    async def _name_of(self, user_id: str, page: dict[str, str]) -> str:
        if page["node"] == self.node:
            conn = self.pages.get(page["peer"])
            if conn is not None and conn.user is not None:
                return conn.user.name
        return (await anyio.to_thread.run_sync(names_of, self.store.engine, [user_id])).get(user_id, "?")

    async def look(self, conn: Connection, code: str) -> None:
        """Say what challenge ``code`` is, before anyone accepts it: who, which duel, still open or not."""
        found = await self.bus.hget("challenges", code)
        if found is None:
            taken = await self.bus.hget("challenges_taken", code)
            conn.send(encode(LookMsg(code, "taken" if taken is not None else "unknown")))
            return
        challenge = json.loads(found)
        fmt = Format.from_key(challenge["format"])
        if self.wall() - challenge["made"] > CHALLENGE_SECONDS:
            conn.send(encode(LookMsg(code, "expired", format=fmt.key)))
            return
        if conn.user is not None and conn.user.id == challenge["user"]:
            conn.send(encode(LookMsg(code, "own", format=fmt.key)))
            return
        away = await self.view.page_of(challenge["user"]) is None
        name = (await anyio.to_thread.run_sync(names_of, self.store.engine, [challenge["user"]])).get(
            challenge["user"], "?")
        rating = await self.rating(challenge["user"], fmt.game)
        by = DuelPlayer(challenge["user"], name, round(rating.rating), rating.provisional)
        conn.send(encode(LookMsg(code, "open", by, fmt.key, away)))
