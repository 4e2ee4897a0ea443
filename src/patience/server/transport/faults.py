"""A client's faults in the log: counted in one line per kind (then at most one a minute, with the
count), never a traceback each, so that nobody can fill the disk or drown the lines that matter by
sending what the server refuses anyway.

- :class:`CountCutShort` (a middleware of the app): a request whose client left before its body
  was in (or whose connection the door closed, its body late or too large: see
  :mod:`patience.server.transport.listener`) ends the app's handler with Starlette's
  ``ClientDisconnect``, which uvicorn would log with a traceback.
- :func:`counting_client_faults` (while the app runs): uvicorn logs a traceback for every
  websocket text frame that is not UTF-8 (and closes the socket with 1007, as it should), and a
  line for every request that is not HTTP (answered 400) and every upgrade to something other than
  a websocket. And while the bus (Redis) cannot be reached, every loop of the arena that uses it
  (the pairer's waves, the leases, the bus's reader, …) fails twice a second: those are counted in
  one line a minute too, not a traceback each.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from patience.server.bus import BusError
from patience.server.transport.door import OVERLOADS

__all__ = ["CountCutShort", "counting_client_faults"]


class CountCutShort:
    """Counts the requests whose body was cut short instead of failing them with a traceback: there
    is nobody left to answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            OVERLOADS("cut short", "request bodies cut short (the client left, or its connection was closed)")


# uvicorn's lines about a client's requests, as it words them: (kind, what the overload line says)
_UVICORN_LINES = {
    "Invalid HTTP request received.": ("not http", "requests that are not HTTP: answered 400"),
    "Unsupported upgrade request.": ("bad upgrade", "upgrades to something other than a websocket: not upgraded"),
}


class _ClientFaults(logging.Filter):
    """Takes uvicorn's lines (and tracebacks) about a client's faults out of the log, and counts them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info is not None and isinstance(record.exc_info[1], UnicodeDecodeError):
            OVERLOADS("not utf-8", "websocket text frames that are not UTF-8: their sockets closed (1007)")
            return False
        said = _UVICORN_LINES.get(record.msg) if isinstance(record.msg, str) else None
        if said is not None:
            OVERLOADS(*said)
            return False
        return True


_BUS_AWAY = (BusError, ConnectionRefusedError)
# Redis's own (redis.exceptions), told by name: a process with no Redis bus never loads the client library
_REDIS_AWAY = frozenset({"ConnectionError", "TimeoutError"})


def _bus_away(exc: BaseException | None) -> BaseException | None:
    """The error (in ``exc`` or what caused it) that says the bus cannot be reached, if any."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, _BUS_AWAY) or any(c.__name__ in _REDIS_AWAY and c.__module__ == "redis.exceptions"
                                             for c in type(exc).__mro__):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


class _BusFaults(logging.Filter):
    """Counts the server's tracebacks whose cause is a bus that cannot be reached, in one line a minute."""

    def filter(self, record: logging.LogRecord) -> bool:
        away = _bus_away(record.exc_info[1]) if record.exc_info is not None else None
        if away is None:
            return True
        said = str(away).strip().splitlines()
        OVERLOADS("bus away", f"the bus (Redis) cannot be reached: {said[0][:160] if said else type(away).__name__}; "
                              "the arena waits for it (pairing, leases, other processes' messages)")
        return False


@contextlib.contextmanager
def counting_client_faults() -> Iterator[None]:
    """While the block runs, uvicorn's lines about a client's faults, and the server's about a bus that
    cannot be reached, are counted, not written."""
    loggers = [(logging.getLogger("uvicorn.error"), _ClientFaults()), (logging.getLogger("patience.server"),
                                                                        _BusFaults())]
    for logger, only in loggers:
        logger.addFilter(only)
    try:
        yield
    finally:
        for logger, only in loggers:
            logger.removeFilter(only)
