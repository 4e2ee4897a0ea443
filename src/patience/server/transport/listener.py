"""Guards at the door, before a request reaches the app: caps on open connections (in all, and per
address) and a time limit for request headers.

A client that opens connections and sends its headers a byte at a time (slowloris) would otherwise
hold a descriptor each for as long as it likes, until the process has none left for real players;
and thousands of connections opened at once would make the event loop set each one up in one go,
while the players' messages wait. Here:

- :class:`GuardedLoop` (the event loop ``patience serve`` hands to uvicorn) takes new connections a
  few at a time between the players' messages, and closes a connection past the caps as soon as it
  is accepted (a reset, before anything is made for it). A connection counts against its address
  until its socket is closed, a websocket included.
- :class:`HeaderGate` (the HTTP protocol ``patience serve`` hands to uvicorn) keeps a new
  connection's bytes until its request headers are in, and only then hands it to
  :class:`GuardedH11` (uvicorn's h11 protocol), which times the headers of the requests that follow
  on a kept-alive connection. Either closes a connection whose request headers are not complete in
  ``HEADER_SECONDS``. One timer per loop sweeps every late connection (a few at a time, then the
  players' messages run) instead of a timer per connection.

Each kind of overload is logged in one line when it starts and then at most once a minute with a
count, never a line per connection.
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
import weakref
from asyncio import selector_events
from typing import Any, ClassVar, Protocol

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["ACCEPT_BATCH", "HEADER_SECONDS", "MAX_PER_ADDRESS", "GuardedH11", "GuardedLoop", "HeaderGate",
           "Overloads", "max_connections"]

HEADER_SECONDS = 10.0  # from the connection (or the end of the last answer) to the end of the request headers
MAX_PER_ADDRESS = 1024  # open connections from one address (players behind one NAT share an address)
ACCEPT_BATCH = 16  # connections taken at a time before the loop runs what else is ready
CLOSE_BATCH = 64  # late connections closed at a time before the loop runs what else is ready
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


def _host(address: Any) -> str:
    return str(address[0]) if isinstance(address, tuple) and address else "?"


class _CountedTransport(selector_events._SelectorSocketTransport):
    """A socket transport that tells its loop when its socket is closed (whatever protocol it ends with)."""

    _counted_as: str | None = None

    def _call_connection_lost(self, exc: BaseException | None) -> None:
        loop, host = self._loop, self._counted_as
        try:
            super()._call_connection_lost(exc)
        finally:
            if isinstance(loop, GuardedLoop) and host is not None:
                self._counted_as = None
                loop.connection_closed(host)


class GuardedLoop(asyncio.SelectorEventLoop):
    """An event loop that takes new connections ``ACCEPT_BATCH`` at a time and closes those past the
    caps (``max_per_address`` open from one address other than a trusted proxy's, ``max_connections``
    in all) as soon as they are accepted, with a reset and nothing made for them."""

    max_per_address: ClassVar[int] = MAX_PER_ADDRESS
    max_connections: ClassVar[int] = max_connections()

    def __init__(self, *args: Any, proxies: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.by_address: dict[str, int] = {}  # open connections per address
        self.open_connections = 0
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
            super()._accept_connection(protocol_factory, sock, sslcontext, server, min(backlog, ACCEPT_BATCH),
                                       *args)
            return
        for _ in range(ACCEPT_BATCH):  # the rest wait in the kernel's queue until the next turn
            try:
                conn, address = sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError:  # out of descriptors or memory: asyncio's way (pause, log, try again)
                super()._accept_connection(protocol_factory, sock, sslcontext, server, 1, *args)
                return
            host = _host(address)
            count = self.by_address.get(host, 0)
            if self.open_connections >= self.max_connections:
                OVERLOADS("connections", f"more than {self.max_connections} open connections: new ones are closed")
            elif count >= self.max_per_address and not self._proxy(host):
                OVERLOADS("address", f"more than {self.max_per_address} open connections from one address "
                                     f"({host}): its new ones are closed")
            else:
                self.by_address[host] = count + 1
                self.open_connections += 1
                try:
                    conn.setblocking(False)
                    transport = _CountedTransport(self, conn, protocol_factory(), None, {"peername": address},
                                                  server)
                except Exception as exc:
                    self.connection_closed(host)
                    conn.close()
                    self.call_exception_handler({"message": "a new connection could not be set up",
                                                 "exception": exc})
                else:
                    transport._counted_as = host
                continue
            _reset(conn)
            conn.close()

    def connection_closed(self, host: str) -> None:
        """A counted socket was closed."""
        self.open_connections -= 1
        left = self.by_address.get(host, 1) - 1
        if left > 0:
            self.by_address[host] = left
        else:
            self.by_address.pop(host, None)


class _Owing(Protocol):
    """A connection that may owe its request headers (a :class:`HeaderGate` or a :class:`GuardedH11`)."""

    _header_deadline: float | None

    def _headers_too_slow(self) -> bool: ...


class _HeaderSweep:
    """The deadlines of a loop's connections that owe their request headers, oldest first (each is
    ``seconds`` long, so the order they were set is the order they fall due), and one timer for the
    oldest. A connection whose deadline changed since (disarmed, set again) is skipped when reached."""

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float) -> None:
        self.loop = loop
        self.seconds = seconds
        self.due: collections.deque[tuple[float, _Owing]] = collections.deque()
        self.timer: asyncio.Handle | None = None

    def arm(self, protocol: _Owing) -> None:
        deadline = self.loop.time() + self.seconds
        protocol._header_deadline = deadline
        self.due.append((deadline, protocol))
        if self.timer is None:
            self.timer = self.loop.call_at(deadline, self.sweep)

    def sweep(self) -> None:
        self.timer = None
        now = self.loop.time()
        closed = 0
        while self.due:
            deadline, protocol = self.due[0]
            if protocol._header_deadline != deadline:
                self.due.popleft()  # answered, closed or set again meanwhile
                continue
            if deadline > now:
                self.timer = self.loop.call_at(deadline, self.sweep)
                return
            if closed == CLOSE_BATCH:
                self.timer = self.loop.call_soon(self.sweep)  # the players' messages first, then the next batch
                return
            self.due.popleft()
            protocol._header_deadline = None
            if protocol._headers_too_slow():
                closed += 1


_SWEEPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, _HeaderSweep]] = \
    weakref.WeakKeyDictionary()


def _sweep_for(loop: asyncio.AbstractEventLoop, seconds: float) -> _HeaderSweep:
    sweeps = _SWEEPS.get(loop)
    if sweeps is None:
        sweeps = _SWEEPS[loop] = {}
    sweep = sweeps.get(seconds)
    if sweep is None:
        sweep = sweeps[seconds] = _HeaderSweep(loop, seconds)
    return sweep


def _close_late(transport: asyncio.BaseTransport, seconds: float) -> None:
    OVERLOADS("headers", f"request headers not complete in {seconds:g} s: connections closed")
    sock = transport.get_extra_info("socket")
    if sock is not None:
        _reset(sock)
    transport.close()


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a time limit for request headers."""

    header_seconds = HEADER_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: float | None = None
        self._sweep = _sweep_for(self.loop, self.header_seconds)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._sweep.arm(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._header_deadline = None
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        # the socket is the websocket protocol's from now on (its budgets: patience.server.transport.budget)
        self._header_deadline = None
        super().handle_websocket_upgrade(event)

    def data_received(self, data: bytes) -> None:
        if self._header_deadline is None and self.conn.their_state is h11.IDLE:
            self._sweep.arm(self)  # a new request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._header_deadline = None  # the headers are in

    def _headers_too_slow(self) -> bool:
        """Close the connection if it still owes its request headers (True when closed)."""
        if self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete) \
                and not self.transport.is_closing():
            _close_late(self.transport, self.header_seconds)
            return True
        return False


