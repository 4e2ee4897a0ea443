"""How the server processes ("nodes") of one arena speak to each other over the bus.

Each live match has one owner node, which holds the match's lease and plays it: the engine,
the clock, the move log, the versions. A page whose socket is on another node is a
:class:`RemotePeer` at the owner: its intents come over the bus as envelopes and what the owner tells
it goes back the same way. An envelope is one typed message per kind (:data:`Envelope`, a msgspec
tagged union: its field ``kind`` names its class), decoded by type (:func:`read_envelopes`). Every node
listens on its own channel ``node:NAME``; :class:`Outbound` publishes to those channels from one task,
in order, and puts the messages for several pages of one node into one envelope when they queue up
together.

Nothing here needs a message to arrive: a page that missed something asks again by version, an
intent sent again is answered once (its ack), and a node that sees no owner takes the match over
from its log (:mod:`patience.server.arena.elsewhere`).
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

__all__ = ["NODE_LEASE_SECONDS", "Act", "Envelope", "Join", "Joined", "Leave", "Many", "Matched", "Moved",
           "Nodes", "Out", "Outbound", "Refused", "RemoteMatch", "RemotePeer", "Start", "Unwatch", "Watch",
           "channel_of", "read_envelopes"]

log = logging.getLogger("patience.server")

NODE_LEASE_SECONDS = 5.0  # a process that stops renewing its lease for this long is taken for dead
ALIVE_KEPT_SECONDS = 1.0  # how long an answer to "is that process alive?" is used again
PACK_MOST = 256  # envelopes in one message on the bus at most


class _Envelope(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="kind"):
    """One message between processes; its class is its kind (the field ``kind`` on the bus)."""


class Out(_Envelope, tag="out", frozen=True):
    """Owner → process: messages for its pages, in order, as (page id, message) pairs."""

    messages: list[tuple[str, str]]


class Join(_Envelope, tag="join", frozen=True):
    """Process → owner: page ``page`` of ``user`` on process ``node`` joins ``match`` having seen version
    ``seen`` (its client id ``cid``)."""

    match: str
    page: str
    node: str
    user: str
    cid: str = "-"
    seen: int = 0


class Act(_Envelope, tag="act", frozen=True):
    """Process → owner: page ``page`` on process ``node`` sends ``intent`` (a protocol message, encoded)
    about ``match``."""

    match: str
    page: str
    node: str
    intent: str
    cid: str = "-"


class Leave(_Envelope, tag="leave", frozen=True):
    """Process → owner: page ``page`` no longer shows ``match``."""

    match: str
    page: str


class Joined(_Envelope, tag="joined", frozen=True):
    """Owner → process: page ``page`` plays ``side`` of the match it joined."""

    page: str
    side: int


class Refused(_Envelope, tag="refused", frozen=True):
    """Owner → process: page ``page`` may not play the match it joined (or plays it no more)."""

    page: str


class Matched(_Envelope, tag="matched", frozen=True):
    """Any → process: page ``page`` has a new match ``match``: it joins it."""

    match: str
    page: str


class Moved(_Envelope, tag="moved", frozen=True):
    """Old owner → process: ``match`` is no longer played by the sender: page ``page`` joins it again
    wherever it is played now."""

    match: str
    page: str


class Start(_Envelope, tag="start", frozen=True):
    """Pairer → process: make a match in ``format`` (a pool's key) of the two players of ``sides``, each
    (user id, their entry in the pool), owned by the process that receives it, where one of them plays."""

    format: str
    sides: list[tuple[str, str]]


class Watch(_Envelope, tag="watch", frozen=True):
    """Process → owner: page ``page`` on process ``node`` watches ``match``."""

    match: str
    page: str
    node: str


class Unwatch(_Envelope, tag="unwatch", frozen=True):
    """Process → owner: page ``page`` no longer watches ``match``."""

    match: str
    page: str


Envelope = Out | Join | Act | Leave | Joined | Refused | Matched | Moved | Start | Watch | Unwatch
"""Every kind of message between processes."""


class Many(_Envelope, tag="many", frozen=True):
    """Any → process: several envelopes, in order (what queued up for one process together goes in one
    message on the bus)."""

    envelopes: list[Envelope]


class _Ack(msgspec.Struct, frozen=True):
    ack: int | None = None


class _Answer(msgspec.Struct):
    d: _Ack = _Ack()


_ACKED = msgspec.json.Decoder(_Answer)
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Envelope | Many)
_unreadable = 0  # messages on the bus that were no envelope (said once in the log)


def read_envelopes(data: bytes) -> list[Envelope]:
    """The envelopes of one message on the bus, in order (a :class:`Many` holds several). A message that is
    none (a process of another version, during a rolling restart) is dropped: logged the first time only."""
    global _unreadable
    try:
        envelope = _DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        _unreadable += 1
        if _unreadable == 1:
            log.warning("a message on the bus is not an envelope (dropped, as are any more): %s: %r",
                        exc, data[:80])
        return []
    return list(envelope.envelopes) if isinstance(envelope, Many) else [envelope]


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
                envelopes.append(Out(batch))
                batch = []
            if item is not None:
                envelopes.append(item)
        for start in range(0, len(envelopes), PACK_MOST):
            pack = envelopes[start:start + PACK_MOST]
            await self._publish(node, pack[0] if len(pack) == 1 else Many(pack))

    async def _publish(self, node: str, envelope: Envelope | Many) -> None:
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
            outbound.send(self.owner, Leave(self.id, conn.id))


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
