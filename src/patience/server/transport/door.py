"""The door: the event loop that takes connections in, a few at a time, and keeps caps on those open (in
all, and per address), before a request reaches the app.

Thousands of connections opened at once would make the event loop set each one up in one go, while the
players' messages wait; and connections that trickle their requests in would hold a descriptor each
until the process has none left for real players. Here:

- :class:`GuardedLoop` (the event loop ``patience serve`` hands to uvicorn) takes new connections a
  few at a time between the players' messages, and closes a connection past the caps as soon as it
  is accepted (a reset, before anything is made for it). A connection counts against its address
  until its socket is closed, a websocket included.
- An address whose connections keep being closed for trickling their requests in (:data:`STRIKES_SLOW`)
  is taken in a few new connections a second; the rest are reset as they are accepted, which costs
  the server far less than a connection set up, swept and closed. A connection that sent nothing (a
  browser's spare or idle one) is closed in time too, but is no strike.
- At the cap in all, a new connection takes the place of the oldest one that waits for its client
  (its request's headers or body, or its next request on a kept-alive connection; the HTTP protocols of
  :mod:`patience.server.transport.listener` say which wait, :func:`waiting` and :func:`busy`): connections
  that trickle their requests in, from however many addresses, cannot lock the others out, while a
  request the server works on and an open websocket are never closed for a newcomer.

An address is an IPv4 address or an IPv6 /64 (:func:`patience.server.identity.address_group`).
Each kind of overload is logged in one line when it starts and then at most once a minute with a
count (:data:`OVERLOADS`), never a line per connection.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import logging
import resource
import socket
import struct
import time
from asyncio import selector_events
from typing import Any, ClassVar

from patience.server.identity import address_group
from patience.server.transport.budget import TokenBucket

__all__ = ["ACCEPT_BATCH", "MAX_PER_ADDRESS", "OVERLOADS", "GuardedLoop", "Overloads", "busy", "close_late",
           "max_connections", "waiting"]

MAX_PER_ADDRESS = 1024  # open connections from one address (players behind one NAT share an address)
ACCEPT_BATCH = 16  # connections taken at a time before the loop runs what else is ready
STRIKES_SLOW = 20.0
"""An address whose connections were closed this many times for waiting on their client (request
headers or a body not in time, or closed to make room at the cap in all; the count halves every
:data:`STRIKE_HALF_LIFE` seconds) is taken in at most :data:`SLOW_ADDRESS_RATE` new connections a
second (bursts of :data:`SLOW_ADDRESS_BURST`); the rest are reset as soon as they are accepted.
So an attacker who reopens a trickling connection the moment it is closed costs the server an
accept and a reset each time, not a connection set up, swept and closed; an address that never
trickles is never slowed."""
STRIKE_HALF_LIFE = 60.0
SLOW_ADDRESS_RATE = 2.0
SLOW_ADDRESS_BURST = 10.0
STRUCK_ADDRESSES_MOST = 100_000  # addresses with strikes remembered (the least recently struck forgotten first)
RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() resets the connection and frees it at once

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


def _reset(sock: Any) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)


def _no_delay(conn: socket.socket) -> None:
    """Send each write at once (TCP_NODELAY). asyncio sets it only on sockets it knows for TCP, and
    uvicorn takes the listening socket ``patience serve`` hands it (``fd``) for a Unix socket, so the
    sockets it accepts never had it: a second message written while the first was not yet
    acknowledged (an answer after a clock's tick, a duel's start after the lobby) waited for the
    client's delayed acknowledgement, 40 ms. (A Unix socket refuses the option: nothing to do.)"""
    with contextlib.suppress(OSError):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _host(address: Any) -> str:
    return str(address[0]) if isinstance(address, tuple) and address else "?"


# (asyncio's private transport class, not in the stubs)
class _CountedTransport(selector_events._SelectorSocketTransport):  # type: ignore[name-defined]
    """A socket transport that tells its loop when its socket is closed (whatever protocol it ends with)."""

    _counted_as: str | None = None

    def _call_connection_lost(self, exc: BaseException | None) -> None:
        loop, host = self._loop, self._counted_as
        try:
            super()._call_connection_lost(exc)
        finally:
            if isinstance(loop, GuardedLoop) and host is not None:
                self._counted_as = None
                loop.connection_closed(host, self)


