"""What solo games and duels share: a game's clock and a player's connection as the services see it.

A :class:`Connection` is a page's outbox of encoded messages (the transport drains it into the
websocket), whose browser and account it is, and what the page shows. The services put
messages into it and know nothing of sockets.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Protocol

import patience.server.figures as figures
from patience.server.identity import User
from patience.server.protocol import ErrorMsg, Why, encode
from patience.session import ManualClock

__all__ = ["OUTBOX_BYTES", "OUTBOX_LIMIT", "Connection", "GameClock", "Now", "Peer", "Shown"]

Now = Callable[[], float]

OUTBOX_LIMIT = 1000  # messages waiting for a slow connection before it is dropped
OUTBOX_BYTES = 1 << 20  # or bytes: a page that does not read is let go early, not kept in memory


class GameClock(ManualClock):
    """A game's clock: stands still while a game is rebuilt from its log, then follows ``now``."""

    def __init__(self, now: Now) -> None:
        super().__init__(0.0)
        self._real = now
        self._live_from: float | None = None

    def __call__(self) -> float:
        if self._live_from is None:
            return self.now
        return self.now + (self._real() - self._live_from)

    def go_live(self) -> None:
        self._live_from = self._real()


class Shown(Protocol):
    """What a page shows, as this room sees it: a solo game (:class:`patience.server.solo.hub.LiveGame`) or
    a duel (:class:`patience.server.arena.matches.LiveMatch` owned here, or
    :class:`patience.server.arena.nodes.RemoteMatch` owned by another process). The service that put it
    there tells which by its class."""

    @property
    def id(self) -> str: ...


class Peer:
    """Whoever a match or a game answers: a page's connection here, or one on another server process
    (:class:`patience.server.arena.nodes.RemotePeer`). ``id`` names it among the arena's processes."""

    def __init__(self) -> None:
        self.id = secrets.token_urlsafe(9)
        self.cid = "-"  # the page's client id: acks count per page
        self.side = 0  # the side of the match it plays
        self.match: Shown | None = None  # the duel it plays or shows, if any
        self.dropped = False

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def error(self, code: str, message: str, ack: int | None = None, why: Why | None = None) -> bytes:
        data = encode(ErrorMsg(code, message, ack, why))
        figures.REFUSED.labels(code).inc()
        self.send(data)
        return data


class Connection(Peer):
    """One websocket: whose browser it is, the page's client id, the game it shows, its outbox."""

    def __init__(self, browser: str, on_overflow: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.browser = browser
        self.address = "?"  # where the page connects from (the budgets of an address count it)
        self.game: Shown | None = None  # the solo game this page shows, if any
        self.user: User | None = None  # the signed-in account, if any (duels need one)
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.queued_bytes = 0  # of the messages in the outbox (the transport takes them off as it sends)
        self._on_overflow = on_overflow

    def send(self, data: bytes) -> None:
        if self.dropped:
            return
        if self.outbox.qsize() >= OUTBOX_LIMIT or self.queued_bytes + len(data) > OUTBOX_BYTES:
            # a browser that does not read its messages is let go rather than kept in memory
            self.dropped = True
            self.outbox.put_nowait(None)
            if self._on_overflow is not None:
                self._on_overflow()
            return
        self.queued_bytes += len(data)
        self.outbox.put_nowait(data)
