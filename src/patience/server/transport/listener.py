"""Time limits at the door: request headers and bodies in time, and bodies of a bounded size, before a
request reaches the app (the caps on open connections are :mod:`patience.server.transport.door`'s).

A client that opens connections and sends its headers a byte at a time (slowloris) would otherwise
hold a descriptor each for as long as it likes, until the process has none left for real players.
Here:

- :class:`HeaderGate` (the HTTP protocol ``patience serve`` hands to uvicorn) keeps a new
  connection's bytes until its request headers are in, and only then hands it to
  :class:`GuardedH11` (uvicorn's h11 protocol), which times the headers of the requests that follow
  on a kept-alive connection. Either closes a connection whose request headers are not complete in
  ``HEADER_SECONDS``. One timer per loop sweeps every late connection (a few at a time, then the
  players' messages run) instead of a timer per connection.
- :class:`GuardedH11` also times request bodies: the whole body within ``BODY_SECONDS`` of the end
  of the headers, and on average ``MIN_BODY_RATE`` bytes a second once ``BODY_GRACE`` seconds have
  passed (a body that trickles in is cut early). A body announced larger than ``MAX_BODY`` is
  answered 413 at once, without reading it; one without a length is cut, 413, once it passes it.
- A connection closed for trickling its request in is a strike against its address
  (:class:`patience.server.transport.door.GuardedLoop` then takes that address in slowly); one that
  sent nothing is closed in time too, but is no strike. Each protocol tells the loop whether its
  connection waits for its client (:func:`~patience.server.transport.door.waiting`) or is busy.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import heapq
import itertools
import weakref
from typing import Any, ClassVar, Protocol

import h11
from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
from uvicorn.protocols.http.h11_impl import H11Protocol

from patience.server.transport.door import OVERLOADS, busy, close_late, waiting

__all__ = ["BODY_GRACE", "BODY_SECONDS", "HEADER_SECONDS", "MAX_BODY", "MIN_BODY_RATE", "GuardedH11", "HeaderGate"]

HEADER_SECONDS = 10.0  # from the connection (or the end of the last answer) to the end of the request headers
BODY_SECONDS = 10.0  # from the end of the request headers to the end of its body
BODY_GRACE = 3.0  # a body's first seconds, before it must come at MIN_BODY_RATE on average
MIN_BODY_RATE = 1000.0  # bytes a second
MAX_BODY = 16 * 1024  # bytes of a request body (the forms the pages post are 8 KB at most)
CLOSE_BATCH = 64  # late connections closed at a time before the loop runs what else is ready


class _Owing(Protocol):
    """A connection that may owe its request headers (a :class:`HeaderGate` or a :class:`GuardedH11`)."""

    _header_deadline: float | None

    def _headers_too_slow(self) -> bool: ...


class _OwingBody(Protocol):
    """A connection that may owe a request body (a :class:`HeaderGate` or a :class:`GuardedH11`)."""

    _body_start: float | None  # when the headers were in, while the body is still to come

    def _body_deadline(self) -> float: ...

    def _body_too_slow(self) -> bool: ...


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


class _BodySweep:
    """The body deadlines of a loop's connections, earliest first, and one timer for the earliest. A
    deadline moves later as the body comes in (up to the whole body's): when reached, it is put back
    where it is now, or its connection is closed. An entry whose body is over (in, or its connection
    closed, or another request's begun) is skipped when reached."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.due: list[tuple[float, int, float, _OwingBody]] = []  # (deadline, order, body's start, protocol)
        self.order = itertools.count()
        self.timer: asyncio.TimerHandle | None = None

    def arm(self, protocol: _OwingBody, deadline: float, start: float) -> None:
        heapq.heappush(self.due, (deadline, next(self.order), start, protocol))
        if self.timer is None or deadline < self.timer.when():
            if self.timer is not None:
                self.timer.cancel()
            self.timer = self.loop.call_at(deadline, self.sweep)

    def sweep(self) -> None:
        self.timer = None
        now = self.loop.time()
        closed = 0
        while self.due:
            deadline, _, start, protocol = self.due[0]
            if deadline > now:
                self.timer = self.loop.call_at(deadline, self.sweep)
                return
            if closed == CLOSE_BATCH:
                self.timer = self.loop.call_at(now, self.sweep)  # the players' messages first, then the next batch
                return
            heapq.heappop(self.due)
            if protocol._body_start != start:
                continue  # that body is over
            later = protocol._body_deadline()
            if later > now:
                heapq.heappush(self.due, (later, next(self.order), start, protocol))
            elif protocol._body_too_slow():
                closed += 1


_BODIES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _BodySweep] = weakref.WeakKeyDictionary()


def _bodies_for(loop: asyncio.AbstractEventLoop) -> _BodySweep:
    sweep = _BODIES.get(loop)
    if sweep is None:
        sweep = _BODIES[loop] = _BodySweep(loop)
    return sweep


