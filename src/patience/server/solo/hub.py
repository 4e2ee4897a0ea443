"""The hub of solo games: every game being played here, the intents that reach them, the clock's ticks,
saving, hints, and which process of the arena plays a game (its lease on the bus).

A page's ``new`` or ``join`` gives it a :class:`~patience.server.solo.game.LiveGame` (made, or restored
from the database), and its intents are played there: what they change is in the database before
anyone is told (a group commit, :mod:`patience.server.storage.writer`). A game ends: fair play gets the
evidence of a rated one (:class:`~patience.server.solo.fairplay.FairPlay`), and the Play now of the
arena hears of a game of its own (:class:`GameEnds`), both given to the hub when it is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import secrets
import time
from typing import Any

import anyio
from sqlalchemy.exc import OperationalError

from patience.errors import PatienceError
from patience.games import Move
from patience.server.bus import Bus, MemoryBus
from patience.server.live import Connection, Now
from patience.server.protocol import (
    GiveUpIntent,
    HintAsk,
    HintMsg,
    JoinIntent,
    MoveIntent,
    NewIntent,
    Ping,
    Pong,
    StockIntent,
    TargetsAsk,
    UndoIntent,
    encode,
)
from patience.server.signals import Signal
from patience.server.solo.fairplay import FairPlay
from patience.server.solo.game import STALE, LiveGame, TableChanges, ledger_line, new_session, restore
from patience.server.solo.hints import hint as search_hint
from patience.server.solo.hints import simple_hint
from patience.server.storage.store import SavedGame, Store
from patience.server.storage.writer import GroupWriter

__all__ = ["GAME_LEASE_SECONDS", "STALE", "Hub", "LiveGame", "TableChanges", "ledger_line"]

log = logging.getLogger("patience.server")

GAME_LEASE_SECONDS = 5.0  # a solo game whose process stops renewing for this long may be played elsewhere
SAVE_CHUNK = 25  # games turned into records between two looks at the network


def _shown(conn: Connection) -> LiveGame | None:
    """The solo game page ``conn`` shows (only the hub puts one there)."""
    game = conn.game
    assert game is None or isinstance(game, LiveGame)
    return game


class Hub:
    """Every live game, the intents that reach them, the ticking clock and the saving."""

    def __init__(self, store: Store | None = None, *, now: Now = time.monotonic,
                 idle_seconds: float = 1800.0, writer: GroupWriter | None = None, bus: Bus | None = None,
                 fairplay: FairPlay | None = None, ends: Signal[str] | None = None) -> None:
        self.store = store
        self.writer = writer if writer is not None or store is None else GroupWriter(store)
        self.bus = bus if bus is not None else MemoryBus()
        self.leases: dict[str, str] = {}  # game id -> the token of the lease this process holds on it
        self.now = now
        self.idle_seconds = idle_seconds
        self.games: dict[str, LiveGame] = {}
        self._saving = asyncio.Lock()
        self._solving = asyncio.Lock()
        self.ends = ends  # says the id of a game of Play now once its end is in the database
        self.fairplay = fairplay  # gets the evidence of rated games at their end

    # -- connections -------------------------------------------------------------------------

    def disconnect(self, conn: Connection) -> None:
        self.detach(conn)

    def _attach(self, conn: Connection, game: LiveGame) -> None:
        self.detach(conn)
        conn.game = game
        game.conns.add(conn)

    def detach(self, conn: Connection) -> None:
        """The page no longer shows its solo game (it left, or shows a duel now)."""
        game = _shown(conn)
        if game is not None:
            game.conns.discard(conn)
            game.idle_since = self.now()
            conn.game = None

    # -- messages ----------------------------------------------------------------------------

    async def handle(self, conn: Connection, message: Any) -> None:
        """One valid message of solo play from ``conn``."""
        game = _shown(conn)
        if game is not None:
            game.sync()  # every message brings the clock up to date
        if isinstance(message, NewIntent):
            made = self.new_game(conn, message)
            if made is not None:
                await self._claim(made.id)
        elif isinstance(message, JoinIntent):
            await self.join(conn, message)
        elif isinstance(message, Ping):
            conn.send(encode(Pong(game.session.elapsed_ms() if game else 0)))
        elif game is None:
            conn.error("no_game", "start a game (new) or join one first", getattr(message, "ack", None))
        elif isinstance(message, MoveIntent | StockIntent | UndoIntent | GiveUpIntent):
            await self.act(conn, game, message)
        elif isinstance(message, HintAsk):
            if game.secret:  # the solver sees every card: its hint would tell of the secret deal
                conn.error("not_here", "hints are off in Play now" if game.apart else
                           "hints are off for the deal of the day")
            else:
                await self._hint(conn, game)
        elif isinstance(message, TargetsAsk):
            if not game.assist:
                conn.error("not_here", "this game does not show where a card may go")
            else:
                conn.send(encode(game.targets(message.src, message.n)))

    def new_game(self, conn: Connection, message: NewIntent) -> LiveGame | None:
        conn.cid = message.cid
        dealt = new_session(conn, message, self.now)
        if dealt is None:
            return None
        self._leave(conn)
        session, clock, variant = dealt
        game = LiveGame(secrets.token_urlsafe(12), conn.browser, session, clock, variant, self.now)
        self.games[game.id] = game
        self._attach(conn, game)
        conn.send(encode(game.snapshot()))
        return game

    def _leave(self, conn: Connection) -> None:
        """Leave the connection's game for a new one: a game begun counts as given up."""
        game = _shown(conn)
        if game is None:
            return
        self.detach(conn)
        if game.conns:
            return
        if not game.worth_keeping:
            self.games.pop(game.id, None)  # dealt and left untouched: nothing to keep
        elif not game.session.is_over:
            game.session.give_up()
            game._event("giveup", cid=conn.cid, move="giveup")

    async def join(self, conn: Connection, message: JoinIntent) -> None:
        conn.cid = message.cid
        game = self.games.get(message.id)
        if game is None and self.store is not None:
            saved = await anyio.to_thread.run_sync(self.store.load_game, message.id)
            if saved is None or saved.browser_id != conn.browser:
                conn.error("no_such_game", f"no game {message.id} of this browser")
                return
            # the game is played where its lease is: another process of the arena gives it up first
            if message.id not in self.leases and not await self._take(message.id):
                conn.error("server_error", f"game {message.id} is still played elsewhere: reconnect")
                return
            game = self.games.get(message.id)  # another join may have brought it back meanwhile
            if game is None:
                saved = await anyio.to_thread.run_sync(self.store.load_game, message.id)  # as it was let go
                try:
                    game = restore(saved, self.now) if saved is not None else None
                except (PatienceError, KeyError, TypeError, ValueError) as exc:
                    conn.error("cannot_restore", f"game {message.id} cannot be restored: {exc}")
                    return
                if game is not None:
                    self.games[game.id] = game
        if game is None or game.browser != conn.browser:
            conn.error("no_such_game", f"no game {message.id} of this browser")
            return
        self._attach(conn, game)
        game.sync()
        game.catch_up(conn, message.v)

    async def act(self, conn: Connection, game: LiveGame,
                  intent: MoveIntent | StockIntent | UndoIntent | GiveUpIntent) -> None:
        """Play an intent; what it changed is in the database before anyone is told (a group commit
        with every other game's moves of the moment). If the write fails, nothing is acknowledged:
        the game is let go and comes back from the database as it was when its page joins again."""
        before = game.version
        game.held = []
        try:
            game.act(conn, intent)
        finally:
            held, game.held = game.held, None
        if game.version == before or self.writer is None or not game.worth_keeping:
            self._tell(game, held)
            return
        log_now = game.session.log
        logged, version = len(log_now), game.version
        # the intent's answer goes with its move: another process that takes the game over answers
        # the intent sent again with it (patience.server.storage.store.GameAckRow)
        reply = game.replies.get((conn.cid, intent.ack))
        acks = [(game.id, conn.cid, intent.ack, version, reply)] if reply is not None else []
        # a game not in the database yet, or ended, is written whole (its record holds every action, and
        # its end counts in the statistics at once); else one small row an action, the saver rewrites the
        # record now and then. A deal of the day's row also takes its figures at each action: the day's
        # board shows the game as it stands
        whole = game.saved_version < 0 or game.session.is_over
        try:
            if whole:
                await self.writer.write(games=[game.saved()], acks=acks)
            else:
                session = game.session
                figures = [(game.id, session.elapsed_ms(), session.moves_made, session.score)] if game.secret else []
                await self.writer.write(game_moves=[(game.id, seq, entry.to_dict()) for seq, entry
                                                    in enumerate(log_now[game.logged:], start=game.logged)],
                                        figures=figures, acks=acks)
        except Exception:
            if self.games.get(game.id) is game:
                del self.games[game.id]
            for page in list(game.conns):
                page.error("server_error", "the move could not be saved: reconnect", intent.ack)
                self.detach(page)
            return
        game.logged = max(game.logged, logged)
        if whole:
            game.saved_version = max(game.saved_version, version)  # in the database: later actions go as rows
            self._ended(game)
        self._tell(game, held)

    def _ended(self, game: LiveGame) -> None:
        """A game of Play now whose end is in the database: its match may be complete (told once). The
        evidence of a rated game (the deal of the day, Play now) goes to fair play."""
        if game.secret and game.session.is_over and not game.evidence_sent and self.fairplay is not None:
            game.evidence_sent = True
            self.fairplay.game_over(game.evidence(f"g:{game.id}"))
        if game.apart and game.session.is_over and not game.told_end and self.ends is not None:
            game.told_end = True
            self.ends.say(game.id)  # a hearer that fails is logged: the sweep of Play now completes the match later

    # -- which process plays a game ----------------------------------------------------------

    async def start(self) -> None:
        """Listen for other processes of the arena that ask for a game of this one."""
        await self.bus.subscribe(f"solo:{self.bus.node}", self._on_wanted)

    async def _claim(self, game_id: str) -> None:
        token = await self.bus.acquire(f"game:{game_id}", GAME_LEASE_SECONDS)
        if token is not None:
            self.leases[game_id] = token

    async def _take(self, game_id: str) -> bool:
        """Hold the lease of a game: at once if nobody does, else after its holder has let it go
        (asked on the bus), or after its lease lapsed (a holder that died)."""
        deadline = asyncio.get_running_loop().time() + GAME_LEASE_SECONDS + 1.0
        asked = False
        while True:
            token = await self.bus.acquire(f"game:{game_id}", GAME_LEASE_SECONDS)
            if token is not None:
                self.leases[game_id] = token
                return True
            if not asked:
                holder = await self.bus.holder(f"game:{game_id}")
                if holder is not None and holder != self.bus.node:
                    await self.bus.publish(f"solo:{holder}", game_id.encode())
                asked = True
            if asyncio.get_running_loop().time() > deadline:
                return False
            await asyncio.sleep(0.05)

    def _on_wanted(self, data: bytes) -> None:
        asyncio.get_running_loop().create_task(self._let_go(data.decode(), "this game goes on in another window"))

    async def _let_go(self, game_id: str, why: str) -> None:
        """Give a game up to another process: write it as it is, tell its pages, release its lease."""
        game = self.games.pop(game_id, None)
        token = self.leases.pop(game_id, None)
        if game is not None:
            if game.version != game.saved_version and game.worth_keeping and self.store is not None:
                try:
                    await anyio.to_thread.run_sync(self.store.save_games, [game.saved()])
                except Exception:
                    log.exception("game %s could not be saved before it moved", game.id)
            for page in list(game.conns):
                page.error("moved", why)
                self.detach(page)
        if token is not None:
            await self.bus.release(f"game:{game_id}", token)

    async def renew(self) -> None:
        """Renew the leases of the games played here; a game whose lease was lost is let go."""
        held = dict(self.leases)
        kept = await self.bus.renew_many({f"game:{g}": t for g, t in held.items()}, GAME_LEASE_SECONDS)
        for game_id, token in held.items():
            if f"game:{game_id}" not in kept and self.leases.get(game_id) == token:
                self.leases.pop(game_id, None)
                await self._let_go(game_id, "this game went on elsewhere: reload the page")

    async def run_leases(self, every: float = 1.0) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.renew()
            except Exception:  # pragma: no cover - the bus is away: try again
                log.exception("renewing the games' leases failed")

    async def resume(self, game_id: str) -> bool:
        """Bring back a game that no process holds (its player left, its process stopped), so that its
        clock runs on to its end: False if it is held elsewhere or here already, or gone."""
        if game_id in self.games or self.store is None:
            return False
        token = await self.bus.acquire(f"game:{game_id}", GAME_LEASE_SECONDS)
        if token is None:
            return False
        self.leases[game_id] = token
        saved = await anyio.to_thread.run_sync(self.store.load_game, game_id)
        if game_id in self.games:  # a page joined it meanwhile: it is held here now, with this lease
            return False
        try:
            game = restore(saved, self.now) if saved is not None else None
        except (PatienceError, KeyError, TypeError, ValueError):
            log.exception("game %s cannot be restored", game_id)
            game = None
        if game is None:
            self.leases.pop(game_id, None)
            await self.bus.release(f"game:{game_id}", token)
            return False
        self.games[game_id] = game
        game.sync()
        return True

    async def stop(self) -> None:
        """Let go of every game (they are in the database): other processes may take them at once."""
        for game_id, token in list(self.leases.items()):
            with contextlib.suppress(Exception):
                await self.bus.release(f"game:{game_id}", token)
        self.leases.clear()

    @staticmethod
    def _tell(game: LiveGame, held: list[bytes]) -> None:
        for data in held:
            for conn in game.conns:
                conn.send(data)

    async def _hint(self, conn: Connection, game: LiveGame) -> None:
        session = game.session
        if session.is_over:
            conn.send(encode(HintMsg(None)))
            return
        if self._solving.locked():
            # one search at a time: the others get the simple hint rather than slow every game down
            move = simple_hint(session.state)
            self._hinted(game, move)
            conn.send(encode(game.hint(move)))
            return
        async with self._solving:
            # a solver may think a while: it works on a copy, and its answer counts only if nothing moved
            version = game.version
            move = await anyio.to_thread.run_sync(search_hint, copy.deepcopy(session))
        if game.version != version or (move is not None and session.state.check(move) is not None):
            move = simple_hint(session.state)
        self._hinted(game, move)
        conn.send(encode(game.hint(move)))

    def _hinted(self, game: LiveGame, move: Move | None) -> None:
        """A hint named a move: the game counts as helped, and is saved with it at the next save."""
        if move is not None:
            game.hints += 1
            game.saved_version = min(game.saved_version, game.version - 1)  # so the next save writes it

    # -- the clock and saving ----------------------------------------------------------------

    def tick(self) -> None:
        for game in list(self.games.values()):
            game.sync()

    async def save(self) -> None:
        """Write every changed game worth keeping, then let go of games nobody needs in memory."""
        if self.store is None:
            return
        async with self._saving:
            batch = [game for game in self.games.values()
                     if game.version != game.saved_version and game.worth_keeping]
            for start in range(0, len(batch), SAVE_CHUNK):
                chunk = batch[start:start + SAVE_CHUNK]
                rows: list[SavedGame] = [game.saved() for game in chunk]
                versions = [(game, game.version) for game in chunk]
                if self.writer is not None:
                    # a chunk a transaction, between the moves' group commits: a move never waits
                    # behind the records of every game
                    await self.writer.write(games=rows)
                else:
                    await anyio.to_thread.run_sync(self.store.save_games, rows)
                for (game, version), row in zip(versions, rows, strict=True):
                    game.saved_version = version
                    if row.outcome is not None:  # its end is in the database
                        self._ended(game)
        self.evict()

    def evict(self) -> None:
        now = self.now()
        for game in list(self.games.values()):
            if game.conns:
                continue
            idle = now - game.idle_since
            session = game.session
            saved = game.saved_version == game.version or not game.worth_keeping
            if not saved:
                continue
            timed = session.table.time_limit_ms is not None
            if (session.is_over and idle > 120) or (not timed and idle > self.idle_seconds) or \
                    (not game.worth_keeping and idle > 600):
                del self.games[game.id]
                token = self.leases.pop(game.id, None)
                if token is not None:
                    asyncio.get_running_loop().create_task(self.bus.release(f"game:{game.id}", token))

    async def run_clock(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                self.tick()
            except Exception:  # pragma: no cover - one broken game must not stop every clock
                log.exception("tick failed")

    async def run_saver(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.save()
            except (OperationalError, OSError):  # the database refuses writes: the writer says so in one line
                pass  # keep trying; the games stay in memory meanwhile
            except Exception:  # pragma: no cover - keep trying; the games stay in memory meanwhile
                log.exception("saving failed")