class HeaderGate(asyncio.Protocol):
    """What a new connection talks to until the headers of its first request are in: it keeps the
    bytes and the deadline, and only then hands the connection to the HTTP protocol (``protocol``,
    :class:`GuardedH11`) with what it kept. A connection that never finishes its headers costs a few
    small objects, not an HTTP parser and the server's bookkeeping; ``patience serve`` hands it to
    uvicorn as its HTTP protocol."""

    header_seconds = HEADER_SECONDS
    protocol: ClassVar[type[H11Protocol]] = GuardedH11

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._made = (config, server_state, app_state, _loop)
        self._connections: set[Any] = server_state.connections  # uvicorn's, which it shuts down when it stops
        self._limit = int(config.h11_max_incomplete_event_size or 16 * 1024)
        self._kept = bytearray()
        self._transport: asyncio.Transport | None = None
        self._header_deadline: float | None = None
        self._sweep = _sweep_for(_loop or asyncio.get_event_loop(), self.header_seconds)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._connections.add(self)
        self._sweep.arm(self)

    def shutdown(self) -> None:
        """The server stops: a connection still owing its headers is closed at once."""
        if self._transport is not None:
            self._transport.close()

    def data_received(self, data: bytes) -> None:
        kept = self._kept
        start = max(0, len(kept) - 3)
        kept += data
        # the blank line that ends the headers (h11 takes a bare LF too); past the size limit the
        # parser answers for itself
        if kept.find(b"\n\r\n", start) >= 0 or kept.find(b"\n\n", start) >= 0 or len(kept) > self._limit:
            self._hand_over()

    def _hand_over(self) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        self._header_deadline = None
        config, server_state, app_state, loop = self._made
        protocol = self.protocol(config=config, server_state=server_state, app_state=app_state,  # type: ignore[call-arg]
                                 _loop=loop)
        data, self._kept = bytes(self._kept), bytearray()
        self._connections.discard(self)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        protocol.data_received(data)

    def eof_received(self) -> bool | None:
        return None  # the client is done sending before its headers were: the connection closes

    def connection_lost(self, exc: Exception | None) -> None:
        self._header_deadline = None
        self._transport = None
        self._connections.discard(self)

    def _headers_too_slow(self) -> bool:
        if self._transport is None or self._transport.is_closing():
            return False
        _close_late(self._transport, self.header_seconds)
        return True
