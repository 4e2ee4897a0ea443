"""Game analyses on the server: worked off the event loop, by worker processes, from the queue in the database.

A player asks for a finished game's analysis (:mod:`patience.server.web.analysis` checks that its deal is no
longer secret and makes the job, :mod:`patience.server.storage.analysis`). Every ``patience serve`` process
with analysis workers (``--analysis-workers N``, 0: none) runs an :class:`Analyst`: a task on its event loop
that claims jobs from the shared queue (any process's job: the queue is the database's) while one of its N
lanes is free, hands each stage to a worker process and writes the stage's results. A claim works one stage
(after its verdict a job goes back to the queue for its win chance), and a win chance takes up to
:data:`CHANCE_SECONDS` of CPU: so that a game just finished shows its verdict at once even while every lane
works a win chance, one more lane takes verdicts only (N + 1 worker processes, the last busy only then, for
a verdict's usual milliseconds to seconds). The event loop
only waits; the solvers run in the worker processes, each stage under a CPU budget that the worker process
enforces on itself (:func:`cpu_limit`: past it the kernel signals the process, the stage stops with
:class:`OverBudget` and the job is failed, never taken again). A worker process that dies puts its job back in
the queue (at most :data:`patience.server.storage.analysis.MAX_ATTEMPTS` times); a server process that dies
holding a job leaves its lease to lapse, and another process's analyst takes it.

The stages, in order (:data:`patience.server.storage.analysis.STAGES`):

- ``verdict``: every card known (:func:`patience.solve.analysis.analyse`): each position winnable, unwinnable
  or unknown, the first losing action, the slips, the better line (with its positions, for the replay viewer:
  the page holds no rule) and the key moments;
- ``chance``: the win chance with what the player could see (:func:`patience.solve.chance.win_chances`): each
  position's ``{chance, low, high, samples}``, each action's ``{best_action, drop, label, luck}``, the deal's
  chance against the outcome, and for each labelled action its better line's positions (:func:`better_line`:
  the better move, then the solver's win with every card known, else the hint player's moves, at most
  :data:`LINE_MOVES`; the page holds no rule). Written as it fills: the worker process reports each
  position's figures through a queue as its samples come in, and the analyst writes the graph so far every
  second (``status`` ``filling``), so the page's graph fills while the verdict is already shown. Its CPU budget
  (:data:`CHANCE_SECONDS`) is the solver's own (it stops itself and marks the graph ``complete: false``) and
  the worker process's limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import multiprocessing
import os
import queue
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import anyio

from patience.server.storage import analysis as db
from patience.server.storage.store import Store

__all__ = ["CHANCE_SECONDS", "VERDICT_SECONDS", "Analyst", "OverBudget", "chance_function", "cpu_limit", "run_stage",
           "work_queue", "worker_init"]

log = logging.getLogger("patience.server")

VERDICT_SECONDS = 20.0  # the CPU budget of a game's verdict stage (a typical game takes well under 5 s)
CHANCE_SECONDS = 40.0  # the CPU budget of a game's win-chance stage: with the verdict's, at most 60 s a game
CHANCE_SAMPLES = 32  # sampled deals a position at most (patience.solve.chance.DEFAULT_SAMPLES)
CHANCE_SEED = 0  # the samples' seed: the same game gives the same graph on any process
GRACE_SECONDS = 5.0  # the worker process is stopped this much past a stage's budget (the search stops itself first)
POLL_SECONDS = 1.0  # how often an idle analyst looks at the queue (at once when this process queued a job)
LINE_MOVES = 20  # moves of a better line the viewer steps through, the better move included
LINES_SECONDS = 4.0  # CPU seconds of a chance stage for its better lines, all of them (at most an eighth of it)
LINE_NODES = 200_000  # positions the solver may search for one better line's winning continuation
HINT_SECONDS = 0.25  # CPU seconds of one hint player's move in a better line
REPORT_SECONDS = 0.5  # a chance stage reports the positions it has figures for at most this often

_progress: Any = None  # in a worker process: the queue its stage's partial results go to


def chance_function() -> Callable[..., Any] | None:
    """The solver's win chance with what the player could see (:func:`patience.solve.chance.win_chances`:
    ``win_chances(record, *, budget_s, samples, seed, on_position)``, ``on_position(position, action)`` called
    whenever a position's figures change), or None where the solvers have none."""
    try:
        from patience.solve import chance
    except ImportError:  # pragma: no cover - the solvers always have it now
        return None
    found = getattr(chance, "win_chances", None)
    return found if callable(found) else None