def _end_of_headers(kept: bytearray, start: int) -> int:
    """Where the bytes after the blank line that ends the headers begin (h11 takes a bare LF too), or -1."""
    ends = [at + 3 for at in (kept.find(b"\n\r\n", start),) if at >= 0]
    ends += [at + 2 for at in (kept.find(b"\n\n", start),) if at >= 0]
    return min(ends, default=-1)


def _body_to_keep(head: bytes, max_body: int) -> int:
    """How many bytes of body to keep before handing a request on whose headers are ``head``: its
    announced length, when it is one plain length of at most ``max_body``; 0 when there is none to
    wait for (no body, a chunked one, a 100-continue, one over the cap, anything unusual: the
    HTTP parser makes of it what it is)."""
    length = 0
    for line in head.split(b"\n")[1:]:
        name, colon, value = line.partition(b":")
        name = name.strip().lower()
        if not colon or name not in (b"content-length", b"transfer-encoding", b"expect"):
            continue
        value = value.strip()
        if name != b"content-length" or length or not value.isdigit():
            return 0
        length = int(value)
    return length if length <= max_body else 0


def _body_of(request: h11.Request) -> tuple[bool, int | None]:
    """Whether a body comes with the request, and its length if announced."""
    for name, value in request.headers:
        if name == b"content-length":
            return int(value) > 0, int(value)  # h11 has checked it: digits, one value
        if name == b"transfer-encoding":
            return True, None  # chunked (h11 refuses any other)
    return False, None


class _Watched(h11.Connection):
    """The server side of an h11 connection that tells its protocol of each request, each piece of
    a request body and each end of a request, as the protocol reads them."""

    def __init__(self, protocol: GuardedH11, max_incomplete_event_size: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size)
        self._protocol = weakref.ref(protocol)  # no cycle: the protocol goes with its last reference

    def next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        event = super().next_event()
        if isinstance(event, h11.Request | h11.Data | h11.EndOfMessage):
            protocol = self._protocol()
            if protocol is not None:
                protocol._seen(event)
        return event


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with time limits for request headers and bodies and a size cap for
    bodies; it tells its loop whether the connection waits for its client (see :func:`waiting`)."""

    header_seconds = HEADER_SECONDS
    body_seconds = BODY_SECONDS
    body_grace = BODY_GRACE
    min_body_rate = MIN_BODY_RATE
    max_body = MAX_BODY

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        size = self.config.h11_max_incomplete_event_size
        self.conn = _Watched(self, size if size is not None else DEFAULT_MAX_INCOMPLETE_EVENT_SIZE)
        self._app = self.app
        self._header_deadline: float | None = None
        self._sweep = _sweep_for(self.loop, self.header_seconds)
        self._bodies = _bodies_for(self.loop)
        self._body_start: float | None = None  # when the headers of a request whose body is still to come were in
        self._body_bytes = 0
        self._body_over = False  # past max_body without a length announced: refused once the events are read

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._sweep.arm(self)

    def partial(self) -> bool:
        """Has the client sent part of a request (and not all of it): a body still to come, or the
        first bytes of the next request's headers?"""
        return self._body_start is not None or bool(self.conn.trailing_data[0])

    def connection_lost(self, exc: Exception | None) -> None:
        self._header_deadline = None
        self._body_start = None
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        # the socket is the websocket protocol's from now on (its budgets: patience.server.transport.budget)
        self._header_deadline = self._body_start = None
        busy(self.transport)
        super().handle_websocket_upgrade(event)

    def data_received(self, data: bytes) -> None:
        if self._header_deadline is None and self.conn.their_state is h11.IDLE:
            self._sweep.arm(self)  # a new request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._header_deadline = None  # the headers are in
        if self._body_over:
            self._refuse_body()

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            waiting(self.transport)  # for the body still to come, or the next request
        super().on_response_complete()

    def _seen(self, event: h11.Request | h11.Data | h11.EndOfMessage) -> None:
        """What the h11 connection read, before uvicorn acts on it."""
        if isinstance(event, h11.Data):
            self._body_bytes += len(event.data)
            self._body_over = self._body_over or self._body_bytes > self.max_body
        elif isinstance(event, h11.Request):
            self._body_start, self._body_bytes, self._body_over = None, 0, False
            body, length = _body_of(event)
            self.app = self._too_large if length is not None and length > self.max_body else self._app
            if body:  # to come: timed from now
                self._body_start = start = self.loop.time()
                self._bodies.arm(self, start + min(self.body_grace, self.body_seconds), start)
            else:
                busy(self.transport)
        else:  # the end of the request: the server works on it (or it has answered and waits for the next)
            self._body_start = None
            if self.conn.our_state is h11.DONE:
                waiting(self.transport)
            else:
                busy(self.transport)

    def _body_deadline(self) -> float:
        """When the body still to come must be in: the whole of it within ``body_seconds`` of the
        headers, and ``min_body_rate`` bytes a second on average after ``body_grace`` seconds."""
        start = self._body_start if self._body_start is not None else self.loop.time()
        return start + min(self.body_seconds, self.body_grace + self._body_bytes / self.min_body_rate)

    def _body_too_slow(self) -> bool:
        """Close the connection, whose body is late (True when closed)."""
        self._body_start = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return False
        close_late(self.transport, "bodies", f"request bodies not complete in {self.body_seconds:g} s, or under "
                                              f"{self.min_body_rate:g} bytes a second: connections closed")
        return True

    def _too_large_answer(self) -> tuple[list[tuple[bytes, bytes]], bytes]:
        OVERLOADS("too large", f"request bodies over {self.max_body} bytes: answered 413, connections closed")
        body = f"the request body is over {self.max_body} bytes\n".encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        return headers, body

    async def _too_large(self, scope: Any, receive: Any, send: Any) -> None:
        """The app of a request whose body is announced larger than ``max_body``: 413, the body unread."""
        headers, body = self._too_large_answer()
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _refuse_body(self) -> None:
        """A body with no length announced has passed ``max_body``: 413 if the app has not answered yet
        (what it says from now on goes nowhere, it reads no more), and the connection is closed."""
        self._body_over, self._body_start = False, None
        if self.transport.is_closing():
            return
        headers, body = self._too_large_answer()
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            cycle.disconnected = True
            cycle.message_event.set()
            with contextlib.suppress(h11.LocalProtocolError):
                self.transport.write(self.conn.send(h11.Response(status_code=413, headers=headers,
                                                                 reason=b"Content Too Large")) or b"")
                self.transport.write(self.conn.send(h11.Data(data=body)) or b"")
                self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
        self.transport.close()

    def _headers_too_slow(self) -> bool:
        """Close the connection if it still owes its request headers (True when closed)."""
        if self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete) \
                and not self.transport.is_closing():
            close_late(self.transport, "headers",
                        f"request headers not complete in {self.header_seconds:g} s: connections closed",
                        trickled=self.partial())
            return True
        return False


