"""Guards at the door, before a request reaches the app: a time limit for request headers and caps on
open connections (in all, and per address).

A client that opens connections and sends its headers a byte at a time (slowloris) would otherwise
hold a descriptor each for as long as it likes, until the process has none left for real players.
Here a connection whose request headers are not complete in ``HEADER_SECONDS`` is closed, and a
connection past the caps is closed as soon as it is made. Each kind of overload is logged in one
line when it starts and then at most once a minute with a count, never a line per connection.

``patience serve`` hands :class:`GuardedH11` to uvicorn as its HTTP protocol.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_SECONDS", "MAX_PER_ADDRESS", "GuardedH11", "Overloads", "max_connections"]

HEADER_SECONDS = 10.0  # from the connection (or the end of the last answer) to the end of the request headers
MAX_PER_ADDRESS = 1024  # open connections from one address (players behind one NAT share an address)

log = logging.getLogger("patience.server")


def max_connections() -> int:
    """Open connections the process takes at most: three quarters of its descriptors (raised to the
    hard limit first), the rest kept for the database, Redis and files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return max(64, int(soft * 3 // 4))


class Overloads:
    """One log line per kind of overload: when it starts, then a count at most every ``every`` seconds."""

    def __init__(self, every: float = 60.0) -> None:
        self.every = every
        self.counts: dict[str, int] = {}
        self._said: dict[str, tuple[float, int]] = {}  # kind -> when last logged, count then

    def __call__(self, kind: str, what: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        now = time.monotonic()
        said = self._said.get(kind)
        if said is None or now - said[0] >= self.every:
            since = self.counts[kind] - (said[1] if said else 0)
            log.warning("overload: %s (%d since the last such line)", what, since)
            self._said[kind] = (now, self.counts[kind])


OVERLOADS = Overloads()


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a time limit for request headers and caps on connections."""

    header_seconds = HEADER_SECONDS
    max_per_address = MAX_PER_ADDRESS
    max_connections = max_connections()
    by_address: ClassVar[dict[str, int]] = {}  # open connections per address, in this process

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._address: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = self.client[0] if self.client else "?"
        count = self.by_address.get(address, 0) + 1
        self.by_address[address] = count
        self._address = address
        if len(self.connections) > self.max_connections:
            OVERLOADS("connections", f"more than {self.max_connections} open connections: new ones are closed")
            transport.abort()
        elif count > self.max_per_address:
            OVERLOADS("address", f"more than {self.max_per_address} open connections from one address "
                                 f"({address}): its new ones are closed")
            transport.abort()
        else:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._forget_address()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        # the socket is the websocket protocol's from now on (its budgets: patience.server.transport.budget)
        self._disarm()
        self._forget_address()
        super().handle_websocket_upgrade(event)

    def _forget_address(self) -> None:
        if self._address is not None:
            left = self.by_address.get(self._address, 1) - 1
            if left > 0:
                self.by_address[self._address] = left
            else:
                self.by_address.pop(self._address, None)
            self._address = None

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self.conn.their_state is h11.IDLE:
            self._arm()  # a new request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the headers are in

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_seconds, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete) \
                and not self.transport.is_closing():
            OVERLOADS("headers", f"request headers not complete in {self.header_seconds:g} s: connections closed")
            self.transport.close()
