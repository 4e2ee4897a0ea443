"""The lobby as its pages see it: the pools (who waits, closest first), the matches going on, who
is online, and each player's own seek, match and challenge.

A change anywhere in the arena is one message on the channel ``lobby``; each process tells its
lobby pages at most every :data:`TELL_SECONDS` (changes close together make one message), with
one reading of the shared state encoded once for all its pages.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec

from patience.duel import Format
from patience.server.arena.nodes import Nodes
from patience.server.arena.pools import FORMAT_KEYS, Pools
from patience.server.bus import Bus
from patience.server.live import Connection
from patience.server.protocol import DuelPlayer, LiveInfo, LobbyMsg, PoolInfo, encode

__all__ = ["LobbyView"]

POOL_SHOWN = 12  # waiting players named per pool in the lobby
LIVE_SHOWN = 20  # matches going on listed in the lobby, for spectators
TELL_SECONDS = 0.2  # changes within this long make one lobby message


class LobbyView:
    """The lobby pages of this process (``watchers``) and what they are told."""

    def __init__(self, bus: Bus, nodes: Nodes, pools: Pools) -> None:
        self.bus = bus
        self.node = bus.node
        self.nodes = nodes
        self.pools = pools
        self.watchers: set[Connection] = set()
        self._later: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        await self.bus.subscribe("lobby", self._on_lobby)

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
        if self._later is not None or not self.watchers:
            return
        loop = asyncio.get_running_loop()
        self._later = loop.call_later(TELL_SECONDS, lambda: loop.create_task(self._tell()))

    async def changed(self) -> None:
        await self.bus.publish("lobby", b"")

    async def _tell(self) -> None:
        self._later = None
        state = await self._state()
        for conn in list(self.watchers):
            if conn.dropped:
                self.watchers.discard(conn)
                continue
            conn.send(await self._render(conn, state))

    async def for_page(self, conn: Connection) -> bytes:
        return await self._render(conn, await self._state())

    async def _state(self) -> dict[str, Any]:
        pools = {key: await self.pools.waiting(key) for key in FORMAT_KEYS}
        live = await self.bus.hgetall("live")
        listed = [json.loads(data) for match_id, data in (await self.bus.hgetall("live_info")).items()
                  if match_id in live]
        listed.sort(key=lambda info: -info["at"])
        infos = []
        for key in FORMAT_KEYS:
            fmt = Format.from_key(key)
            pool = sorted(pools[key].values(), key=lambda entry: entry[1])
            shown = [DuelPlayer(side.user, side.name, round(side.rating.rating), side.rating.provisional)
                     for side, _ in pool[:POOL_SHOWN]]
            infos.append(PoolInfo(key, fmt.game, fmt.variant_name, fmt.limit_s, len(pool), shown))
        return {"infos": msgspec.Raw(msgspec.json.encode(infos)),
                "live": msgspec.Raw(msgspec.json.encode(
                    [LiveInfo(info["id"], info["format"], [DuelPlayer(**p) for p in info["players"]])
                     for info in listed[:LIVE_SHOWN]])),
                "challenge_of": await self.bus.hgetall("challenge_of"),
                "pool_of": {user: key for key, entries in pools.items() for user in entries},
                "playing": len(live), "online": await self._online()}

    async def _online(self) -> int:
        """How many players have a duel page open, on any process that is alive."""
        pages = {field: node.decode() for field, node in (await self.bus.hgetall("online")).items()}
        gone = {node for node in set(pages.values()) if not await self.nodes.alive(node)}
        if gone:
            await self.bus.hdel("online", *[field for field, node in pages.items() if node in gone])
        return len({field.split("/", 1)[0] for field, node in pages.items() if node not in gone})

    async def _render(self, conn: Connection, state: dict[str, Any]) -> bytes:
        user = conn.user
        you = seeking = match = challenge = None
        if user is not None:
            you = DuelPlayer(user.id, user.name, 0, True)
            seeking = state["pool_of"].get(user.id)
            busy = await self.bus.hget("busy", user.id)
            match = busy.decode() if busy is not None else None
            code = state["challenge_of"].get(user.id)
            challenge = code.decode() if code is not None else None
        return encode(LobbyMsg(state["infos"], you, seeking, match, state["playing"], challenge, state["online"],
                               state["live"]))
