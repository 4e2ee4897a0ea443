"""Live games: sessions with versions, acks, an event log, the clock's ticks, and saving.

The hub holds every game being played. The browser's intents reach a :class:`LiveGame`, which
lets the session (and so the rules engine) decide, then numbers what happened as the next
version of the game and sends it to every connection watching that game. An intent carries an
ack id; the answer is kept under ``(client id, ack)``, so an intent sent again after a lost
connection gets the same answer instead of being played twice.

Only :meth:`LiveGame.table` puts cards into messages, and it uses the engine's player view:
face-down cards are ``null`` and the stock's order is never sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

import anyio
from sqlalchemy.exc import OperationalError

from patience.errors import BadInputError, GameOverError, IllegalMoveError, PatienceError
from patience.fairplay import HOW
from patience.games import DRAW, REDEAL, Move, Outcome, get_game
from patience.games.common import FOUNDATION_NAMES
from patience.options import options_to_dict
from patience.rng import check_seed, is_deal_key
from patience.server.bus import Bus, MemoryBus
from patience.server.explain import why
from patience.server.live import Connection, GameClock, Now
from patience.server.protocol import (
    Clock,
    EventMsg,
    GameMsg,
    GiveUpIntent,
    HintAsk,
    HintMsg,
    JoinIntent,
    Line,
    MoveIntent,
    NewIntent,
    Ping,
    Pong,
    Pool,
    Rejected,
    Status,
    StockIntent,
    Summary,
    Table,
    TargetsAsk,
    TargetsMsg,
    UndoIntent,
    Why,
    encode,
)
from patience.server.solo.fairplay import FairPlay
from patience.server.solo.hints import hint as search_hint
from patience.server.solo.hints import simple_hint
from patience.server.storage.fairplay import Evidence
from patience.server.storage.store import SavedGame, Store
from patience.server.storage.writer import GroupWriter
from patience.session import LedgerEntry, Session
from patience.solve import winnable
from patience.solve.auto import auto_move

__all__ = ["STALE", "Hub", "LiveGame", "TableChanges", "ledger_line"]

log = logging.getLogger("patience.server")


ASSIST = {"teppich": True, "reloaded": True, "faecher": False}
"""Games where the browser may ask where a card can go (in Der Fächer a wrong click costs points,
so showing the targets would take the game away)."""

GAME_LEASE_SECONDS = 5.0  # a solo game whose process stops renewing for this long may be played elsewhere
KEEP_REPLIES = 128  # answers kept per game for intents sent again
KEEP_EVENTS = 200  # events kept per game for a browser that reconnects (older: the whole game)
SAVE_CHUNK = 25  # games turned into records between two looks at the network
MAX_STEPS = 3000  # actions of a game kept as fair play's evidence
SEED_RANGE = 1_000_000_000  # random game numbers have at most 9 digits, easy to pass on
KEEP_CHANGES = 64  # table changes remembered per table: which page made each
STALE = "the table changed in another window since this move was made: it was not played, and nothing was charged"


class TableChanges:
    """Which page (client id) changed a table at which version, for its last :data:`KEEP_CHANGES` changes.

    A move says the version of the table it was made on (``v``). When another page of the game (a second
    tab, another device) has moved cards since, the player made it on a table the server no longer has: it
    is refused at no cost (:data:`STALE`) rather than played, or charged, on the table as it is now. The
    page's own changes since (its earlier intents still on their way, their auto-moves) never count.

    >>> changes = TableChanges()
    >>> changes.note(1, "tab-a"); changes.note(2, "tab-b")
    >>> changes.stale(1, "tab-a"), changes.stale(1, "tab-b"), changes.stale(2, "tab-a"), changes.stale(None, "x")
    (True, False, False, False)
    """

    def __init__(self, known_from: int = 0) -> None:
        self.known_from = known_from  # the changes up to this version are not known here (a game restored)
        self.changes: deque[tuple[int, str | None]] = deque(maxlen=KEEP_CHANGES)

    def note(self, version: int, cid: str | None) -> None:
        self.changes.append((version, cid))

    def stale(self, seen: int | None, cid: str) -> bool:
        """Whether a move of page ``cid`` made on the table of version ``seen`` comes after another page's
        change (None: the page did not say: never)."""
        if seen is None or seen < self.known_from:
            return False
        for version, by in reversed(self.changes):
            if version <= seen:
                return False
            if by != cid:
                return True
        # every change kept is newer than the page's table: one forgotten before them may be another page's
        return len(self.changes) == KEEP_CHANGES


class LiveGame:
    """One game being played: its session, version, event log and the connections that show it."""

    def __init__(self, game_id: str, browser: str, session: Session, clock: GameClock, variant: str | None,
                 now: Now) -> None:
        self.id = game_id
        self.browser = browser
        self.session = session
        self.clock = clock
        self.variant = variant
        self.version = 0
        self.events: list[bytes] = []  # events[i] is version first_version + i
        self.first_version = 1
        self.known_from = 0  # a page that has seen a later version than this is caught up with events
        self.changes = TableChanges()  # which page moved cards at which version
        self.replies: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self.last_ack: dict[str, int] = {}
        self.conns: set[Connection] = set()
        self.ledger_sent = len(session.ledger)
        self.saved_version = -1  # the version last saved; -1: never saved
        self._now = now
        self.idle_since = now()
        self.held: list[bytes] | None = None  # events kept back until the game is in the database
        self.logged = len(session.log)  # actions of the log in the database (record or rows)
        # a game dealt from a secret key (the deal of the day, Play now) shows this label, never its key
        self.label = "day" if is_deal_key(session.seed) else None
        self.told_end = False  # the end of a game of Play now was handed on (Hub.on_ended)
        self.hints = 0  # hints given in this game: a game won with one counts apart in the statistics
        # fair play's evidence (docs/fairplay.md): [log index, think ms, how, drag ms, drag px] an action
        self.steps: list[list[Any]] = []
        self.step_ms = 0  # the game clock at this player's previous action
        self.evidence_sent = False

    # -- what the browser sees ---------------------------------------------------------------

    @property
    def assist(self) -> bool:
        return ASSIST.get(self.session.game_id, False)

    def table(self) -> Table:
        """The cards on the table as the player sees them (the engine's view: no face-down card)."""
        state = self.session.state
        view = state.view()
        action = None
        if not self.session.is_over:
            if state.check(DRAW) is None:
                action = "draw"
            elif state.check(REDEAL) is None:
                action = "redeal"
        return Table(view["piles"], view["counters"], action, self.legal())

    def legal(self) -> list[tuple[str, str, int]]:
        """The moves the rules allow now, as ``(src, pile, n)``: exactly what the engine would accept, each
        foundation move named by the suit's pile. A stock turn is left out (the page cannot draw the card
        it turns up) and so is every hidden card: the moved cards are the face-up ones at the top of ``src``."""
        if self.session.is_over:
            return []
        out: dict[tuple[str, str, int], None] = {}
        for move in self.session.state.legal_moves():
            if move not in (DRAW, REDEAL):
                out[(move.src, self._target_pile(move), move.n)] = None
        return list(out)

    def status(self) -> Status:
        session = self.session
        elapsed = session.elapsed_ms()
        limit = session.table.time_limit_ms
        pool = session.pool_left()
        pool_state = None
        if pool is not None:
            drains = getattr(session.options, "pool_drain", "none") == "linear" and limit is not None
            # a duel's pool drains on after the game's end until the match ends (pool_ms)
            pool_state = Pool(pool, session.pool_ms(), limit if drains else None)
        return Status(
            score=session.score,
            moves=session.moves_made,
            undos_left=session.undos_left(),
            can_undo=session.undo_reason() is None,
            outcome=session.outcome.value if session.outcome else None,
            clock=Clock(elapsed, limit, not session.is_over),
            pool=pool_state,
            undos_most=session.table.undo_limit,
        )

    def summary(self) -> Summary | None:
        session = self.session
        if session.outcome is None:
            return None
        kinds: dict[str, dict[str, Any]] = {}
        for entry in session.ledger:
            row = kinds.setdefault(entry.kind, {"kind": entry.kind, "count": 0, "points": 0})
            row["count"] += 1
            row["points"] += entry.applied
        result = session.summary()
        return Summary(result["outcome"], result["score"], result["moves"], result["ms"],
                       result["foundation_cards"], [row for row in kinds.values() if row["points"] or row["count"]])

    def snapshot(self) -> GameMsg:
        session = self.session
        info = session.state.INFO
        return GameMsg(
            id=self.id, v=self.version, game=info.id, names=dict(info.names), variant=self.variant,
            seed=self.shown_seed, options=options_to_dict(session.options), changed=session.options_dict,
            assist=self.assist, table=self.table(), status=self.status(),
            ledger=[ledger_line(e) for e in session.ledger], summary=self.summary(),
        )

    @property
    def secret(self) -> bool:
        """Is the deal a secret key (the deal of the day, Play now), never to be shown while it is played?"""
        return self.label is not None

    @property
    def apart(self) -> bool:
        """Is this a side of a match of Play now (``now:ID``), played apart from the other side?"""
        return self.label is not None and self.label.startswith("now:")

    def settle_apart(self) -> None:
        """A game of Play now has no common end with the other side's: Der Fächer's pool is counted at
        the time limit as soon as the game is over, as :class:`patience.duel.Match` counts it apart."""
        session = self.session
        if self.apart and session.waits_for_match and session.table.time_limit_ms is not None:
            session.settle(session.table.time_limit_ms)

    @property
    def shown_seed(self) -> str:
        return self.label if self.label is not None else str(self.session.seed)

    # -- changes -----------------------------------------------------------------------------

    def _event(self, kind: str, *, ack: int | None = None, cid: str | None = None, move: str | None = None,
               ok: bool = True, reason: str | None = None, moved: bool = False) -> bytes:
        """Number what just happened as the next version and send it to every watcher."""
        self.settle_apart()
        ledger = self.session.ledger
        lines = [ledger_line(e) for e in ledger[self.ledger_sent:]]
        self.ledger_sent = len(ledger)
        self.version += 1
        if moved:
            self.changes.note(self.version, cid)
        message = EventMsg(
            v=self.version, kind=kind, ack=ack, cid=cid, move=move, ok=ok, reason=reason,
            why=why(reason) if reason else None, table=self.table() if moved else None,
            status=self.status(), ledger=lines, summary=self.summary(),
        )
        data = encode(message)
        self.events.append(data)
        if len(self.events) > KEEP_EVENTS:
            drop = len(self.events) - KEEP_EVENTS
            del self.events[:drop]
            self.first_version += drop
        if self.held is not None:
            self.held.append(data)  # told once it is durable (Hub.act)
        else:
            for conn in self.conns:
                conn.send(data)
        return data

    def note_step(self, index: int, intent: Any) -> None:
        """Keep one action's evidence (a list append): think time on the game's clock since the player's
        previous action, and how the page says it was made."""
        if len(self.steps) >= MAX_STEPS:
            return
        t = round(self.clock() * 1000)
        how = HOW.get(getattr(intent, "how", None) or "", "-")
        self.steps.append([index, max(0, t - self.step_ms), how, getattr(intent, "ms", None),
                           getattr(intent, "px", None)])
        self.step_ms = t

    def evidence(self, key: str, user_id: str = "", match_id: str | None = None, rating: float = 1500.0,
                 kind: str = "solo", record: dict[str, Any] | None = None) -> Evidence:
        return Evidence(key, user_id, kind, self.session.game_id, match_id, None if match_id else self.id, rating,
                        list(self.steps), record if record is not None else self.session.record())

    def sync(self) -> None:
        """Bring the game up to the clock; time penalties and a time-out become an event."""
        session = self.session
        if session.is_over:
            return
        before = len(session.ledger)
        session.tick()
        if len(session.ledger) != before or session.is_over:
            self._event("tick")

    def act(self, conn: Connection, intent: MoveIntent | StockIntent | UndoIntent | GiveUpIntent) -> None:
        """Carry out an intent once: an ack seen before gets its first answer again."""
        key = (conn.cid, intent.ack)
        seen = self.replies.get(key)
        if seen is not None:
            conn.send(seen)
            return
        if intent.ack <= self.last_ack.get(conn.cid, -1):
            conn.error("stale_ack", f"ack {intent.ack} is older than this page's last one", intent.ack)
            return
        self.last_ack[conn.cid] = intent.ack
        self.idle_since = self._now()
        self.sync()
        logged = len(self.session.log)
        reply = self._carry_out(conn, intent)
        if self.secret and len(self.session.log) > logged:  # a rated game (the deal of the day, Play now)
            self.note_step(logged, intent)
        self.replies[key] = reply
        while len(self.replies) > KEEP_REPLIES:
            self.replies.popitem(last=False)

    def _carry_out(self, conn: Connection, intent: MoveIntent | StockIntent | UndoIntent | GiveUpIntent) -> bytes:
        session = self.session
        ack = intent.ack
        if session.outcome is not None:
            text = session.outcome.value.replace("_", " ")
            return conn.error("game_over", f"the game is over ({text})", ack)
        if isinstance(intent, MoveIntent | StockIntent) and self.changes.stale(intent.v, conn.cid):
            return self._reject(conn, ack, f"{intent.src}>{intent.dst}" if isinstance(intent, MoveIntent) else "stock",
                                STALE)
        if isinstance(intent, UndoIntent):
            try:
                session.undo()
            except IllegalMoveError as exc:
                return self._reject(conn, ack, "undo", exc.reason)
            return self._event("undo", ack=ack, cid=conn.cid, move="undo", moved=True)
        if isinstance(intent, GiveUpIntent):
            session.give_up()
            return self._event("giveup", ack=ack, cid=conn.cid, move="giveup")
        if isinstance(intent, StockIntent):
            state = session.state
            if state.check(DRAW) is None:
                move = DRAW
            elif state.check(REDEAL) is None:
                move = REDEAL
            else:
                # a click on a used-up stock is not a card move: it is refused without a charge
                return self._reject(conn, ack, "stock", state.check(DRAW) or "the stock is empty")
        else:
            move = self._resolve(intent)
        before = len(session.ledger)
        try:
            session.play(move)
        except IllegalMoveError as exc:
            if len(session.ledger) != before:  # the rules charged for the attempt (Der Fächer)
                return self._event("illegal", ack=ack, cid=conn.cid, move=str(move), ok=False, reason=exc.reason)
            return self._reject(conn, ack, str(move), exc.reason)
        except (BadInputError, GameOverError) as exc:
            return conn.error("bad_move", str(exc), ack)
        reply = self._event("move", ack=ack, cid=conn.cid, move=str(move), moved=True)
        if intent.auto:
            self._auto_moves(conn)
        return reply

    def _auto_moves(self, conn: Connection) -> None:
        """Auto-move, as the player asked: the safe cards up, or the finish (patience.solve.auto); each
        played through the session and told as a move of its own."""
        session = self.session
        for _ in range(60):
            move = auto_move(session.state) if session.outcome is None else None
            if move is None:
                return
            try:
                session.play(move)
            except PatienceError:  # pragma: no cover - auto_move names legal moves only
                return
            self._event("move", cid=conn.cid, move=str(move), moved=True)

    def _resolve(self, intent: MoveIntent) -> Move:
        """The move an intent names; without a count, the largest legal one (a whole fitting pile)."""
        if intent.n is not None:
            return Move(intent.src, intent.dst, intent.n)
        dsts = {intent.dst, "f"} if intent.dst in FOUNDATION_NAMES else {intent.dst}
        counts = [m.n for m in self.session.state.legal_moves() if m.src == intent.src and m.dst in dsts]
        return Move(intent.src, intent.dst, max(counts, default=1))

    def _reject(self, conn: Connection, ack: int, move: str, reason: str) -> bytes:
        data = encode(Rejected(ack, move, reason, why(reason)))
        conn.send(data)
        return data

    def catch_up(self, conn: Connection, seen: int) -> None:
        """Send what ``conn`` missed since version ``seen``: the events if kept, else the whole game."""
        if self.known_from < seen <= self.version and seen + 1 >= self.first_version:
            for data in self.events[seen + 1 - self.first_version:]:
                conn.send(data)
        else:
            conn.send(encode(self.snapshot()))

    def hint(self, move: Move | None) -> HintMsg:
        if move is None:
            return HintMsg(None)
        return HintMsg(str(move), move.src, self._target_pile(move), move.n)

    def targets(self, src: str, n: int | None) -> TargetsMsg:
        moves = [m for m in self.session.state.legal_moves() if m.src == src and (n is None or m.n == n)]
        dsts = sorted({self._target_pile(m) for m in moves})
        return TargetsMsg(src, n, dsts)

    def _target_pile(self, move: Move) -> str:
        """The pile a move puts its cards on: ``f`` becomes the foundation of the card's suit."""
        if move.dst != "f":
            return move.dst
        pile = self.session.state.piles().get(move.src) or []
        card = pile[-1][0] if pile else None
        return FOUNDATION_NAMES[card // 13] if card is not None else "f"

    # -- saving ------------------------------------------------------------------------------

    @property
    def worth_keeping(self) -> bool:
        """A game counts once the player acted in it, or when the deal itself decided it."""
        session = self.session
        return bool(session.log) or session.outcome in (Outcome.WON, Outcome.NO_MOVES)

    def saved(self) -> SavedGame:
        session = self.session
        return SavedGame(
            id=self.id, browser_id=self.browser, game=session.game_id, variant=self.variant,
            seed=self.shown_seed, record=session.record(), ms=session.elapsed_ms(),
            moves=session.moves_made, score=session.score,
            outcome=session.outcome.value if session.outcome else None, hints=self.hints,
        )


def ledger_line(entry: LedgerEntry) -> Line:
    return Line(entry.t_ms, entry.kind, entry.points, entry.applied, entry.total, entry.reason, why(entry.reason))


def winnable_seed(conn: Connection, game: str, options: dict[str, Any]) -> int | None:
    """A seed from the list of proved-winnable deals of this variant; None (and the error sent)
    when no list covers it."""
    try:
        return winnable.pick(game, options)
    except BadInputError as exc:  # no list for this variant (or one made for other deals)
        variant = winnable.variant_key(game, options)
        conn.error("no_winnable", str(exc), why=Why("no_winnable", {"variant": variant}))
        return None


def restore(saved: SavedGame, now: Now) -> LiveGame:
    """Rebuild a saved game by playing its log again; an unfinished one then goes on from where it stood."""
    record = saved.record
    clock = GameClock(now)
    session = Session(get_game(str(record["game"])), check_seed(record["seed"]), record.get("options") or {},
                      clock=clock)
    last = 0
    for action in record.get("actions", []):
        last = int(action["t"])
        clock.set_ms(last)
        try:
            session.apply_action(str(action["m"]))
        except IllegalMoveError:
            if not action.get("illegal"):
                raise
    end = record.get("end")
    if end is not None:
        clock.set_ms(int(end["t"]))
        session.tick()
    else:
        clock.set_ms(max(last, saved.ms))
        clock.go_live()
    game = LiveGame(saved.id, saved.browser_id, session, clock, saved.variant, now)
    if game.secret:
        game.label = saved.seed  # as the games table shows it (day:YYYY-MM-DD, now:ID)
        game.settle_apart()
    game.hints = saved.hints
    # each page's last intent, as the process that played it wrote it with its move: sent again, it
    # gets the same answer and is not played twice. The versions go on from the last one written;
    # a page that has seen one of them (or one never written) gets the whole game when it joins.
    for cid, (ack, version, reply) in saved.acks.items():
        game.last_ack[cid] = ack
        game.replies[(cid, ack)] = reply
        game.version = max(game.version, version)
    game.first_version = game.version + 1
    game.known_from = game.version
    game.changes = TableChanges(game.version)
    game.saved_version = game.version
    return game


def _shown(conn: Connection) -> LiveGame | None:
    """The solo game page ``conn`` shows (only the hub puts one there)."""
    game = conn.game
    assert game is None or isinstance(game, LiveGame)
    return game


class Hub:
    """Every live game, the intents that reach them, the ticking clock and the saving."""

    def __init__(self, store: Store | None = None, *, now: Now = time.monotonic,
                 idle_seconds: float = 1800.0, writer: GroupWriter | None = None, bus: Bus | None = None) -> None:
        self.store = store
        self.writer = writer if writer is not None or store is None else GroupWriter(store)
        self.bus = bus if bus is not None else MemoryBus()
        self.leases: dict[str, str] = {}  # game id -> the token of the lease this process holds on it
        self.now = now
        self.idle_seconds = idle_seconds
        self.games: dict[str, LiveGame] = {}
        self._saving = asyncio.Lock()
        self._solving = asyncio.Lock()
        # told the id of a game of Play now once its end is in the database (patience.server.arena.apart)
        self.on_ended: Callable[[str], None] | None = None
        self.fairplay: FairPlay | None = None  # gets the evidence of rated games at their end

    # -- connections -------------------------------------------------------------------------

    def connect(self, browser: str, on_overflow: Callable[[], None] | None = None) -> Connection:
        return Connection(browser, on_overflow)

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
        try:
            cls = get_game(message.game)
        except BadInputError as exc:
            conn.error("unknown_game", str(exc))
            return None
        try:
            chosen: dict[str, Any] = {}
            variants = getattr(cls.INFO, "variants", {}) or {}
            if message.variant is not None:
                if message.variant not in variants:
                    known = ", ".join(variants) or "none"
                    raise BadInputError(f"{cls.INFO.id} has no variant {message.variant!r} (variants: {known})")
                chosen.update(variants[message.variant])
            chosen.update(message.options)
            options = cls.make_options(chosen)
            if message.winnable:
                seed = winnable_seed(conn, cls.INFO.id, chosen)
                if seed is None:
                    return None
            else:
                seed = int(message.seed) if message.seed is not None else 1 + secrets.randbelow(SEED_RANGE - 1)
            clock = GameClock(self.now)
            clock.go_live()
            session = Session(cls, seed, options, clock=clock)
        except PatienceError as exc:
            conn.error("bad_options", str(exc))
            return None
        self._leave(conn)
        variant = message.variant
        if variant is None or message.options:
            # options given in the address name the listed variant they equal (one pass: "one-pass"), or
            # none: the game is counted as custom, never under the variant the options changed
            changed = options_to_dict(options, only_changed=True)
            variant = next((name for name, opts in variants.items() if dict(opts) == changed), None)
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
        if game.apart and game.session.is_over and not game.told_end and self.on_ended is not None:
            game.told_end = True
            try:
                self.on_ended(game.id)
            except Exception:  # pragma: no cover - the sweep of Play now completes the match later
                log.exception("telling the end of game %s failed", game.id)

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