@contextlib.contextmanager
def cpu_limit(seconds: float) -> Iterator[None]:
    """Let this process use at most ``seconds`` more of CPU time (the kernel stops it past that: SIGXCPU),
    then give the limit back. Where the platform has no such limit, nothing is enforced."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Linux or macOS
        yield
        return
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    limit = int(used.ru_utime + used.ru_stime + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


class OverBudget(RuntimeError):
    """A stage went past its CPU budget (the kernel's SIGXCPU, turned into this exception in a worker process)."""


def _over_budget(signum: int, frame: Any) -> None:
    raise OverBudget("the analysis went over its CPU budget")


WORKER_NICE = 10  # analyses yield the CPU to the server's own process (its players' moves) by this much


def worker_init(progress: Any = None) -> None:
    """A worker process starts: where its stages' progress goes, SIGXCPU raises :class:`OverBudget`, and it
    runs :data:`WORKER_NICE` nicer than the server, so that an analysis never slows a move down."""
    import signal

    global _progress
    _progress = progress
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)
    if hasattr(signal, "SIGXCPU"):
        signal.signal(signal.SIGXCPU, _over_budget)


def run_stage(key: str, stage: str, record: dict[str, Any], seconds: float,
              enforce: bool = True, progress: Any = None) -> tuple[dict[str, Any] | None, float]:
    """One stage of one game's analysis (in a worker process): its results and the CPU seconds it took.
    The chance stage's result is None when the solver has no win-chance function yet. With ``enforce`` the
    process's CPU limit bounds it (a process that runs one stage at a time; a Dask worker's threads share
    one process, so there the solver's own budget alone bounds it). ``progress``: where the chance stage
    reports its positions as they come in (default: the worker process's, :func:`worker_init`)."""
    started = time.process_time()
    with cpu_limit(seconds + GRACE_SECONDS) if enforce else contextlib.nullcontext():
        if stage == "verdict":
            result: dict[str, Any] | None = verdict_stage(record, seconds)
        else:
            result = chance_stage(key, record, seconds, progress)
    return result, time.process_time() - started


def chance_stage(key: str, record: dict[str, Any], seconds: float, progress: Any = None) -> dict[str, Any] | None:
    """The win chance of every position with what the player could see, within ``seconds`` of CPU; each
    position's figures reported (to the analyst, through this worker process's queue) as they change. For each
    labelled action, its better line (:func:`better_line`: the better move and what a strong player plays after
    it) as the replay draws it, within :func:`lines_seconds` of the same budget. None where the solvers have no
    win chance."""
    from patience.errors import PatienceError

    function = chance_function()
    if function is None:
        return None

    channel = progress if progress is not None else _progress
    reported: dict[int, list[Any]] = {}
    sent = [time.monotonic()]

    def send() -> None:  # one message a while: a Dask queue's each goes through the scheduler
        if channel is not None and reported:
            channel.put([key, list(reported.values())])
            reported.clear()
        sent[0] = time.monotonic()

    def on_position(position: Any, action: Any) -> None:
        if channel is not None:
            reported[int(position.action)] = [position.to_dict(), None if action is None else action.to_dict()]
            if time.monotonic() - sent[0] >= REPORT_SECONDS:
                send()

    lines_s = lines_seconds(seconds)
    found = function(record, budget_s=seconds - lines_s, samples=CHANCE_SAMPLES, seed=CHANCE_SEED,
                     on_position=on_position)
    send()
    out: dict[str, Any] = {"status": "done", **found.to_dict()}
    out["better_frames"], out["better_by"] = {}, {}
    deadline = time.thread_time() + lines_s
    labelled = [a for a in out["actions"] if a["label"] and a["best_action"]]
    for number, action in enumerate(labelled):
        share = max(0.0, deadline - time.thread_time()) / (len(labelled) - number)  # the time left, shared fairly
        with contextlib.suppress(PatienceError):
            frames, by = better_line(record, int(action["action"]) - 1, str(action["best_action"]), share)
            out["better_frames"][str(action["action"])] = frames
            out["better_by"][str(action["action"])] = by
    return out


