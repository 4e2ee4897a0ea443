"""The web app: its routes (listed once, in :func:`create_app`), the pages, the HTTP API and the play socket.

Pages and statistics are plain HTTP; play (solo games and duels) goes over one websocket per page
(see :mod:`patience.server.protocol`). A browser is known by a random id in an HttpOnly cookie;
its games and statistics are kept in the database under that id, and count for the account it
signs up with (:mod:`patience.server.accounts`). Duels live in :mod:`patience.server.arena`,
their tables and pages' data in :mod:`patience.server.league`, the arena's pages in
:mod:`patience.server.pages`.

>>> [route.path for route in create_app(database_url="sqlite://").routes]  # doctest: +NORMALIZE_WHITESPACE
['/', '/play', '/duel', '/account', '/profile', '/leaderboard', '/match', '/matches', '/account/signup',
 '/account/signin', '/account/signout', '/account/name', '/api/games', '/api/stats', '/api/me', '/api/leaderboard',
 '/api/profile/{user}', '/api/matches', '/api/matches/{id}', '/healthz', '/ws', '/static']
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from patience.games import GAMES
from patience.options import describe_options
from patience.server import league, pages
from patience.server.accounts import Accounts, current_user, me_api, name_post, signin_post, signout_post, signup_post
from patience.server.arena import Arena
from patience.server.dealstock import DealStock
from patience.server.hub import Connection, Hub
from patience.server.protocol import ProtocolError, decode
from patience.server.store import Store, sqlite_url

__all__ = ["COOKIE", "WEB_DIR", "create_app", "default_data_dir"]

log = logging.getLogger("patience.server")

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
COOKIE = "patience_id"
DB_FILE = "patience.sqlite3"
_ID = re.compile(r"^[A-Za-z0-9_-]{16,40}$")
_YEAR = 365 * 24 * 3600

_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def default_data_dir() -> Path:
    """Where a person's data lives by default: the platform's per-user data directory."""
    import os
    import sys

    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "patience-arena"


def create_app(
    data_dir: str | Path | None = None,
    *,
    database_url: str | None = None,
    now: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
    tick_seconds: float = 0.5,
    save_seconds: float = 5.0,
    password_hasher: Any = None,
    deal_stock: int = 0,
) -> Starlette:
    """The app, storing in ``database_url`` (default: an SQLite file in ``data_dir``).

    ``now`` is the clock of games and matches (monotonic); ``wall`` the clock, in seconds since
    the epoch, of what is kept across restarts: failed sign-ins and open challenge links.
    ``password_hasher`` is an ``argon2.PasswordHasher`` (default: argon2-cffi's parameters);
    ``deal_stock`` is how many secret deals proved winnable the server keeps ready per duel variant,
    proved in the background by the solvers (0: every duel is dealt from a fresh secret key, not
    proved winnable; see :mod:`patience.server.dealstock`)."""
    if database_url is None:
        folder = Path(data_dir) if data_dir is not None else default_data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        database_url = sqlite_url(folder / DB_FILE)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = Store(database_url)
        await anyio.to_thread.run_sync(store.migrate)
        hub = Hub(store, now=now)
        accounts = await anyio.to_thread.run_sync(lambda: Accounts(store, now=wall, hasher=password_hasher))
        deals = DealStock(store, deal_stock)
        arena = Arena(store, now=now, wall=wall, deals=deals)
        hub.arena = arena
        await arena.restore()
        app.state.store = store
        app.state.hub = hub
        app.state.accounts = accounts
        app.state.arena = arena
        gc_before = _quiet_gc()
        tasks = [asyncio.create_task(hub.run_clock(tick_seconds)), asyncio.create_task(hub.run_saver(save_seconds)),
                 asyncio.create_task(_collect_garbage(FULL_GC_SECONDS)),
                 asyncio.create_task(arena.writer.run()), asyncio.create_task(arena.run_clock(tick_seconds)),
                 asyncio.create_task(deals.run())]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await arena.writer.flush()
            hub.tick()
            await hub.save()
            store.close()
            gc.unfreeze()
            gc.set_threshold(*gc_before)

    routes = [
        Route("/", start_page),
        Route("/play", play_page),
        Route("/duel", pages.page_of("duel")),
        Route("/account", pages.page_of("account")),
        Route("/profile", pages.page_of("profile")),
        Route("/leaderboard", pages.page_of("leaderboard")),
        Route("/match", pages.page_of("match")),
        Route("/matches", pages.matches_page),
        Route("/account/signup", signup_post, methods=["POST"]),
        Route("/account/signin", signin_post, methods=["POST"]),
        Route("/account/signout", signout_post, methods=["POST"]),
        Route("/account/name", name_post, methods=["POST"]),
        Route("/api/games", games_api),
        Route("/api/stats", stats_api),
        Route("/api/me", me_api),
        Route("/api/leaderboard", league.leaderboard_api),
        Route("/api/profile/{user}", league.profile_api),
        Route("/api/matches", league.matches_api),
        Route("/api/matches/{id}", league.match_api),
        Route("/healthz", health),
        WebSocketRoute("/ws", play_socket),
        Mount("/static", StaticFiles(directory=WEB_DIR), name="static"),
    ]
    middleware = [Middleware(HeadersMiddleware), Middleware(GZipMiddleware, minimum_size=600)]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


# -- garbage collection --------------------------------------------------------------------------

FULL_GC_SECONDS = 600.0


def _quiet_gc() -> tuple[int, int, int]:
    """Keep full garbage collections out of the play path; return the thresholds to restore.

    A full collection looks at every live object, and with hundreds of games (their ledgers and
    logs) and connections that stops the event loop for a few hundred milliseconds, at moments
    chosen by allocation counts. Objects that exist at start are frozen (never looked at again),
    allocations trigger only the cheap young collections, and :func:`_collect_garbage` does the
    full one every few minutes. Reference counting frees nearly everything anyway.
    """
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(before[0], before[1], 1_000_000)
    return before


async def _collect_garbage(every: float) -> None:
    while True:
        await asyncio.sleep(every)
        gc.collect()


# -- the browser's id ----------------------------------------------------------------------------


def browser_id(conn: HTTPConnection) -> tuple[str, bool]:
    """The browser's id from its cookie, or a new one (then ``True``: the cookie must be set)."""
    known = conn.cookies.get(COOKIE, "")
    if _ID.match(known):
        return known, False
    return secrets.token_urlsafe(18), True


def _with_cookie(response: Response, browser: str, new: bool) -> Response:
    if new:
        response.set_cookie(COOKIE, browser, max_age=10 * _YEAR, httponly=True, samesite="lax", path="/")
    return response


# -- pages and the HTTP API ----------------------------------------------------------------------


async def start_page(request: Request) -> Response:
    return _page(request, "index.html")


async def play_page(request: Request) -> Response:
    return _page(request, "play.html")


def _page(request: Request, name: str) -> Response:
    browser, new = browser_id(request)
    response = FileResponse(WEB_DIR / name, media_type="text/html; charset=utf-8")
    response.headers["Content-Security-Policy"] = _CSP
    response.headers["Cache-Control"] = "no-cache"
    return _with_cookie(response, browser, new)


async def games_api(request: Request) -> Response:
    """The games: id, names, named variants and every option with its default and meaning."""
    games = []
    for cls in GAMES.values():
        info = cls.INFO
        games.append({
            "id": info.id,
            "names": dict(info.names),
            "variants": {name: dict(opts) for name, opts in (getattr(info, "variants", {}) or {}).items()},
            "options": [{"name": name, "default": default, "doc": doc}
                        for name, default, doc in describe_options(info.options)],
        })
    return JSONResponse({"games": games})


async def stats_api(request: Request) -> Response:
    """This browser's statistics per game, and its games still going on."""
    browser, new = browser_id(request)
    hub: Hub = request.app.state.hub
    store: Store = request.app.state.store
    await hub.save()  # a game that just ended counts at once
    stats = await anyio.to_thread.run_sync(store.stats, browser)
    unfinished = await anyio.to_thread.run_sync(store.unfinished, browser)
    body: dict[str, Any] = {
        "stats": {game: figures.to_dict() for game, figures in stats.items()},
        "unfinished": [{"id": g.id, "game": g.game, "variant": g.variant, "seed": g.seed, "moves": g.moves,
                        "score": g.score, "ms": g.ms} for g in unfinished],
    }
    response = JSONResponse(body, headers={"Cache-Control": "no-store"})
    return _with_cookie(response, browser, new)


async def health(request: Request) -> Response:
    return PlainTextResponse("ok")


# -- the play socket -----------------------------------------------------------------------------


async def play_socket(ws: WebSocket) -> None:
    """One page's connection: read messages, hand valid ones to the hub, answer the rest with ``err``."""
    if not _same_origin(ws):
        await ws.close(code=1008)
        return
    await ws.accept()
    hub: Hub = ws.app.state.hub
    browser, _ = browser_id(ws)
    closing = asyncio.Event()
    conn = hub.connect(browser, on_overflow=closing.set)
    conn.user = await current_user(ws)
    sender = asyncio.create_task(_send_all(ws, conn, closing))
    receiver = asyncio.create_task(_receive_all(ws, conn, hub))
    stopper = asyncio.create_task(closing.wait())
    try:
        await asyncio.wait({receiver, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (receiver, stopper):
            task.cancel()
        hub.disconnect(conn)
        conn.outbox.put_nowait(None)
        with contextlib.suppress(Exception):
            await sender
        with contextlib.suppress(Exception):
            await ws.close()


async def _receive_all(ws: WebSocket, conn: Connection, hub: Hub) -> None:
    while True:
        message: Message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return
        raw = message.get("text")
        if raw is None:
            raw = message.get("bytes") or b""
        try:
            intent = decode(raw)
        except ProtocolError as exc:
            conn.error(exc.code, str(exc))
            continue
        try:
            await hub.handle(conn, intent)
        except Exception:  # the connection and the game outlive a fault in one message
            log.exception("message failed: %r", intent)
            conn.error("server_error", "the server could not handle that message")


async def _send_all(ws: WebSocket, conn: Connection, closing: asyncio.Event) -> None:
    try:
        while True:
            data = await conn.outbox.get()
            if data is None:
                break
            await ws.send_text(data.decode())
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass
    finally:
        closing.set()


def _same_origin(ws: WebSocket) -> bool:
    """A page of another site must not play (or read the games) with this browser's cookie."""
    origin = ws.headers.get("origin")
    if not origin:
        return True  # not a browser page: programs and tests
    return urlsplit(origin).netloc.lower() == ws.headers.get("host", "").lower()


# -- headers -------------------------------------------------------------------------------------


class HeadersMiddleware:
    """Headers every HTTP answer carries: no sniffing, no referrer leaks, static files revalidated."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"same-origin"))
                if static:
                    headers.append((b"cache-control", b"no-cache"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