class HeaderGate(asyncio.Protocol):
    """What a new connection talks to until its first request is in (its headers, and its body when
    it announces one of at most ``max_body`` bytes): it keeps the bytes and the deadlines, and only
    then hands the connection to the HTTP protocol (``protocol``, :class:`GuardedH11`) with what it
    kept. A connection that never finishes its request costs a few small objects, not an HTTP parser,
    a task of the app and the server's bookkeeping; ``patience serve`` hands it to uvicorn as its HTTP
    protocol."""

    header_seconds = HEADER_SECONDS
    protocol: ClassVar[type[GuardedH11]] = GuardedH11

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._made = (config, server_state, app_state, _loop)
        self._connections: set[Any] = server_state.connections  # uvicorn's, which it shuts down when it stops
        self._limit = int(config.h11_max_incomplete_event_size or 16 * 1024)
        self._kept = bytearray()
        self._transport: asyncio.Transport | None = None
        self._header_deadline: float | None = None
        self._loop = _loop or asyncio.get_event_loop()
        self._sweep = _sweep_for(self._loop, self.header_seconds)
        self._body_at = -1  # where the body begins in what is kept, once the headers are in
        self._body_length = 0
        self._body_start: float | None = None

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
        if self._body_at < 0:
            at = _end_of_headers(kept, start)
            if at < 0:
                if len(kept) > self._limit:
                    self._hand_over()  # past the size limit the parser answers for itself
                return
            self._header_deadline = None
            self._body_at, self._body_length = at, _body_to_keep(bytes(kept[:at]), self.protocol.max_body)
            if len(kept) - at < self._body_length:  # the body is timed from now
                self._body_start = now = self._loop.time()
                _bodies_for(self._loop).arm(self, now + min(self.protocol.body_grace, self.protocol.body_seconds),
                                            now)
                return
        elif len(kept) - self._body_at < self._body_length:
            return
        self._hand_over()

    def _body_deadline(self) -> float:
        guard = self.protocol
        start = self._body_start if self._body_start is not None else self._loop.time()
        got = len(self._kept) - self._body_at
        return start + min(guard.body_seconds, guard.body_grace + got / guard.min_body_rate)

    def _body_too_slow(self) -> bool:
        self._body_start = None
        if self._transport is None or self._transport.is_closing():
            return False
        guard = self.protocol
        close_late(self._transport, "bodies", f"request bodies not complete in {guard.body_seconds:g} s, or under "
                                               f"{guard.min_body_rate:g} bytes a second: connections closed")
        return True

    def _hand_over(self) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        self._header_deadline = self._body_start = None
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
        self._header_deadline = self._body_start = None
        self._transport = None
        self._connections.discard(self)

    def _headers_too_slow(self) -> bool:
        if self._transport is None or self._transport.is_closing():
            return False
        close_late(self._transport, "headers",
                    f"request headers not complete in {self.header_seconds:g} s: connections closed",
                    trickled=self.partial())
        return True

    def partial(self) -> bool:
        """Has the client sent part of its request (and not all of it)?"""
        return bool(self._kept)
