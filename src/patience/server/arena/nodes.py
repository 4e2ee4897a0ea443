"""How the server processes ("nodes") of one arena speak to each other over the bus.

Each live match has one owner node, which holds the match's lease and plays it: the engine,
the clock, the move log, the versions. A page whose socket is on another node is a
:class:`RemotePeer` at the owner: its intents come over the bus as :class:`Envelope` s and what
the owner tells it goes back the same way. Every node listens on its own channel
``node:NAME``; :class:`Outbound` publishes to those channels from one task, in order, and puts the
messages for several pages of one node into one envelope when they queue up together.

Nothing here needs a message to arrive: a page that missed something asks again by version, an
intent sent again is answered once (its ack), and a node that sees no owner takes the match over
from its log (:mod:`patience.server.arena.lobby`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import msgspec

from patience.server.bus import Bus
from patience.server.live import Connection, Now, Peer

__all__ = ["NODE_LEASE_SECONDS", "Envelope", "Nodes", "Outbound", "RemoteMatch", "RemotePeer", "channel_of",
           "read_envelope", "unpacked"]

log = logging.getLogger("patience.server")

NODE_LEASE_SECONDS = 5.0  # a process that stops renewing its lease for this long is taken for dead
ALIVE_KEPT_SECONDS = 1.0  # how long an answer to "is that process alive?" is used again
PACK_MOST = 256  # envelopes in one message on the bus at most


class Envelope(msgspec.Struct, frozen=True, omit_defaults=True):
    """One message between nodes. ``k`` is its kind:

    - ``out`` (owner → node): ``o``, pairs of (peer id, message for that page);
    - ``join`` / ``act`` / ``leave`` (node → owner): page ``x`` of user ``u`` on node ``r`` joins
      match ``m`` having seen version ``v`` (client id ``c``), sends intent ``d``, or leaves;
    - ``joined`` / ``refused`` (owner → node): page ``x`` plays side ``s`` / may not join;
    - ``matched`` (any → node): page ``x`` has a new match ``m``: join it;
    - ``moved`` (old owner → node): match ``m`` is no longer played by the sender: page ``x`` joins
      it again wherever it is now;
    - ``start`` (pairer → node): make a match of the two players in ``d`` (the pool's format in
      ``m``), owned by the node that receives it, one of whose pages plays in it;
    - ``many`` (any → node): the envelopes ``n``, in order (what queued up for one node together
      goes in one message on the bus).
    """

    k: str
    m: str = ""
    x: str = ""
    r: str = ""
    u: str = ""
    s: int = 0
    c: str = "-"
    v: int = 0
    d: str = ""
    o: list[tuple[str, str]] = []
    n: list[Envelope] = []


class _Ack(msgspec.Struct, frozen=True):
    ack: int | None = None


class _Answer(msgspec.Struct):
    d: _Ack = _Ack()


_ACKED = msgspec.json.Decoder(_Answer)
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Envelope)


def read_envelope(data: bytes) -> Envelope | None:
    try:
        return _DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError):
        log.warning("a message on the bus is not an envelope: %r", data[:80])
        return None


def unpacked(envelope: Envelope) -> list[Envelope]:
    """The envelopes one message on the bus holds, in order (a ``many`` holds several)."""
    return list(envelope.n) if envelope.k == "many" else [envelope]


def channel_of(node: str) -> str:
    return f"node:{node}"


class Outbound:
    """What this node sends to other nodes: kept in order per node, published by one task."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self._pending: OrderedDict[str, list[Envelope | tuple[str, str]]] = OrderedDict()
        self._wake = asyncio.Event()
        self.sent = 0

    def send(self, node: str, envelope: Envelope) -> None:
        self._pending.setdefault(node, []).append(envelope)
        self._wake.set()

    def to_peer(self, node: str, peer: str, data: bytes) -> None:
        self._pending.setdefault(node, []).append((peer, data.decode()))
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self.flush()

    async def flush(self) -> None:
        """Publish what is pending: to each node, in order, in as few messages as it takes (the
        messages for its pages in ``out`` envelopes, then all of them in one ``many``); the nodes at
        once, each in the order its envelopes were queued."""
        while self._pending:
            pending, self._pending = self._pending, OrderedDict()
            await asyncio.gather(*(self._flush_node(node, items) for node, items in pending.items()))

    async def _flush_node(self, node: str, items: list[Envelope | tuple[str, str]]) -> None:
        envelopes: list[Envelope] = []
        batch: list[tuple[str, str]] = []
        for item in [*items, None]:
            if isinstance(item, tuple):
                batch.append(item)
                continue
            if batch:
                envelopes.append(Envelope("out", o=batch))
                batch = []
            if item is not None:
                envelopes.append(item)
        for start in range(0, len(envelopes), PACK_MOST):
            pack = envelopes[start:start + PACK_MOST]
            await self._publish(node, pack[0] if len(pack) == 1 else Envelope("many", n=pack))

    async def _publish(self, node: str, envelope: Envelope) -> None:
        try:
            await self.bus.publish(channel_of(node), _ENCODER.encode(envelope))
            self.sent += 1
        except Exception:  # the pages ask again by version; a node that is gone is taken over
            log.exception("publishing to %s failed", node)


