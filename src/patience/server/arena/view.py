"""The lobby as its pages see it: the pools (who waits, closest first), the matches going on, who
is online, and each player's own seek, match and challenge.

A change anywhere in the arena is one message on the channel ``lobby``. The process that pairs
(it reads the pools every wave anyway) reads the shared state at most every
:data:`TELL_SECONDS` and publishes it, encoded once, on ``lobby_view``; every process then tells
its own lobby pages, adding to each what is the player's own (two reads). So the cost of a change
is one reading of the arena for the whole arena, not one per process, and a process's work grows
with its own pages.

Under a burst of thousands of seeks each part stays bounded: the reading counts a large pool and
names its first few from the pairer's last wave (:data:`READ_WHOLE`); pages that ask at one time
share one reading (:meth:`LobbyView.read`); and a process tells its lobby pages at most
:data:`PAGES_TOLD_PER_SECOND` views a second in all, the newest each time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import msgspec

from patience.duel import Format
from patience.server.arena.nodes import Nodes
from patience.server.arena.pools import FORMAT_KEYS, Pools, Side
from patience.server.bus import Bus, stop_tasks
from patience.server.live import Connection, Now
from patience.server.protocol import DuelPlayer, LiveInfo, LobbyMsg, PoolInfo, encode

__all__ = ["LobbyView"]

log = logging.getLogger("patience.server")

POOL_SHOWN = 12  # waiting players named per pool in the lobby
LIVE_SHOWN = 20  # matches going on listed in the lobby, for spectators
TELL_SECONDS = 0.2  # changes within this long make one lobby message
TELL_MOST_SECONDS = 1.0
"""... and with many waiting, up to this long: each view goes to every lobby page, so under a burst
of thousands of seeks a view every 0.2 s would cost the processes more than the pairing itself."""
TELL_SLOWER_PER = 200  # waiting players a TELL_SECONDS more
READ_WHOLE = 64
"""A pool or the pages online up to this many entries are read whole for a view. A larger pool is
named from the pairer's last wave (who it left waiting, half a second old at most) and counted
afresh; a larger count online is read whole at most every :data:`ONLINE_SECONDS` and moved on by
the count of entries meanwhile: under a burst of thousands of seeks the view then costs a few
commands, not a reading of thousands of entries a second."""
ONLINE_SECONDS = 5.0
PAGES_TOLD_PER_SECOND = 1000
"""A process tells its lobby pages a new view at most this many times a second in all: with 2,000
lobby pages, every 2 s (the newest view then), with 200 every 0.2 s; at most every
:data:`TELL_PAGES_MOST_SECONDS`."""
TELL_PAGES_MOST_SECONDS = 2.0
SNAPSHOT_SECONDS = 2.0  # a pairer's wave older than this is not used for the view
CHANGED_GATHER_SECONDS = 0.02
"""The changes of a process this close together are one word to the pairer (a burst of seeks, and
the matches made of them, are a few messages on the bus rather than one or two a seek)."""
REFRESH_SECONDS = 5.0
"""The pairer publishes a view at least this often, changed or not: a word on the bus is lost when a
connection to it drops, a publish or a telling can fail while the bus is swamped, and the pairer's
lease can pass to another process between a change and its view. A page's lobby is then at most this
much older than the arena, never stale until the next change (which may not come)."""
RETRY_SECONDS = 1.0  # a view that could not be published or told is tried again this long after

class Summary(msgspec.Struct, frozen=True):
    """What every lobby page is told alike: encoded once by the pairer, decoded once per process."""

    infos: msgspec.Raw
    live: msgspec.Raw
    playing: int
    online: int
    challenge_of: dict[str, str]
    at: float


_SUMMARY = msgspec.json.Decoder(Summary)


class LobbyView:
    """The lobby pages of this process (``watchers``) and what they are told."""

    def __init__(self, bus: Bus, nodes: Nodes, pools: Pools, now: Now) -> None:
        self.bus = bus
        self.node = bus.node
        self.nodes = nodes
        self.pools = pools
        self.now = now
        self.watchers: set[Connection] = set()
        self._later: asyncio.TimerHandle | None = None
        self._saying: asyncio.TimerHandle | None = None  # the word "changed" to the pairer, when one is due
        self._last: tuple[Summary, float] | None = None  # the last view published, and when it came
        self._published_at = 0.0  # when this process last published a view (the event loop's clock)
        self._reading: asyncio.Future[Summary] | None = None  # the reading of the arena going on
        self._next: asyncio.Future[Summary] | None = None  # the one to start after it (asked meanwhile)
        self._online_read: tuple[float, int, int] | None = None  # when online was read whole: entries, players
        self._told = 0.0  # when this process last told its lobby pages (the event loop's clock)
        self._telling: asyncio.TimerHandle | None = None  # the telling to come, if one waits
        self._tasks: set[asyncio.Task[None]] = set()
        self.published = 0  # views this process published (as the pairer)

    async def start(self) -> None:
        await self.bus.subscribe("lobby", self._on_lobby)
        await self.bus.subscribe("lobby_view", self._on_view)
        self._spawn(self._refresh)

    async def _refresh(self) -> None:
        """As the pairer, publish a view when none went out for :data:`REFRESH_SECONDS`."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(REFRESH_SECONDS / 2)
            if loop.time() - self._published_at >= REFRESH_SECONDS:
                self._on_lobby(b"")

    async def stop(self) -> None:
        """Tell no more (the server stops): the timers due are cancelled, the work they started and a
        reading going on end here, none left for a loop that closes."""
        for handle in (self._later, self._saying, self._telling):
            if handle is not None:
                handle.cancel()
        self._later = self._saying = self._telling = None
        work = [*self._tasks, *(f for f in (self._reading, self._next) if isinstance(f, asyncio.Task))]
        self._reading = self._next = None
        await stop_tasks(work)

    async def watch(self, conn: Connection) -> None:
        """Show the lobby on this page from now on (and tell challenges where the player is)."""
        self.watchers.add(conn)
        if conn.user is not None:
            await self.bus.hset("lobby_pages", conn.user.id,
                                json.dumps({"node": self.node, "peer": conn.id}).encode())

    async def page_of(self, user: str) -> dict[str, str] | None:
        """Where ``user``'s lobby page is (process and page), if they have one on a process alive."""
        page = await self.bus.hget("lobby_pages", user)
        found = json.loads(page) if page is not None else None
        if found is None or not await self.nodes.alive(found["node"]):
            return None
        return found  # type: ignore[no-any-return]

    async def online(self, conn: Connection) -> None:
        """A player's duel page talks to the arena: they count as online."""
        assert conn.user is not None
        await self.bus.hset("online", f"{conn.user.id}/{conn.id}", self.node.encode())
        await self.changed()

    async def forget_page(self, user: str, peer: str) -> bool:
        """A page has gone: not online, not a lobby page any more; True if the lobby changed."""
        changed = bool(await self.bus.hdel("online", f"{user}/{peer}"))
        page = await self.bus.hget("lobby_pages", user)
        if page is not None and json.loads(page)["peer"] == peer:
            await self.bus.hdel("lobby_pages", user)
        return changed

    # -- telling ---------------------------------------------------------------------------------

    def _on_lobby(self, _: bytes) -> None:
        """Something changed: the pairer publishes the new view soon (changes close together: once)."""
        if self._later is not None or not self.pools.pairing_here:
            return
        loop = asyncio.get_running_loop()
        waiting = sum(self.pools.seekers.values())
        delay = min(TELL_MOST_SECONDS, TELL_SECONDS * max(1.0, waiting / TELL_SLOWER_PER))
        self._later = loop.call_later(delay, self._spawn, self._publish)

    def _spawn(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        task = asyncio.get_running_loop().create_task(work())
        self._tasks.add(task)  # held until done (the loop keeps only a weak reference)
        task.add_done_callback(self._tasks.discard)

    async def changed(self) -> None:
        """Tell the pairer that the lobby changed (it publishes a new view soon): once for the changes
        of :data:`CHANGED_GATHER_SECONDS` (said once they are made)."""
        if self._saying is None:
            self._saying = asyncio.get_running_loop().call_later(CHANGED_GATHER_SECONDS, self._spawn,
                                                                  self._say_changed)

    async def _say_changed(self) -> None:
        self._saying = None
        # the bus is away: the pairer's next wave still pairs, and the next change is said again
        with contextlib.suppress(Exception):
            await self.bus.publish("lobby", b"")

    async def _publish(self) -> None:
        self._later = None
        try:
            await self.bus.publish("lobby_view", msgspec.json.encode(await self.read()))
        except Exception:  # the bus is away or swamped: tried again in a moment (and by the refresh)
            log.warning("the lobby's view could not be published: the bus did not answer")
            if self.pools.pairing_here:
                self._later = asyncio.get_running_loop().call_later(RETRY_SECONDS, self._spawn, self._publish)
            return
        self._published_at = asyncio.get_running_loop().time()
        self.published += 1

    def _on_view(self, data: bytes) -> None:
        try:
            summary = _SUMMARY.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return
        self._last = (summary, self.now())
        if not self.watchers or self._telling is not None:
            return  # a telling waits: it tells this view, the newest
        loop = asyncio.get_running_loop()
        gap = min(TELL_PAGES_MOST_SECONDS, len(self.watchers) / PAGES_TOLD_PER_SECOND)
        self._telling = loop.call_at(max(loop.time(), self._told + gap), self._spawn, self._tell)

    async def _tell(self) -> None:
        """Every lobby page here, the newest view: what is the player's own is read for all of them at
        once (two commands)."""
        self._telling = None
        self._told = asyncio.get_running_loop().time()
        assert self._last is not None
        summary = self._last[0]
        for conn in [c for c in self.watchers if c.dropped]:
            self.watchers.discard(conn)
        conns = list(self.watchers)
        users = [c.user.id for c in conns if c.user is not None]
        try:
            seeking = dict(zip(users, await self.bus.hmget("seeking", users), strict=True))
            busy = dict(zip(users, await self.bus.hmget("busy", users), strict=True))
        except Exception:  # the bus is away: this view again in a moment (unless a newer one comes first)
            log.warning("the lobby could not be told: the bus did not answer")
            if self._telling is None:
                self._telling = asyncio.get_running_loop().call_later(RETRY_SECONDS, self._spawn, self._tell)
            return
        for conn in conns:
            user = conn.user.id if conn.user is not None else None
            conn.send(self._encode(conn, summary, seeking.get(user) if user else None,
                                   busy.get(user) if user else None))

    async def for_page(self, conn: Connection, *, fresh: bool = False) -> bytes:
        """The lobby for one page now: the last view published (after a seek or an unseek a new one
        follows within a moment: a seek never costs a reading of every pool), or, when the page opens
        the lobby or no view came yet, read afresh."""
        if not fresh and self._last is not None:  # a newer view follows within a moment of any change
            return await self._render(conn, self._last[0])
        return await self._render(conn, await self.read())

    async def for_seeker(self, conn: Connection, key: str) -> bytes:
        """The lobby for a page whose player has just been put in pool ``key`` and plays no match (the
        seek checked it): what is theirs is known, not read again."""
        if self._last is None:  # no view came yet: read afresh, the player's own as well
            return await self.for_page(conn)
        return self._encode(conn, self._last[0], key.encode(), None)

    async def read(self) -> Summary:
        """The arena read now, shared: callers that come while a reading goes on share the next one,
        which starts after it (so each gets a reading begun after it asked, and a thousand pages
        opening the lobby at once cost two readings, not a thousand)."""
        if self._next is None:
            self._next = asyncio.get_running_loop().create_task(self._read_after(self._reading))
        return await asyncio.shield(self._next)

    async def _read_after(self, before: asyncio.Future[Summary] | None) -> Summary:
        if before is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(before)
        self._reading, self._next = self._next, None
        return await self._summary()

    async def _pool(self, key: str) -> tuple[int, list[Side]]:
        """How many wait in pool ``key``, and the first few, longest waiting first."""
        count = await self.bus.hlen(f"pool:{key}")
        left = self.pools.left.get(key)
        if count > READ_WHOLE and left is not None and self.pools.wall() - left[0] < SNAPSHOT_SECONDS:
            return count, left[1][:POOL_SHOWN]
        pool = sorted((await self.pools.waiting(key)).values(), key=lambda entry: entry[1])
        return len(pool), [side for side, _ in pool[:POOL_SHOWN]]

    async def _summary(self) -> Summary:
        pools = {key: await self._pool(key) for key in FORMAT_KEYS}
        listed = [json.loads(data) for data in (await self.bus.hgetall("live_info")).values()]
        listed.sort(key=lambda info: -info["at"])
        infos = []
        for key in FORMAT_KEYS:
            fmt = Format.from_key(key)
            count, first = pools[key]
            shown = [DuelPlayer(side.user, side.name, round(side.rating.rating), side.rating.provisional)
                     for side in first]
            infos.append(PoolInfo(key, fmt.game, fmt.variant_name, fmt.limit_s, count, shown))
        live = [LiveInfo(info["id"], info["format"], [DuelPlayer(**p) for p in info["players"]])
                for info in listed[:LIVE_SHOWN]]
        challenge_of = {user: code.decode() for user, code in (await self.bus.hgetall("challenge_of")).items()}
        return Summary(msgspec.Raw(msgspec.json.encode(infos)), msgspec.Raw(msgspec.json.encode(live)),
                       await self.bus.hlen("live"), await self._online(), challenge_of, self.now())

    async def _online(self) -> int:
        """How many players have a duel page open, on any process that is alive (with thousands
        online: as of a whole reading at most :data:`ONLINE_SECONDS` old, moved on by the pages
        opened or closed since)."""
        entries = await self.bus.hlen("online")
        read = self._online_read
        if entries > READ_WHOLE and read is not None and self.now() - read[0] < ONLINE_SECONDS:
            return max(0, read[2] + entries - read[1])
        pages = {field: node.decode() for field, node in (await self.bus.hgetall("online")).items()}
        gone = {node for node in set(pages.values()) if not await self.nodes.alive(node)}
        if gone:
            await self.bus.hdel("online", *[field for field, node in pages.items() if node in gone])
        players = len({field.split("/", 1)[0] for field, node in pages.items() if node not in gone})
        self._online_read = (self.now(), len(pages) - sum(node in gone for node in pages.values()), players)
        return players

    async def _render(self, conn: Connection, summary: Summary) -> bytes:
        if conn.user is None:
            return self._encode(conn, summary, None, None)
        return self._encode(conn, summary, await self.bus.hget("seeking", conn.user.id),
                            await self.bus.hget("busy", conn.user.id))

    @staticmethod
    def _encode(conn: Connection, summary: Summary, seeking: bytes | None, busy: bytes | None) -> bytes:
        user = conn.user
        you = challenge = None
        if user is not None:
            you = DuelPlayer(user.id, user.name, 0, True)
            challenge = summary.challenge_of.get(user.id)
        return encode(LobbyMsg(summary.infos, you, None if seeking is None else seeking.decode(),
                               None if busy is None else busy.decode(), summary.playing, challenge, summary.online,
                               summary.live))
