"""Spectators: a page that watches a match going on sees both players' figures, never a card,
on any process — through the match's owner, as a player's page elsewhere does."""

from __future__ import annotations

from patience.server.arena.nodes import Nodes, Outbound, RemotePeer, Unwatch, Watch
from patience.server.arena.owned import OwnedMatches
from patience.server.bus import Bus
from patience.server.live import Connection
from patience.server.protocol import encode

__all__ = ["Spectators"]


class Spectators:
    """The pages of this process that watch a match (``watching``: page -> match, its owner), and the
    pages elsewhere that watch a match owned here (``remote``: page -> match, the page)."""

    def __init__(self, bus: Bus, nodes: Nodes, out: Outbound, owned: OwnedMatches,
                 pages: dict[str, Connection]) -> None:
        self.bus = bus
        self.node = bus.node
        self.nodes = nodes
        self.out = out
        self.owned = owned
        self.pages = pages
        self.watching: dict[str, tuple[str, str]] = {}
        self.remote: dict[str, tuple[str, RemotePeer]] = {}

    async def watch(self, conn: Connection, match_id: str) -> None:
        """Show match ``match_id`` to this page as a spectator: figures only, wherever it is played."""
        self.unwatch(conn)
        live = self.owned.matches.get(match_id)
        if live is None:
            owner = await self.bus.holder(f"match:{match_id}")
            if owner is None:
                live = await self.owned.take_over(match_id)
            elif owner != self.node:
                self.watching[conn.id] = (match_id, owner)
                self.out.send(owner, Watch(match_id, conn.id, self.node))
                return
        if live is None:
            conn.error("no_such_match", f"no match {match_id} going on (a finished one is at /match?id=…)")
            return
        self.watching[conn.id] = (match_id, self.node)
        live.watchers.add(conn)
        conn.send(encode(live.watch_view()))

    def unwatch(self, conn: Connection) -> None:
        watched = self.watching.pop(conn.id, None)
        if watched is None:
            return
        match_id, owner = watched
        if owner == self.node:
            live = self.owned.matches.get(match_id)
            if live is not None:
                live.watchers.discard(conn)
        else:
            self.out.send(owner, Unwatch(match_id, conn.id))

    async def remote_watch(self, watch: Watch) -> None:
        """A page of another process watches a match owned here."""
        peer = RemotePeer(watch.page, watch.node, "", self.out)
        live = self.owned.matches.get(watch.match)
        if live is None:
            peer.error("no_such_match", f"no match {watch.match} going on (a finished one is at /match?id=…)")
            return
        self.remote_unwatch(watch.page)
        self.remote[watch.page] = (watch.match, peer)
        live.watchers.add(peer)
        peer.send(encode(live.watch_view()))

    def remote_unwatch(self, peer_id: str) -> None:
        old = self.remote.pop(peer_id, None)
        if old is not None and old[0] in self.owned.matches:
            self.owned.matches[old[0]].watchers.discard(old[1])

    async def follow(self) -> None:
        """Spectators here of a match whose owner stopped watch it at its new owner; those of a
        match that is over and gone keep their last view; spectators elsewhere whose process
        stopped are forgotten. Asks the bus about processes, not about every match watched."""
        for peer_id, (match_id, owner) in list(self.watching.items()):
            if owner == self.node:
                if match_id in self.owned.matches:
                    continue
            elif await self.nodes.alive(owner):
                continue
            conn = self.pages.get(peer_id)
            if conn is None or conn.dropped or await self.bus.hget("live", match_id) is None:
                self.watching.pop(peer_id, None)
                continue
            await self.watch(conn, match_id)
        for peer_id, (match_id, peer) in list(self.remote.items()):
            live = self.owned.matches.get(match_id)
            if live is None or not await self.nodes.alive(peer.node):
                del self.remote[peer_id]
                if live is not None:
                    live.watchers.discard(peer)