class RemotePeer(Peer):
    """A page on another node, as the owner of its match sees it."""

    def __init__(self, peer_id: str, node: str, user: str, outbound: Outbound) -> None:
        super().__init__()
        self.id = peer_id
        self.node = node
        self.user_id = user
        self.match: object = None
        self._out = outbound

    def send(self, data: bytes) -> None:
        if not self.dropped:
            self._out.to_peer(self.node, self.id, data)


@dataclass
class RemoteMatch:
    """A match owned by another node that pages of this node show."""

    id: str
    owner: str
    conns: set[Connection] = field(default_factory=set)
    unanswered: dict[tuple[str, int], tuple[Connection, Any]] = field(default_factory=dict)
    """The intents forwarded to the owner and not answered yet, by (page, ack): sent again to the
    next owner if this one stops, so that every intent gets its answer."""

    def answered(self, peer: str, data: bytes) -> None:
        """A message from the owner for page ``peer``: if it answers an intent, that one is done."""
        if not self.unanswered:
            return
        try:
            ack = _ACKED.decode(data).d.ack
        except (msgspec.ValidationError, msgspec.DecodeError):
            return
        if ack is not None:
            self.unanswered.pop((peer, ack), None)

    def detach(self, conn: Connection, outbound: Outbound) -> None:
        if conn in self.conns:
            self.conns.discard(conn)
            outbound.send(self.owner, Envelope("leave", m=self.id, x=conn.id))


class Nodes:
    """The processes of one arena: this one's lease ``node:NAME`` (kept by the arena every second),
    the hash ``nodes`` of every process that joined, and whether another process is alive — asked
    of the bus at most once a second per process (:data:`ALIVE_KEPT_SECONDS`), so that the per-second
    work of a process grows with the number of processes, not with the matches or pages of all."""

    def __init__(self, bus: Bus, now: Now = time.monotonic) -> None:
        self.bus = bus
        self.node = bus.node
        self.now = now
        self._token: str | None = None
        self._seen: dict[str, tuple[bool, float]] = {}  # node -> (alive, when asked)

    async def join(self) -> None:
        self._token = await self.bus.acquire(f"node:{self.node}", NODE_LEASE_SECONDS)
        await self.bus.hset("nodes", self.node, str(time.time()).encode())

    async def keep(self) -> None:
        """Renew this process's lease (take it again if it lapsed)."""
        if self._token is None or not await self.bus.renew(f"node:{self.node}", self._token, NODE_LEASE_SECONDS):
            self._token = await self.bus.acquire(f"node:{self.node}", NODE_LEASE_SECONDS)
            if self._token is not None:  # taken for dead meanwhile (and forgotten): in the list again
                await self.bus.hset("nodes", self.node, str(time.time()).encode())

    async def leave(self) -> None:
        if self._token is not None:
            with contextlib.suppress(Exception):
                await self.bus.release(f"node:{self.node}", self._token)
                await self.bus.hdel("nodes", self.node)

    async def alive(self, node: str) -> bool:
        if node == self.node:
            return True
        now = self.now()
        seen = self._seen.get(node)
        if seen is not None and now - seen[1] < ALIVE_KEPT_SECONDS:
            return seen[0]
        alive = await self.bus.holder(f"node:{node}") is not None
        self._seen[node] = (alive, now)
        return alive

    async def dead(self) -> list[str]:
        """The processes that joined and have stopped (their matches are to be taken over)."""
        return [node for node in await self.bus.hgetall("nodes") if not await self.alive(node)]

    async def forget(self, node: str) -> None:
        """A stopped process none of whose matches is left to take over."""
        await self.bus.hdel("nodes", node)
        self._seen.pop(node, None)