def lines_seconds(seconds: float) -> float:
    """The part of a chance stage's CPU budget its better lines may use (the win chance has the rest)."""
    return min(LINES_SECONDS, seconds / 8)


def better_line(record: dict[str, Any], start: int, move: str, seconds: float) -> tuple[list[dict[str, Any]], str]:
    """The better line from the position after action ``start``: ``move`` (the better move), then, every card
    being known after the game, the solver's winning line from the position it leads to when the solver finds
    one within its share of ``seconds``, else the hint player's moves; :data:`LINE_MOVES` moves in all at most,
    fewer when the game ends or the time is spent. Returns its positions as the replay draws them (the first:
    the position the move was played in) and who chose the moves after the better one: ``solver``, ``hint``,
    or ``move`` (the better move alone: the game ended with it, or no time was left)."""
    from patience.solve.hints import hint
    from patience.solve.search import Budget, Status
    from patience.solve.solution import solve

    deadline = time.thread_time() + seconds
    session, t = _session_at(record, start)
    out = [_frame_of(session, None, t)]
    session.play(move)
    out.append(_frame_of(session, move, t))
    by = "move"

    def left() -> float:
        return deadline - time.thread_time()

    if session.state.is_won() or left() <= 0:
        return out, by
    solution = solve(session.state.copy(), Budget(seconds=left() / 2, nodes=LINE_NODES, memory_mb=64.0))
    if solution.status is Status.WON and solution.moves:
        by = "solver"
        for next_move in solution.moves[:LINE_MOVES - 1]:
            text = str(next_move)
            session.play(text)
            out.append(_frame_of(session, text, t))
        return out, by
    while len(out) <= LINE_MOVES and not session.state.is_won() and left() > 0:
        found = hint(session.state, budget_s=min(HINT_SECONDS, left()))
        if found is None:
            break
        by = "hint"
        text = str(found)
        session.play(text)
        out.append(_frame_of(session, text, t))
    return out, by


