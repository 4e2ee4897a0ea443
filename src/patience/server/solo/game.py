"""A live solo game: a session with versions, acks and an event log, made new or restored from its saved log.

The hub (:mod:`patience.server.solo.hub`) holds every game being played. The browser's intents reach
a :class:`LiveGame`, which lets the session (and so the rules engine) decide, then numbers what happened as the next
version of the game and sends it to every connection watching that game. An intent carries an
ack id; the answer is kept under ``(client id, ack)``, so an intent sent again after a lost
connection gets the same answer instead of being played twice.

Only :meth:`LiveGame.table` puts cards into messages, and it uses the engine's player view:
face-down cards are ``null`` and the stock's order is never sent.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from typing import Any

from patience.errors import BadInputError, GameOverError, IllegalMoveError, PatienceError
from patience.fairplay import HOW
from patience.games import DRAW, REDEAL, Move, Outcome, get_game
from patience.games.common import FOUNDATION_NAMES
from patience.options import options_to_dict
from patience.rng import check_seed, is_deal_key
from patience.server.explain import why
from patience.server.live import Connection, GameClock, Now
from patience.server.protocol import (
    Clock,
    EventMsg,
    GameMsg,
    GiveUpIntent,
    HintMsg,
    Line,
    MoveIntent,
    NewIntent,
    Pool,
    Rejected,
    Status,
    StockIntent,
    Summary,
    Table,
    TargetsMsg,
    UndoIntent,
    Why,
    encode,
)
from patience.server.storage.fairplay import Evidence
from patience.server.storage.store import SavedGame
from patience.session import LedgerEntry, Session
from patience.solve import winnable
from patience.solve.auto import auto_move

__all__ = ["ASSIST", "STALE", "LiveGame", "TableChanges", "ledger_line", "new_session", "restore", "winnable_seed"]

ASSIST = {"teppich": True, "reloaded": True, "faecher": False}
"""Games where the browser may ask where a card can go (in Der Fächer a wrong click costs points,
so showing the targets would take the game away)."""

KEEP_REPLIES = 128  # answers kept per game for intents sent again
KEEP_EVENTS = 200  # events kept per game for a browser that reconnects (older: the whole game)
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
        self.told_end = False  # the end of a game of Play now was handed on (Hub.ends)
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


def new_session(conn: Connection, message: NewIntent, now: Now) -> tuple[Session, GameClock, str | None] | None:
    """The session a page's ``new`` asks for, its clock running, and the listed variant it plays (None: a
    custom game); None when the game, its options or its seed cannot be (the page is told why)."""
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
        clock = GameClock(now)
        clock.go_live()
        session = Session(cls, seed, options, clock=clock)
    except PatienceError as exc:
        conn.error("bad_options", str(exc))
        return None
    variant = message.variant
    if variant is None or message.options:
        # options given in the address name the listed variant they equal (one pass: "one-pass"), or
        # none: the game is counted as custom, never under the variant the options changed
        changed = options_to_dict(options, only_changed=True)
        variant = next((name for name, opts in variants.items() if dict(opts) == changed), None)
    return session, clock, variant


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


