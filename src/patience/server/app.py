"""The web app, wired in one place: its routes, the services it makes and ties together, starts and stops,
its middleware.

The server is rooms that only look down (see docs/scaling.md):

- ``web/`` — HTTP: the pages, the account forms, the JSON API; ``transport/`` — the door (caps on
  connections, time limits) and the play socket (one websocket per page: messages in, routed to the
  solo games or the arena, the services' answers out);
- ``solo/`` — solo games (versions, acks, the clock, saving, hints, fair play); ``arena/`` — duels (the
  lobby and its pools, challenges, live matches and their move log, the private deal stock);
  ``accounts/`` — sign-up and sign-in; ``live`` — what both kinds of play share (a game's clock,
  a player's connection); ``analysis`` — finished games analysed by worker processes from a queue in the database;
- ``bus/`` — what the processes of one arena share (in memory, or Redis); ``storage/`` — the
  database (SQLAlchemy: the schema, the engine, each room's statements, the Alembic migrations);
- ``protocol``, ``explain`` and ``identity`` — the messages, the reasons and who a request comes from,
  which every room may use.

Each service gets what it needs when it is made: a room declares what it needs of another as a protocol
class (:class:`patience.server.arena.apart.Resumes`, the arena's rooms'), and where a lower room must tell a
higher one (the hub: a game of Play now ended; fair play: an account marked), the two share a
:class:`patience.server.signals.Signal` made here first: the lower says, the higher hears.

>>> [route.path for route in create_app(database_url="sqlite://").routes]  # doctest: +NORMALIZE_WHITESPACE
['/', '/play', '/duel', '/account', '/profile', '/leaderboard', '/daily', '/playnow', '/tournament', '/match',
 '/matches', '/mod', '/account/signup', '/account/signin', '/account/signout', '/account/name',
 '/account/password', '/account/sessions/end', '/account/email', '/account/close', '/account/forgot',
 '/account/reset/check', '/account/reset', '/account/export', '/api/account', '/api/games', '/api/games/{id}/replay',
 '/api/analysis/{kind}/{id}', '/api/analysis/{kind}/{id}', '/api/stats', '/api/me',
 '/api/leaderboard', '/api/profile/{user}', '/api/matches', '/api/matches/{id}', '/api/daily/mine',
 '/api/daily/{game}', '/api/daily/{game}/start', '/api/daily/{game}/{day}/record',
 '/api/daily/{game}/{day}/replay/{id}', '/api/playnow', '/api/playnow/seen',
 '/api/playnow/{game}/{variant}/{limit}', '/api/tournaments', '/api/tournaments', '/api/tournaments/{id}',
 '/api/report', '/api/mod/queue', '/api/mod/account/{id}', '/api/mod/account/{id}', '/healthz', '/sw.js',
 '/manifest.webmanifest', '/ws', '/static']
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from patience.server.accounts import Accounts
from patience.server.analysis import Analyst
from patience.server.arena import Arena
from patience.server.arena.daily import DailyDeals
from patience.server.arena.dealstock import DealStock
from patience.server.bus import make_bus, stop_tasks
from patience.server.logs import LogContext
from patience.server.signals import Signal
from patience.server.solo import Hub
from patience.server.solo.fairplay import FairPlay
from patience.server.storage.store import ArenaLock, Store, sqlite_url
from patience.server.storage.writer import GroupWriter
from patience.server.transport.faults import CountCutShort, counting_client_faults
from patience.server.transport.socket import Router, play_socket
from patience.server.web import accounts as accounts_web
from patience.server.web import analysis as analysis_web
from patience.server.web import api, daily, install, pages, playnow, tournaments
from patience.server.web import fairplay as fairplay_web
from patience.server.web.edge import TextGuard
from patience.server.web.headers import HeadersMiddleware

__all__ = ["DB_FILE", "app_from_env", "create_app", "default_data_dir"]

log = logging.getLogger("patience.server")

DB_FILE = "patience.sqlite3"


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
    save_seconds: float = 30.0,
    password_hasher: Any = None,
    deal_stock: int = 0,
    redis_url: str | None = None,
    node: str | None = None,
    smtp_url: str | None = None,
    smtp_from: str | None = None,
    public_url: str | None = None,
    analysis_workers: int = 0,
) -> Starlette:
    """The app, storing in ``database_url`` (default: an SQLite file in ``data_dir``).

    ``now`` is the clock of games and matches (monotonic); ``wall`` the clock, in seconds since
    the epoch, of what is kept across restarts: failed sign-ins and open challenge links.
    ``save_seconds`` is how often the record of each game being played is rewritten whole (every action
    is in the database as a row of its own before it is acknowledged; a game's first and last actions
    write it whole at once). ``password_hasher`` is an ``argon2.PasswordHasher`` (default: the OWASP
    parameters, 19 MiB);
    ``deal_stock`` is how many secret deals proved winnable the server keeps ready per duel variant,
    proved in the background by the solvers (0: every duel is dealt from a fresh secret key, not
    proved winnable; see :mod:`patience.server.arena.dealstock`). With ``redis_url``, the process
    joins the arena of every process on that Redis (and the same database), as ``node`` (a name
    made from the host and process id by default); without, it is an arena of its own. With ``smtp_url``
    (see :class:`patience.server.mail.Mailer`), accounts may keep an e-mail address and ask for a
    password reset link, sent from ``smtp_from`` and pointing at ``public_url`` (the site's address as
    its players reach it). ``analysis_workers`` worker processes analyse finished games from the shared queue
    (:mod:`patience.server.analysis`; 0: none here, the jobs wait for a process that has some)."""
    mailer = None
    if smtp_url:
        from patience.server.mail import Mailer

        mailer = Mailer.from_url(smtp_url, smtp_from)
        if not public_url:
            raise ValueError("a server that sends mail needs the site's public_url for the links")
    if database_url is None:
        folder = Path(data_dir) if data_dir is not None else default_data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        database_url = sqlite_url(folder / DB_FILE)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            stack.enter_context(counting_client_faults())  # a line a minute, not a traceback each
            bus = make_bus(redis_url, node)
            stack.push_async_callback(bus.close)
            await bus.start()
            # an arena of its own: the database is this process's alone (an SQLite file is then held
            # exclusively, its log's index in memory: see patience.server.storage.store.make_engine)
            store = Store(database_url, sole=not bus.shared)
            stack.callback(store.close)
            if not bus.shared:
                lock = ArenaLock(store)
                await anyio.to_thread.run_sync(lock.acquire)
                stack.callback(lock.release)
            await anyio.to_thread.run_sync(store.migrate)
            if not bus.shared and store.engine.dialect.name == "sqlite":
                await _answer_backups(stack, store, lock)  # patience backup while it runs
            writer = GroupWriter(store)  # one group commit for the moves of solo games and duels
            accounts = await anyio.to_thread.run_sync(
                lambda: Accounts(store, bus=bus, now=wall, hasher=password_hasher, mailer=mailer,
                                 public_url=public_url or ""))
            await accounts.start()
            deals = DealStock(store, deal_stock)
            # words a room says and the arena above hears: a game of Play now ended (its match may be
            # complete), an account marked (what it had open closes, on every process)
            game_ends: Signal[str] = Signal("game_ends")
            marks: Signal[tuple[str, str]] = Signal("marks")
            fairplay = FairPlay(store, states=marks)  # the evidence of rated games, analysed off the event loop
            hub = Hub(store, now=now, writer=writer, bus=bus, fairplay=fairplay, ends=game_ends)  # the solo games
            arena = Arena(store, bus, now=now, wall=wall, deals=deals, writer=writer, hashing=accounts.hashing,
                          fairplay=fairplay, games=hub, marks=marks, game_ends=game_ends)
            await arena.start()
            await hub.start()
            app.state.fairplay = fairplay
            app.state.store = store
            app.state.hub = hub
            app.state.accounts = accounts
            app.state.arena = arena
            app.state.daily = DailyDeals(store, wall=wall)
            app.state.bus = bus
            app.state.router = Router(hub, arena)
            app.state.analyst = Analyst(store, analysis_workers, node=bus.node)
            gc_before = _quiet_gc()
            tasks = [asyncio.create_task(hub.run_clock(tick_seconds)),
                     asyncio.create_task(hub.run_saver(save_seconds)), asyncio.create_task(hub.run_leases()),
                     asyncio.create_task(_collect_garbage(FULL_GC_SECONDS)),
                     asyncio.create_task(writer.run()), asyncio.create_task(writer.checkpoints()),
                     asyncio.create_task(arena.run_clock(tick_seconds)),
                     asyncio.create_task(deals.run()), asyncio.create_task(fairplay.run()),
                     asyncio.create_task(app.state.analyst.run())]
            try:
                yield
            finally:
                await fairplay.stop()  # its game in analysis finished first: no database work after the stop
                await stop_tasks(tasks)  # each ends, even one whose cancellation a bus command lost
                await arena.stop()
                hub.tick()
                await hub.save()
                await hub.stop()
                writer.close()
                gc.unfreeze()
                gc.set_threshold(*gc_before)

    routes = [
        Route("/", pages.start_page),
        Route("/play", pages.play_page),
        Route("/duel", pages.page_of("duel")),
        Route("/account", pages.page_of("account")),
        Route("/profile", pages.page_of("profile")),
        Route("/leaderboard", pages.page_of("leaderboard")),
        Route("/daily", pages.page_of("daily")),
        Route("/playnow", pages.page_of("playnow")),
        Route("/tournament", pages.page_of("tournament")),
        Route("/match", pages.page_of("match")),
        Route("/matches", pages.matches_page),
        Route("/mod", fairplay_web.mod_page),  # moderators only: the 404 page for everyone else
        Route("/account/signup", accounts_web.signup_post, methods=["POST"]),
        Route("/account/signin", accounts_web.signin_post, methods=["POST"]),
        Route("/account/signout", accounts_web.signout_post, methods=["POST"]),
        Route("/account/name", accounts_web.name_post, methods=["POST"]),
        Route("/account/password", accounts_web.password_post, methods=["POST"]),
        Route("/account/sessions/end", accounts_web.end_session_post, methods=["POST"]),
        Route("/account/email", accounts_web.email_post, methods=["POST"]),
        Route("/account/close", accounts_web.close_post, methods=["POST"]),
        Route("/account/forgot", accounts_web.forgot_post, methods=["POST"]),
        Route("/account/reset/check", accounts_web.reset_check_post, methods=["POST"]),
        Route("/account/reset", accounts_web.reset_post, methods=["POST"]),
        Route("/account/export", accounts_web.export_get),
        Route("/api/account", accounts_web.account_api),
        Route("/api/games", api.games_api),
        Route("/api/games/{id}/replay", analysis_web.game_replay_api),
        Route("/api/analysis/{kind}/{id}", analysis_web.analysis_api),
        Route("/api/analysis/{kind}/{id}", analysis_web.analysis_ask, methods=["POST"]),
        Route("/api/stats", api.stats_api),
        Route("/api/me", accounts_web.me_api),
        Route("/api/leaderboard", api.leaderboard_api),
        Route("/api/profile/{user}", api.profile_api),
        Route("/api/matches", api.matches_api),
        Route("/api/matches/{id}", api.match_api),
        Route("/api/daily/mine", daily.daily_mine_api),  # before the games' own: "mine" is no game
        Route("/api/daily/{game}", daily.daily_api),
        Route("/api/daily/{game}/start", daily.daily_start, methods=["POST"]),
        Route("/api/daily/{game}/{day}/record", daily.daily_record_api),
        Route("/api/daily/{game}/{day}/replay/{id}", daily.daily_replay_api),
        Route("/api/playnow", playnow.playnow_api),
        Route("/api/playnow/seen", playnow.playnow_seen, methods=["POST"]),
        Route("/api/playnow/{game}/{variant}/{limit}", playnow.playnow_start, methods=["POST"]),
        Route("/api/tournaments", tournaments.tournaments_api),
        Route("/api/tournaments", tournaments.tournaments_make, methods=["POST"]),
        Route("/api/tournaments/{id}", tournaments.tournament_api),
        Route("/api/report", fairplay_web.report_post, methods=["POST"]),
        Route("/api/mod/queue", fairplay_web.mod_queue),
        Route("/api/mod/account/{id}", fairplay_web.mod_account),
        Route("/api/mod/account/{id}", fairplay_web.mod_action, methods=["POST"]),
        Route("/healthz", api.health),
        Route("/sw.js", install.worker_route),  # from the root: its scope is the whole site
        Route("/manifest.webmanifest", install.manifest_route),
        WebSocketRoute("/ws", play_socket),
        Mount("/static", StaticFiles(directory=pages.WEB_DIR), name="static"),
    ]
    middleware = [Middleware(LogContext), Middleware(CountCutShort), Middleware(HeadersMiddleware),
                  Middleware(TextGuard), Middleware(GZipMiddleware, minimum_size=600)]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                     exception_handlers={404: pages.not_found_page})


def app_from_env() -> Starlette:
    """The app of one worker of ``patience serve --workers N``: its settings come from the environment
    (``PATIENCE_DATABASE_URL``, ``PATIENCE_REDIS_URL``, ``PATIENCE_DEAL_STOCK``, ``PATIENCE_SMTP_URL``,
    ``PATIENCE_SMTP_FROM``, ``PATIENCE_PUBLIC_URL``, ``PATIENCE_ANALYSIS_WORKERS``)."""
    import os

    return create_app(database_url=os.environ["PATIENCE_DATABASE_URL"],
                      redis_url=os.environ.get("PATIENCE_REDIS_URL") or None,
                      deal_stock=int(os.environ.get("PATIENCE_DEAL_STOCK", "0")),
                      smtp_url=os.environ.get("PATIENCE_SMTP_URL") or None,
                      smtp_from=os.environ.get("PATIENCE_SMTP_FROM") or None,
                      public_url=os.environ.get("PATIENCE_PUBLIC_URL") or None,
                      analysis_workers=int(os.environ.get("PATIENCE_ANALYSIS_WORKERS", "0")))


async def _answer_backups(stack: contextlib.AsyncExitStack, store: Store, lock: ArenaLock) -> None:
    """Make a copy of the SQLite file when ``patience backup`` asks (SIGUSR1), and say so in ``FILE.lock``
    (see :mod:`patience.server.storage.backups`)."""
    from sqlalchemy.engine import make_url

    from patience.server.storage.backups import BackupRequests

    database = make_url(store.url).database
    if not database or database == ":memory:":
        return
    backups = BackupRequests(store, Path(database))
    if not backups.install():
        return
    stack.push_async_callback(backups.close)
    lock.offer_backups(True)
    stack.callback(lock.offer_backups, False)  # said first as it stops, before SIGUSR1 goes


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
