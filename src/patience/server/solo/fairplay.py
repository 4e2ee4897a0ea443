"""Fair play on the server: the evidence of rated games handed over at their end, written and analysed
off the event loop, and the accounts scored, flagged or marked (docs/fairplay.md).

The live parts (:class:`patience.server.solo.game.LiveGame` for the deal of the day and Play now, the
arena's matches for duels) keep each player's steps in memory while a game is played (a list append a
move: no query). At the game's end they hand an :class:`~patience.server.storage.fairplay.Evidence` to
:meth:`FairPlay.game_over`; a loop of its own writes the batch, then replays each game on a worker
thread (one at a time: the hint's searches are bounded by its budgets, at most
:data:`MAX_DECISIONS` a game within :data:`HINT_SECONDS` of CPU time, and the clairvoyance test within
:data:`CLAIRVOYANCE_SECONDS`) and scores the account (:func:`patience.server.storage.fairplay.rescore`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from patience.errors import PatienceError
from patience.fairplay import GameFigures, Step, difficulty, game_figures, verdict
from patience.games import Reloaded, get_game
from patience.rng import check_seed
from patience.server.signals import Signal
from patience.server.solo.hints import hint as search_hint
from patience.server.storage.daily import scouting
from patience.server.storage.fairplay import Evidence, analysed, pending, rescore, write_evidence
from patience.server.storage.store import Store
from patience.session import ManualClock, Session
from patience.solve.clairvoyance import hidden_decision
from patience.solve.greedy import greedy_move

__all__ = ["CLAIRVOYANCE_SECONDS", "HINT_SECONDS", "MAX_DECISIONS", "FairPlay", "analyse"]

log = logging.getLogger("patience.server")

MAX_DECISIONS = 60  # open decisions of a game compared with the hint (evenly spread over the game) ...
HINT_SECONDS = 8.0  # ... within this much CPU time of the worker thread (a hint takes 2 to 7 ms, at most 1 s)
CLAIRVOYANCE_SECONDS = 8.0  # the clairvoyance test's CPU time a game (won Solitaire Reloaded games only)


def _replay(record: dict[str, Any]) -> tuple[Session, ManualClock]:
    clock = ManualClock()
    return Session(get_game(str(record["game"])), check_seed(record["seed"]), record.get("options") or {},
                   clock=clock), clock


def _face_down(state: Any) -> int:
    return sum(1 for pile in state.piles().values() for _, up in pile if not up)


def _clairvoyant_worth(record: dict[str, Any]) -> bool:
    """The clairvoyance test runs where hidden cards exist and knowing them pays: won Solitaire Reloaded
    games (rated duels, Play now, the deal of the day)."""
    return str(record.get("game")) == "reloaded" and (record.get("result") or {}).get("outcome") == "won"


def analyse(record: dict[str, Any], steps: Sequence[Step], *, hint: Callable[[Session], Any] = search_hint,
            clairvoyance: bool | None = None) -> GameFigures:
    """A game's figures (runs on a thread): timing from its steps; each step's difficulty (useful moves
    to choose from, a card new in view); at up to :data:`MAX_DECISIONS` open decisions (more than one
    useful move; one, or none, is forced) the hint's move, the greedy player's (the obvious move) and
    the player's; and, in a won Solitaire Reloaded game, the decisions where only the hidden cards
    decide (:func:`patience.solve.clairvoyance.hidden_decision`) with the player's hits there: a card
    move (a turn of the stock commits nothing), the first such decision after each card turned up (the
    solver's plan on the real deal holds until then, so the decisions between are not independent)."""
    actions = record.get("actions", [])
    chosen = {s.i for s in steps}
    session, clock = _replay(record)
    open_at: list[int] = []
    hardness: dict[int, float] = {}
    down = _face_down(session.state)
    seen_down = down  # face-down cards at the player's previous action
    for i, action in enumerate(actions):
        move = str(action["m"])
        if (i in chosen and move not in ("undo", "giveup") and not action.get("illegal")
                and session.outcome is None):
            useful = len(session.state.useful_moves())
            hardness[i] = difficulty(useful, down < seen_down)
            seen_down = down
            if useful > 1:
                open_at.append(i)
        clock.set_ms(int(action["t"]))
        with contextlib.suppress(PatienceError):
            session.apply_action(move)
        down = _face_down(session.state)
    every_open = list(open_at)
    if len(open_at) > MAX_DECISIONS:
        step = len(open_at) / MAX_DECISIONS
        open_at = [open_at[int(k * step)] for k in range(MAX_DECISIONS)]
    wanted = set(open_at)
    seer = _clairvoyant_worth(record) if clairvoyance is None else clairvoyance
    hidden_at = set(every_open) if seer else set()
    decisions = agreed = nonobvious = nonobvious_agreed = hits = 0
    chances: list[float] = []
    hint_deadline = time.thread_time() + HINT_SECONDS
    seer_deadline: float | None = None
    segment = -1  # the face-down cards at the last hidden decision counted: one a card turned up
    session, clock = _replay(record)
    for i, action in enumerate(actions):
        move = str(action["m"])
        if i in wanted and time.thread_time() < hint_deadline:
            try:
                answer = hint(copy.deepcopy(session))
            except Exception:  # pragma: no cover - a failing search counts as no agreement
                answer = None
            decisions += 1
            agreed += answer is not None and str(answer) == move
            obvious = greedy_move(session.state)
            if answer is not None and str(answer) != str(obvious):
                nonobvious += 1
                nonobvious_agreed += str(answer) == move
        if (i in hidden_at and isinstance(session.state, Reloaded) and move not in ("draw", "redeal")
                and sum(session.state.down) != segment):
            seer_deadline = seer_deadline or time.thread_time() + CLAIRVOYANCE_SECONDS
            if time.thread_time() < seer_deadline:
                found = hidden_decision(session.state.copy(), deadline=seer_deadline)
                if found is not None:
                    segment = sum(session.state.down)
                    chances.append(found.chance(move))
                    hits += found.hit(move)
        clock.set_ms(int(action["t"]))
        with contextlib.suppress(PatienceError):
            session.apply_action(move)
    result = record.get("result") or {}
    return game_figures(steps, decisions, agreed, score=result.get("score"), ms=result.get("ms"),
                        hardness=[hardness.get(s.i) for s in steps], nonobvious=nonobvious,
                        nonobvious_agreed=nonobvious_agreed, hidden=chances, hidden_hits=hits)


class FairPlay:
    """Writes the evidence handed over, analyses it one game at a time, scores the accounts.

    ``states`` says (account id, state) when an account is flagged (``review``) or marked (``marked``), from
    the analysis's worker thread (the arena hears it: a mark closes what the account had open)."""

    def __init__(self, store: Store, *, hint: Callable[[Session], Any] = search_hint,
                 states: Signal[tuple[str, str]] | None = None) -> None:
        self.store = store
        self.hint = hint
        self._due: list[Evidence] = []
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self.states = states
        self.analysed = 0
        self.stopping = False  # once :meth:`stop` was called
        self._ended: asyncio.Event | None = None  # :meth:`run`'s end, once it has begun

    def game_over(self, evidence: Evidence) -> None:
        """A rated game ended: its evidence goes to the database and is analysed (not now: the loop does)."""
        self._due.append(evidence)
        self._idle.clear()
        self._wake.set()

    async def run(self, every: float = 1.0) -> None:
        first = True
        self._ended = ended = asyncio.Event()
        try:
            while not self.stopping:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=every)
                self._wake.clear()
                try:
                    await self.work(sweep=first)
                    first = False
                except Exception:  # pragma: no cover - the database is away: the evidence waits
                    log.exception("fair play's analysis failed")
                    await asyncio.sleep(every)
        finally:
            ended.set()

    async def stop(self) -> None:
        """Stop :meth:`run` between two games and return once it has ended. A cancellation alone would leave
        the game being analysed to its worker thread, which writes its figures and scores the account after the
        app has stopped (and holds locks on a database that is being taken away); the game not begun waits in
        the database for the next start's sweep."""
        self.stopping = True
        self._wake.set()
        if self._ended is not None:
            await self._ended.wait()

    async def work(self, *, sweep: bool = False) -> int:
        """Write what was handed over, analyse it (and, with ``sweep``, whatever a stopped process left)."""
        due, self._due = self._due, []
        keys = [e.key for e in due]
        if due:
            await anyio.to_thread.run_sync(self._write, due)
        rows = await anyio.to_thread.run_sync(pending, self.store.engine, 200)
        done = 0
        for row in rows:
            if self.stopping:
                break
            if not sweep and row.key not in keys:
                continue
            await anyio.to_thread.run_sync(self._analyse, row)
            done += 1
        if not self._due:
            self._idle.set()
        return done

    async def settled(self) -> None:
        """Wait until everything handed over is written, analysed and scored (tests, benchmarks)."""
        while not self._idle.is_set() or self._due:
            self._wake.set()
            await asyncio.sleep(0.01)

    def _write(self, items: list[Evidence]) -> None:
        with self.store.engine.begin() as connection:
            write_evidence(connection, items)

    def _analyse(self, row: Any) -> None:
        steps = [Step.unpack(s) for s in json.loads(row.steps)]
        try:
            figures = analyse(json.loads(row.record), steps, hint=self.hint) if row.record else \
                game_figures(steps, 0, 0)
        except (PatienceError, KeyError, TypeError, ValueError):
            log.exception("game %s cannot be analysed", row.key)
            figures = game_figures(steps, 0, 0)
        if row.kind == "daily" and row.game_id and row.record and _clairvoyant_worth(json.loads(row.record)):
            figures = dataclasses.replace(figures, scouted=scouting(self.store.engine, row.game_id))
        analysed(self.store.engine, row.key, figures, verdict(figures).kind)
        self.analysed += 1
        _, state = rescore(self.store.engine, row.user_id)
        if state in ("review", "marked") and self.states is not None:
            self.states.say((row.user_id, state))
