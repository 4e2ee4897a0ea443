"""The play socket: one websocket per page, its messages decoded and handed to the services.

The transport knows no rule: it reads frames, decodes them (:mod:`patience.server.protocol`),
hands each to the arena (duels) or the solo games, and writes what the services put into the
page's :class:`~patience.server.live.Connection` back to the socket.

No socket can slow the others: every message waits for a token of its socket's bucket and of its
address's (:mod:`patience.server.transport.budget`), the loop lets the other sockets run after
each message, a browser and an address start a bounded number of games a minute, and a page that
does not read what it is sent is let go (its outbox is bounded, a send that does not finish in
``SEND_SECONDS`` ends the socket).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any
from urllib.parse import urlsplit

from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect

import patience.server.figures as figures
from patience.server.arena import Arena
from patience.server.identity import SESSION_COOKIE, browser_id, client_address, current_user, sessions_of
from patience.server.live import Connection
from patience.server.logs import USER
from patience.server.protocol import NewIntent, ProtocolError, decode
from patience.server.solo.hub import Hub
from patience.server.transport.budget import MAX_WAIT, Budgets, TokenBucket

__all__ = ["Router", "play_socket"]

log = logging.getLogger("patience.server")

SEND_SECONDS = 10.0  # a page that takes longer than this to take one message is let go


class Router:
    """Hands each message of a page to the service it is for: a page shows a duel or a solo game."""

    def __init__(self, hub: Hub, arena: Arena, budgets: Budgets | None = None) -> None:
        self.hub = hub
        self.arena = arena
        self.budgets = budgets or Budgets()

    async def handle(self, conn: Connection, message: Any) -> None:
        if self.arena.takes(conn, message):
            self.hub.detach(conn)  # a page shows one thing: a duel, or a solo game
            await self.arena.handle(conn, message)
        else:
            await self.hub.handle(conn, message)

    def disconnect(self, conn: Connection) -> None:
        self.hub.disconnect(conn)
        self.arena.disconnect(conn)


async def play_socket(ws: WebSocket) -> None:
    """One page's connection: read messages, hand valid ones to the :class:`Router` (which picks the solo
    games or the arena), answer the rest with ``err``."""
    if not _same_origin(ws):
        await ws.close(code=1008)
        return
    await ws.accept()
    router: Router = ws.app.state.router
    browser, _ = browser_id(ws)
    closing = asyncio.Event()
    conn = Connection(browser, on_overflow=closing.set)
    conn.user = await current_user(ws)
    if conn.user is not None:
        USER.set(conn.user.id)  # the log lines of this socket's tasks name the account
    unwatch = sessions_of(ws).watch(ws.cookies.get(SESSION_COOKIE), closing.set) if conn.user else None
    address = client_address(ws)
    conn.address = address
    shared = router.budgets.opened(address)
    sender = asyncio.create_task(_send_all(ws, conn, closing))
    receiver = asyncio.create_task(_receive_all(ws, conn, router, router.budgets.socket(), shared, address))
    stopper = asyncio.create_task(closing.wait())
    try:
        await asyncio.wait({receiver, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        router.budgets.closed(address)
        if unwatch is not None:
            unwatch()
        for task in (receiver, stopper):
            task.cancel()
        router.disconnect(conn)
        conn.outbox.put_nowait(None)
        with contextlib.suppress(Exception):
            await sender
        with contextlib.suppress(Exception):
            await ws.close()


async def _receive_all(ws: WebSocket, conn: Connection, router: Router, own: TokenBucket,
                       shared: TokenBucket, address: str) -> None:
    while True:
        message: Message = await ws.receive()
        arrived = time.perf_counter()
        if message["type"] == "websocket.disconnect":
            return
        wait = max(own.take(), shared.take())
        if wait > MAX_WAIT:
            conn.error("too_many", "too many messages: the connection is closed")
            return
        if wait:
            await asyncio.sleep(wait)  # the sender's next frames wait in its own buffers meanwhile
        raw = message.get("text")
        if raw is None:
            raw = message.get("bytes") or b""
        try:
            intent = decode(raw)
        except ProtocolError as exc:
            conn.error(exc.code, str(exc), exc.ack)
            continue
        if isinstance(intent, NewIntent):
            refused = router.budgets.new_game(conn.browser, address)
            if refused is not None:
                conn.error("too_many_games", refused)
                continue
        try:
            await router.handle(conn, intent)
        except Exception:  # the connection and the game outlive a fault in one message
            log.exception("message failed: %r", intent)
            conn.error("server_error", "the server could not handle that message")
        figures.INTENT_SECONDS.labels(type(intent).__name__.removesuffix("Intent").lower()).observe(
            time.perf_counter() - arrived)
        await asyncio.sleep(0)  # the other sockets' messages are read before this one's next


async def _send_all(ws: WebSocket, conn: Connection, closing: asyncio.Event) -> None:
    try:
        while True:
            data = await conn.outbox.get()
            if data is None:
                break
            conn.queued_bytes -= len(data)
            async with asyncio.timeout(SEND_SECONDS):
                await ws.send_text(data.decode())
    except (WebSocketDisconnect, RuntimeError, OSError, TimeoutError):
        pass
    finally:
        closing.set()


def _same_origin(ws: WebSocket) -> bool:
    """A page of another site must not play (or read the games) with this browser's cookie."""
    origin = ws.headers.get("origin")
    if not origin:
        return True  # not a browser page: programs and tests
    return urlsplit(origin).netloc.lower() == ws.headers.get("host", "").lower()
