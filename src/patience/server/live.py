"""What solo games and duels share: a game's clock and a player's connection as the services see it.

A :class:`Connection` is a page's outbox of encoded messages (the transport drains it into the
websocket), whose browser and account it is, and what the page shows. The services put
messages into it and know nothing of sockets.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from patience.server.accounts import User
from patience.server.protocol import ErrorMsg, Why, encode
from patience.session import ManualClock

__all__ = ["OUTBOX_LIMIT", "Connection", "GameClock", "Now"]

Now = Callable[[], float]

OUTBOX_LIMIT = 1000  # messages waiting for a slow connection before it is dropped


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


class Connection:
    """One websocket: whose browser it is, the page's client id, the game it shows, its outbox."""

    def __init__(self, browser: str, on_overflow: Callable[[], None] | None = None) -> None:
        self.browser = browser
        self.cid = "-"
        self.game: Any = None  # the solo game this page shows (a patience.server.solo.LiveGame), if any
        self.user: User | None = None  # the signed-in account, if any (duels need one)
        self.match: Any = None  # the duel this page shows (a patience.server.arena.LiveMatch), if any
        # and which side it plays
        self.side = 0
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._on_overflow = on_overflow
        self.dropped = False

    def send(self, data: bytes) -> None:
        if self.dropped:
            return
        if self.outbox.qsize() >= OUTBOX_LIMIT:
            # a browser that does not read its messages is let go rather than kept in memory
            self.dropped = True
            self.outbox.put_nowait(None)
            if self._on_overflow is not None:
                self._on_overflow()
            return
        self.outbox.put_nowait(data)

    def error(self, code: str, message: str, ack: int | None = None, why: Why | None = None) -> bytes:
        data = encode(ErrorMsg(code, message, ack, why))
        self.send(data)
        return data