def verdict_stage(record: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The verdicts with every card known, the key moments and the better line's positions."""
    from patience.solve.analysis import analyse

    found = analyse(record, game_seconds=seconds)
    out = found.to_dict()
    out["moments"] = moments(out)
    out["better_frames"] = line_frames(record, found.better_from, [str(m) for m in found.better_line])
    return out


def moments(analysis: dict[str, Any]) -> list[dict[str, Any]]:
    """The key moments of a game, in its order: where the deal could no longer be won (with the better move),
    or the stretch where it was lost, and each slip (a losing move taken back)."""
    positions = analysis["positions"]
    out: list[dict[str, Any]] = []
    line = analysis.get("better_line") or {}
    losing = analysis.get("first_losing_action")
    span = analysis.get("first_losing_range")
    for slip in analysis.get("slips") or []:
        out.append({"action": slip, "kind": "slip", "played": positions[slip]["move"], "better": None})
    if losing is not None:
        moves = line.get("moves") or []
        out.append({"action": losing, "kind": "losing", "played": positions[losing]["move"],
                    "better": moves[0] if moves else None, "from_action": line.get("from_action")})
    elif span is not None:
        out.append({"action": span[0], "kind": "undecided", "to": span[1], "played": positions[span[0]]["move"],
                    "better": None})
    if analysis.get("never_winnable"):
        out.append({"action": 0, "kind": "never", "played": None, "better": None})
    return sorted(out, key=lambda m: int(m["action"]))


def line_frames(record: dict[str, Any], start: int | None, line: list[str]) -> list[dict[str, Any]]:
    """The positions of a line, from the position after action ``start`` (as the player saw it then), one after
    each of its first :data:`LINE_MOVES` moves: the replay viewer steps through them."""
    if start is None:
        return []
    session, t = _session_at(record, start)
    out = [_frame_of(session, None, t)]
    for move in line[:LINE_MOVES]:
        session.play(move)
        out.append(_frame_of(session, move, t))
    return out


def _session_at(record: dict[str, Any], start: int) -> tuple[Any, int]:
    """The game of ``record`` replayed up to its action ``start``, and that action's time."""
    from patience.errors import PatienceError
    from patience.games import get_game
    from patience.rng import check_seed
    from patience.session import ManualClock, Session

    clock = ManualClock()
    session = Session(get_game(str(record["game"])), check_seed(record["seed"]), record.get("options") or {},
                      clock=clock)
    t = 0
    for action in record.get("actions", [])[:start]:
        t = int(action.get("t", 0))
        clock.set_ms(t)
        with contextlib.suppress(PatienceError):  # a wrong click the record keeps
            session.apply_action(str(action["m"]))
    return session, t


def _frame_of(session: Any, move: str | None, t: int) -> dict[str, Any]:
    from patience.server.storage.league import _frame

    return _frame(session, move, t, True)


def take_reports(channel: Any, partial: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Take what the chance stages reported so far off ``channel`` (a process queue, or a Dask cluster's
    ``distributed.Queue``) into ``partial``: each held job's positions so far, by number, each with the
    ``label`` and ``drop`` of the action that led to it (as the page reads them)."""
    if hasattr(channel, "get_nowait"):
        messages = []
        while True:
            try:
                messages.append(channel.get_nowait())
            except queue.Empty:
                break
    else:
        messages = channel.get(batch=True)
    for key, reports in messages:
        if key not in partial:
            continue  # a job this process does not hold (any more)
        for position, action in reports:
            if action is not None:
                position = {**position, "label": action["label"], "drop": action["drop"]}
            partial[key][int(position["action"])] = position


def filling(partial: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The graph so far, as stored while the chance stage runs (a position not reached yet: null)."""
    return {"status": "filling", "positions": [partial.get(i) for i in range(max(partial, default=-1) + 1)]}


class Analyst:
    """Claims jobs from the shared queue and works them on ``workers`` worker processes (see the module)."""

    def __init__(self, store: Store, workers: int, *, node: str = "", verdict_seconds: float = VERDICT_SECONDS,
                 chance_seconds: float = CHANCE_SECONDS, poll_seconds: float = POLL_SECONDS) -> None:
        import os
        import secrets

        self.store = store
        self.workers = workers
        self.node = f"{node or os.getpid()}/{secrets.token_hex(4)}"
        self.budgets = {"verdict": verdict_seconds, "chance": chance_seconds}
        self.poll_seconds = poll_seconds
        self._wake = asyncio.Event()
        self._pool: ProcessPoolExecutor | None = None
        self._progress: Any = None
        self._held: set[str] = set()
        self._partial: dict[str, dict[int, dict[str, Any]]] = {}  # a job's positions so far, by number
        self.worked = 0

    @property
    def lease_seconds(self) -> float:
        return 2 * max(self.budgets.values()) + 60.0

    def wake(self) -> None:
        """A job was queued here: look at the queue now rather than at the next poll."""
        self._wake.set()

    def _new_pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        if self._progress is None:
            self._progress = context.Queue()
        return ProcessPoolExecutor(self.workers + 1, mp_context=context, initializer=worker_init,
                                   initargs=(self._progress,))  # the N lanes and the verdicts' own

    async def run(self) -> None:
        if self.workers <= 0:
            return
        tasks: set[asyncio.Task[None]] = set()
        room = (self.workers, 1)  # jobs at once: on the N lanes for any stage, on the verdicts' own lane
        busy = [0, 0]  # the jobs in hand on each

        def finished(done: asyncio.Task[None], lane: int) -> None:
            tasks.discard(done)
            busy[lane] -= 1
            self._wake.set()  # a lane is free: look at the queue now

        try:
            while True:
                lane = 0 if busy[0] < room[0] else 1
                job = None
                if busy[lane] < room[lane]:
                    try:  # with every lane busy (win chances, most likely), a game's verdict still goes at once
                        job = await anyio.to_thread.run_sync(functools.partial(
                            db.claim, self.store.engine, self.node, self.lease_seconds, verdicts_only=lane == 1))
                    except Exception:  # pragma: no cover - the database is away: try again later
                        log.exception("the analysis queue cannot be read")
                if job is None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), timeout=self.poll_seconds)
                    self._wake.clear()
                    continue
                if self._pool is None:  # the worker processes and their queues: made at the first job
                    self._pool = self._new_pool()
                busy[lane] += 1
                task = asyncio.create_task(self._work(job))
                tasks.add(task)
                task.add_done_callback(functools.partial(finished, lane=lane))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for key in list(self._held):  # handed back: another process takes them at once
                with contextlib.suppress(Exception):
                    await anyio.to_thread.run_sync(db.give_back, self.store.engine, key, self.node)
            self._stop_pool()
            progress, self._progress = self._progress, None
            if progress is not None:  # its locks released now, not left to the interpreter's exit
                progress.close()
                progress.join_thread()

    def _stop_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:  # a search under way is not waited for: its job was handed back
            with contextlib.suppress(Exception):
                process.terminate()

    def _drain(self) -> None:
        """Take the positions the worker processes reported so far (the chance stage's) off their queue."""
        if self._progress is not None:
            take_reports(self._progress, {key: self._partial[key] for key in self._held if key in self._partial})

    async def _save(self, key: str, **what: Any) -> bool:
        return await anyio.to_thread.run_sync(functools.partial(db.save, self.store.engine, key, self.node, **what))

    async def _work(self, job: db.Claimed) -> None:
        self._held.add(job.key)
        results, cpu = dict(job.results), job.cpu_s
        stages = db.STAGES[db.STAGES.index(job.stage) + 1:] if job.stage in db.STAGES else db.STAGES
        pool = self._pool
        try:
            for stage in stages:
                seconds = self.budgets[stage]
                loop = asyncio.get_running_loop()
                assert pool is not None
                future = loop.run_in_executor(pool, run_stage, job.key, stage, job.record, seconds)
                if stage == "chance":
                    self._partial[job.key] = {}
                    result, used = await self._filling(job.key, future, results, cpu)
                else:
                    result, used = await future
                cpu += used
                results[stage] = result if result is not None else {"status": "not_available"}
                last = stage == stages[-1]
                if not await self._save(job.key, stage=stage, results=results, cpu_s=cpu, done=last,
                                        lease_s=self.lease_seconds, again=not last):
                    return  # the claim was lost (this process was too slow): the other holder writes
                if not last:  # back in the queue: the verdicts of games asked for since come before its next stage
                    self.wake()
                    return
            self.worked += 1
        except BrokenProcessPool:  # the worker process died: the job goes back to the queue (a few times at most)
            log.warning("analysis %s: its worker process stopped", job.key)
            if self._pool is pool:  # a new pool, once (another job of the broken pool finds it made already)
                self._stop_pool()
                self._pool = self._new_pool()
            await anyio.to_thread.run_sync(db.release, self.store.engine, job.key, self.node,
                                           "its worker process stopped every time")
            self.wake()
        except OverBudget:
            await self._save(job.key, stage=job.stage or "verdict", results=results, cpu_s=cpu,
                             error="the analysis went over its CPU budget")
        except Exception as exc:
            log.exception("analysis %s failed", job.key)
            await self._save(job.key, stage=job.stage or "verdict", results=results, cpu_s=cpu,
                             error=f"the analysis failed: {type(exc).__name__}"[:200])
        finally:
            self._held.discard(job.key)
            self._partial.pop(job.key, None)

    async def _filling(self, key: str, future: Any, results: dict[str, Any], cpu: float) -> Any:
        """Wait for the chance stage, writing the positions reported so far every second."""
        written: dict[int, dict[str, Any]] = {}
        while True:
            done, _ = await asyncio.wait({future}, timeout=1.0)
            self._drain()
            partial = self._partial.get(key, {})
            if done:
                try:
                    return future.result()
                except OverBudget:  # one position's samples ran past the budget's grace: the graph so far
                    return {**filling(partial), "status": "done", "complete": False, "stopped": "the CPU budget"}, (
                        self.budgets["chance"] + GRACE_SECONDS)
            if partial != written:
                written = dict(partial)
                results["chance"] = filling(written)
                await self._save(key, stage="verdict", results=results, cpu_s=cpu, lease_s=self.lease_seconds)