def waiting(transport: asyncio.BaseTransport | None) -> None:
    """The connection waits for its client (a request's headers or body, or the next request): at the
    cap in all, a new connection may take its place (the longest waiting first)."""
    if isinstance(transport, _CountedTransport) and transport._counted_as is not None:
        loop = transport._loop
        if isinstance(loop, GuardedLoop):
            loop.waiting[transport] = None
            loop.waiting.move_to_end(transport)


def busy(transport: asyncio.BaseTransport | None) -> None:
    """The connection's request is in (the server works on it) or it is a websocket now: it keeps its place."""
    if isinstance(transport, _CountedTransport):
        loop = transport._loop
        if isinstance(loop, GuardedLoop):
            loop.waiting.pop(transport, None)


def _decayed(strikes: list[float], now: float) -> float:
    """An address's strikes ``[count, when counted]`` as of ``now``: halved every :data:`STRIKE_HALF_LIFE`."""
    return strikes[0] * 0.5 ** (max(0.0, now - strikes[1]) / STRIKE_HALF_LIFE)


class GuardedLoop(asyncio.SelectorEventLoop):
    """An event loop that takes new connections ``ACCEPT_BATCH`` at a time and closes those past the
    caps (``max_per_address`` open from one address other than a trusted proxy's, ``max_connections``
    in all) as soon as they are accepted, with a reset and nothing made for them; at the cap in all,
    a new connection takes the place of the one that has waited longest for its client, if any."""

    max_per_address: ClassVar[int] = MAX_PER_ADDRESS
    max_connections: ClassVar[int] = max_connections()
    strikes_slow: ClassVar[float] = STRIKES_SLOW
    slow_rate: ClassVar[float] = SLOW_ADDRESS_RATE
    slow_burst: ClassVar[float] = SLOW_ADDRESS_BURST

    def __init__(self, *args: Any, proxies: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.by_address: dict[str, int] = {}  # open connections per address (an IPv6 /64 is one)
        self.open_connections = 0
        # the connections that wait for their client, longest waiting first
        self.waiting: collections.OrderedDict[_CountedTransport, None] = collections.OrderedDict()
        # per address with strikes: ([strikes, when counted], its new connections' bucket)
        self.struck: collections.OrderedDict[str, tuple[list[float], TokenBucket]] = collections.OrderedDict()
        # behind a proxy every player comes from its address: the proxy's connections are held by the
        # cap in all only (``proxies`` as --forwarded-allow-ips: addresses, networks or '*')
        items = [item.strip() for item in (proxies or "").split(",") if item.strip()]
        self.any_proxy = "*" in items
        self.proxies = []
        for item in items:
            with contextlib.suppress(ValueError):  # '*', or no address (uvicorn's own check says so)
                self.proxies.append(ipaddress.ip_network(item, strict=False))

    def _proxy(self, host: str) -> bool:
        if self.any_proxy:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.proxies)

    def _accept_connection(self, protocol_factory: Any, sock: Any, sslcontext: Any = None, server: Any = None,
                           backlog: int = 100, *args: Any) -> None:
        if sslcontext is not None:  # TLS in the process: asyncio's own way, a batch at a time
            # (asyncio's private method, not in the stubs)
            super()._accept_connection(protocol_factory, sock, sslcontext, server,  # type: ignore[misc]
                                       min(backlog, ACCEPT_BATCH), *args)
            return
        for _ in range(ACCEPT_BATCH):  # the rest wait in the kernel's queue until the next turn
            try:
                conn, address = sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError:  # out of descriptors or memory: asyncio's way (pause, log, try again)
                # (asyncio's private method, not in the stubs)
                super()._accept_connection(protocol_factory, sock, sslcontext, server, 1, *args)  # type: ignore[misc]
                return
            host = _host(address)
            group = address_group(host)
            count = self.by_address.get(group, 0)
            if group in self.struck and not self._admitted(group) and not self._proxy(host):
                OVERLOADS("struck", f"addresses whose requests kept trickling in: at most {self.slow_rate:g} new "
                                    "connections a second from each, the others closed")
            elif count >= self.max_per_address and not self._proxy(host):
                OVERLOADS("address", f"more than {self.max_per_address} open connections from one address "
                                     f"({group}): its new ones are closed")
            elif self.open_connections >= self.max_connections and not self._make_room():
                OVERLOADS("connections", f"more than {self.max_connections} open connections: new ones are closed")
            else:
                self.by_address[group] = count + 1
                self.open_connections += 1
                try:
                    conn.setblocking(False)
                    _no_delay(conn)
                    transport = _CountedTransport(self, conn, protocol_factory(), None, {"peername": address},
                                                  server)
                except Exception as exc:
                    self.connection_closed(group)
                    conn.close()
                    self.call_exception_handler({"message": "a new connection could not be set up",
                                                 "exception": exc})
                else:
                    transport._counted_as = group
                    self.waiting[transport] = None  # for its request's headers
                continue
            _reset(conn)
            conn.close()

    def strike(self, group: str) -> None:
        """A connection of address ``group`` was closed for waiting on its client."""
        now = time.monotonic()
        entry = self.struck.get(group)
        if entry is None:
            entry = self.struck[group] = ([0.0, now], TokenBucket(self.slow_rate, int(self.slow_burst)))
            if len(self.struck) > STRUCK_ADDRESSES_MOST:
                self.struck.popitem(last=False)
        else:
            self.struck.move_to_end(group)
        strikes = entry[0]
        strikes[:] = [_decayed(strikes, now) + 1.0, now]

    def _admitted(self, group: str) -> bool:
        """May a new connection of address ``group`` (one with strikes) come in now?"""
        strikes, bucket = self.struck[group]
        left = _decayed(strikes, time.monotonic())
        if left < self.strikes_slow:
            if left < 0.5:  # all but forgiven
                del self.struck[group]
            return True
        if bucket.can_take():
            bucket.take()
            return True
        return False

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for its client, to take a new one in its place
        (False: every connection is busy, none to close)."""
        while self.waiting:
            transport, _ = self.waiting.popitem(last=False)
            if transport.is_closing():
                continue
            OVERLOADS("room", f"{self.max_connections} open connections, the cap in all: each new one takes the "
                              "place of the oldest that still waits for its client's request")
            sock = transport.get_extra_info("socket")
            if sock is not None:
                _reset(sock)
            if _trickled(transport):
                _strike(transport)
            transport.abort()  # counted out when its socket is closed, in a moment
            return True
        return False

    def connection_closed(self, host: str, transport: _CountedTransport | None = None) -> None:
        """A counted socket was closed."""
        if transport is not None:
            self.waiting.pop(transport, None)
        self.open_connections -= 1
        left = self.by_address.get(host, 1) - 1
        if left > 0:
            self.by_address[host] = left
        else:
            self.by_address.pop(host, None)


def close_late(transport: asyncio.BaseTransport, kind: str, what: str, *, trickled: bool = True) -> None:
    """Close a connection that waited too long for its client; ``trickled``: it had sent part of a
    request (a strike for its address), not nothing at all (a browser's spare or idle connection)."""
    OVERLOADS(kind, what)
    if trickled:
        _strike(transport)
    sock = transport.get_extra_info("socket")
    if sock is not None:
        _reset(sock)
    transport.close()


def _strike(transport: asyncio.BaseTransport) -> None:
    group = getattr(transport, "_counted_as", None)
    loop = getattr(transport, "_loop", None)
    if isinstance(loop, GuardedLoop) and isinstance(group, str):
        loop.strike(group)


def _trickled(transport: asyncio.BaseTransport) -> bool:
    """Has the connection's client sent part of a request it has not finished?"""
    partial = getattr(transport.get_protocol(), "partial", None)
    return bool(partial()) if callable(partial) else False