def work_queue(store: Store, executor: Any, *, at_once: int, node: str = "bulk", enforce: bool = True,
               budgets: dict[str, float] | None = None, on_done: Callable[[str, str], None] | None = None,
               progress: Any = None) -> int:
    """Work the shared queue until it is empty, ``at_once`` stages at a time on ``executor`` (a
    ``concurrent.futures`` executor: a process pool, or a Dask cluster's ``client.get_executor()``): the bulk
    analysis of many games (``patience analyse --day``), beside the servers' analysts. Returns the jobs done;
    ``on_done(key, status)`` is told of each. ``enforce``: each stage under the process's CPU limit (a pool
    made with :func:`worker_init` as its initializer; not on a Dask cluster, see :func:`run_stage`).

    Each game's results are stored as each of its stages ends (its verdict first, readable at once), and with
    ``progress`` (a queue the workers can put to: a ``multiprocessing`` manager's, or the cluster's
    ``distributed.Queue``) the win chance's graph so far every second while its stage runs, as a server's
    workers do: a viewer of a game of the day sees its verdict and its graph fill as soon as its part is done."""
    from concurrent.futures import FIRST_COMPLETED, wait

    seconds = {"verdict": VERDICT_SECONDS, "chance": CHANCE_SECONDS, **(budgets or {})}
    lease = 2 * max(seconds.values()) + 60.0
    running: dict[Any, tuple[db.Claimed, str, dict[str, Any], float]] = {}
    partial: dict[str, dict[int, dict[str, Any]]] = {}  # the graph so far of each chance stage running
    written: dict[str, dict[int, dict[str, Any]]] = {}
    worked = 0

    def start(job: db.Claimed, stage: str, results: dict[str, Any], cpu: float) -> None:
        future = executor.submit(run_stage, job.key, stage, job.record, seconds[stage], enforce, progress)
        running[future] = (job, stage, results, cpu)
        if stage == "chance":
            partial[job.key] = {}

    def fill() -> None:  # the graphs that grew since the last look, stored
        take_reports(progress, partial)
        for job, stage, results, cpu in list(running.values()):
            now = partial.get(job.key)
            if stage == "chance" and now and now != written.get(job.key):
                written[job.key] = dict(now)
                db.save(store.engine, job.key, node, stage="verdict", results={**results, "chance": filling(now)},
                        cpu_s=cpu, lease_s=lease)

    while True:
        while len(running) < at_once and (job := db.claim(store.engine, node, lease)) is not None:
            first = db.STAGES[db.STAGES.index(job.stage) + 1] if job.stage in db.STAGES[:-1] else db.STAGES[0]
            start(job, first, dict(job.results), job.cpu_s)
        if not running:
            return worked
        finished, _ = wait(list(running), timeout=1.0 if progress is not None else None, return_when=FIRST_COMPLETED)
        if progress is not None:
            fill()
        for future in finished:
            job, stage, results, cpu = running.pop(future)
            partial.pop(job.key, None)
            written.pop(job.key, None)
            try:
                result, used = future.result()
            except Exception as exc:  # a worker stopped over its budget, or the search failed
                db.save(store.engine, job.key, node, stage=stage, results=results, cpu_s=cpu,
                        error=f"the analysis failed: {type(exc).__name__}"[:200])
                worked += 1
                if on_done is not None:
                    on_done(job.key, "failed")
                continue
            results[stage] = result if result is not None else {"status": "not_available"}
            last = stage == db.STAGES[-1]
            if db.save(store.engine, job.key, node, stage=stage, results=results, cpu_s=cpu + used, done=last,
                       lease_s=lease) and not last:
                start(job, db.STAGES[db.STAGES.index(stage) + 1], results, cpu + used)
            elif last:
                worked += 1
                if on_done is not None:
                    on_done(job.key, "done")
