"""The analysis of a finished game with every card known: where it was won or lost.

:func:`analyse` replays a game record and gives each position of the game (the deal, and the
position after each action) a verdict of the game's solver: **winnable**, **unwinnable**, or
**unknown** (not decided within the budget), plus **won** for a won position and **given_up**
for the position after a give-up. From them it names the **first action after which the deal
could no longer be won** (1-based; None when the game was won or the deal was never winnable),
the solver's winning line from the last winnable position, and whether the deal was never
winnable::

    analysis = analyse(record, budget=Budget(seconds=1.0), game_seconds=10.0)
    analysis.first_losing_action, analysis.never_winnable, analysis.better_line

Few positions are searched. The positions of a game form a tree (an undo goes back to a position
already met; a move played again after an undo leads to the same one), and the rules give, in
every game, that a position reached by a legal move from an unwinnable one is unwinnable and a
position with a winnable child is winnable: what can be played depends only on the position (the
cards, and the passes of the stock begun: Der Fächer's one redeal, Teppich's waste passes, counted
in the position), so a winning line from a child is one from its parent with the move in front,
and a winning line from a child of an unwinnable position would be one from that position. So a
verdict spreads: winnable to every position before it on its branch, unwinnable to every position
after it, and both to every position equal to it. A solver's winning line also makes winnable
every position of the game that lies on it (a player who followed the line). Along a branch the
verdicts are then winnable up to some position and unwinnable after it, so the positions searched
are chosen by bisection: the deal, the branch's last position, then the middle of what is left
between the last known winnable and the first known unwinnable position. An unknown answer
splits that stretch in two and both halves go on. A won game needs no search at all (every
position before a won one is winnable), and a lost one a dozen in a game of 200 actions.

The first losing action is the action after which no position of the game was winnable again
(a move played and then taken back by an undo is a *slip*, listed apart); a give-up on a
winnable position is it. When positions after the last winnable one are unknown, it is not
decided: ``first_losing_action`` is None and ``first_losing_range`` gives the first and the last
action it can be. :func:`analyse_file` reads any record file: a solo game, a duel or Play now
match (both games), or a day's deal (every game of it).
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patience.errors import BadInputError, IllegalMoveError, RecordError
from patience.games import Move, Outcome, State
from patience.options import options_to_dict
from patience.solve.search import Budget, Status

if TYPE_CHECKING:
    from patience.solve.chance import WinChances

__all__ = ["Analysis", "PositionVerdict", "analyse", "analyse_data", "analyse_file"]

WON, WINNABLE, UNWINNABLE, UNKNOWN, GIVEN_UP = "won", "winnable", "unwinnable", "unknown", "given_up"
_ALIVE = (WON, WINNABLE)
_LOST = (UNWINNABLE, GIVEN_UP)
DEFAULT_POSITION_BUDGET = Budget(seconds=2.0, memory_mb=128.0)
DEFAULT_GAME_SECONDS = 20.0
MAX_GAME_SECONDS = 3600.0


@dataclass
class PositionVerdict:
    """The verdict on the position after action ``action`` (0: the deal) and how it was reached.

    ``by``: ``solver`` (searched here), ``line`` (on a winning line the solver found from an earlier
    position), ``later`` (a position after it on its branch is winnable), ``earlier`` (one before it
    is unwinnable), ``same`` (an equal position met elsewhere in the game), ``won``, ``given_up``,
    ``budget`` (not searched: the game's budget was spent)."""

    action: int
    move: str | None  # the action's text: a move, "undo", "giveup"; None for the deal
    verdict: str
    by: str
    illegal: bool = False  # a rejected move (Der Fächer charges for them): the position stays
    nodes: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "move": self.move, "verdict": self.verdict, "by": self.by}
        if self.illegal:
            out["illegal"] = True
        if self.by == "solver":
            out["nodes"] = self.nodes
            out["seconds"] = round(self.seconds, 4)
        return out


@dataclass
class Analysis:
    """The analysis of one game: see the module docstring."""

    game: str
    options: dict[str, Any]
    seed: Any
    outcome: str | None
    positions: list[PositionVerdict]
    first_losing_action: int | None
    first_losing_range: tuple[int, int] | None  # when undecided positions leave it open
    never_winnable: bool
    slips: list[int]  # actions that lost a winnable position and were taken back
    better_from: int | None  # the position (action number) the better line starts from
    better_line: list[Move]
    searches: int
    nodes: int
    seconds: float  # CPU time of the analysis (the replay and every search)
    complete: bool  # False when the game's budget ran out before every position had a verdict
    budget: dict[str, Any] = field(default_factory=dict)
    # positions (action numbers) the solver called unwinnable though a winning line, checked by the rules
    # engine, wins from them: a fault of the solver, never expected; the line's verdict is kept
    conflicts: list[int] = field(default_factory=list)
    # the win chance with what the player could see (patience.solve.chance), when asked for
    chances: WinChances | None = None

    @property
    def actions(self) -> int:
        return len(self.positions) - 1

    def runs(self) -> list[tuple[int, int, str]]:
        """The verdicts as runs: (first action, last action, verdict)."""
        out: list[tuple[int, int, str]] = []
        for p in self.positions:
            if out and out[-1][2] == p.verdict:
                out[-1] = (out[-1][0], p.action, p.verdict)
            else:
                out.append((p.action, p.action, p.verdict))
        return out

    def to_dict(self) -> dict[str, Any]:
        losing = self.first_losing_action
        positions = [p.to_dict() for p in self.positions]
        return {
            "game": self.game, "options": self.options, "seed": self.seed, "outcome": self.outcome,
            "actions": self.actions,
            "deal": self.positions[0].verdict,
            "first_losing_action": losing,
            "first_losing_range": list(self.first_losing_range) if self.first_losing_range else None,
            "losing_move": self.positions[losing].move if losing else None,
            "never_winnable": self.never_winnable,
            "slips": self.slips,
            "better_line": None if self.better_from is None else
            {"from_action": self.better_from, "moves": [str(m) for m in self.better_line]},
            "positions": positions,
            "runs": [{"from": a, "to": b, "verdict": v} for a, b, v in self.runs()],
            "searches": self.searches, "nodes": self.nodes, "seconds": round(self.seconds, 4),
            "complete": self.complete, "budget": self.budget, "conflicts": self.conflicts,
            **self._chance_dict(positions),
        }

    def _chance_dict(self, positions: list[dict[str, Any]]) -> dict[str, Any]:
        """The win chance's figures (when asked for): each position gains ``chance``, ``low``, ``high`` and
        ``samples`` (``chance`` null: not decided within the budget), each action's position
        ``best_action``, ``best_chance``, ``played_chance``, ``drop``, ``label`` and ``luck``; the game's
        figures go under ``win_chance``."""
        if self.chances is None:
            return {}
        out = self.chances.to_dict()
        for entry, chance in zip(positions, out.pop("positions"), strict=True):
            entry.update({k: v for k, v in chance.items() if k != "action"})
        for entry, action in zip(positions[1:], out.pop("actions"), strict=True):
            entry.update({k: v for k, v in action.items() if k not in ("action", "played")})
        return {"win_chance": out}

    def text(self) -> str:
        """A readable account: the verdicts in runs, the key moment, the better line."""
        from patience.games import get_game

        name = get_game(self.game).INFO.names.get("en", self.game)
        opts = " ".join(f"{k}={v}" for k, v in self.options.items())
        lines = [f"{name}{f' ({opts})' if opts else ''}, deal {self.seed}: "
                 f"{(self.outcome or 'not over').replace('_', ' ')} after {self.actions} actions"]
        for a, b, verdict in self.runs():
            span = f"{a}" if a == b else f"{a}-{b}"
            lines.append(f"  {span:>9}  {verdict.replace('_', ' ')}")
        if self.outcome == Outcome.WON.value:
            lines.append("Won: every position was winnable.")
        elif self.never_winnable:
            lines.append("The deal was never winnable: no play could have won it.")
        elif self.first_losing_action is not None:
            n = self.first_losing_action
            lines.append(f"The deal could no longer be won after action {n}, {self.positions[n].move}.")
        elif self.first_losing_range is not None:
            lo, hi = self.first_losing_range
            lines.append(f"The deal was lost by one of actions {lo}-{hi} (positions there are undecided).")
        elif self.positions[-1].verdict in _ALIVE:
            lines.append("The last position was still winnable: no action lost the deal.")
        else:
            lines.append("Not decided whether the deal could be won (the budget ran out).")
        if self.slips:
            lines.append(f"Lost and taken back: after action{'s' if len(self.slips) > 1 else ''} "
                         f"{', '.join(str(s) for s in self.slips)}.")
        if self.better_from is not None:
            where = "the deal" if self.better_from == 0 else f"the position after action {self.better_from}"
            lines.append(f"The solver's win from {where}, {len(self.better_line)} moves:")
            lines.extend(textwrap.wrap(" ".join(str(m) for m in self.better_line), 100, initial_indent="  ",
                                       subsequent_indent="  ", break_on_hyphens=False))
        if self.conflicts:
            lines.append(f"The solver called positions unwinnable that a checked line wins (after actions "
                         f"{', '.join(str(c) for c in self.conflicts)}): they are shown winnable.")
        if self.chances is not None:
            lines.extend(_chance_text(self.chances))
        searched = f"{self.searches} position{'s' if self.searches != 1 else ''} searched"
        lines.append(f"{searched}, {self.nodes} nodes, {self.seconds:.2f} s of CPU"
                     f"{'' if self.complete else ' (the budget ran out)'}")
        return "\n".join(lines)


def _chance_text(chances: WinChances) -> list[str]:
    def pct(x: float | None) -> str:
        return "not decided" if x is None else f"{100 * x:.0f} %"

    first = chances.positions[0]
    out = [f"Win chance with what the player could see: the deal {pct(first.chance)} "
           f"({pct(first.low)} - {pct(first.high)}, {first.samples} samples)"]
    summary = chances.summary()
    if summary["luck"] is not None:
        out.append(f"  the cards turned up gave {100 * summary['luck']:+.0f} points, the play lost "
                   f"{100 * (summary['lost_by_play'] or 0):.0f} points")
    for a in chances.actions:
        if a.label:
            out.append(f"  action {a.action}, {a.played}: {a.label}, {pct(a.played_chance)} where "
                       f"{a.best_action or 'the best choice'} kept {pct(a.best_chance)}")
    if not chances.complete:
        out.append(f"  (the win chance's budget of {chances.budget_s:g} s ran out: later positions have fewer "
                   "samples or none)")
    return out


@dataclass
class _Node:
    """A position of the game's tree: reached from ``parent`` by ``move``."""

    state: State
    key: Hashable
    parent: int | None
    move: Move | None
    children: dict[str, int] = field(default_factory=dict)
    verdict: str | None = None  # WINNABLE (WON too), UNWINNABLE, or None
    by: str = "budget"
    line: list[Move] | None = None  # a winning line from here, when winnable
    asked: bool = False
    nodes: int = 0
    seconds: float = 0.0


class _Tree:
    def __init__(self) -> None:
        self.nodes: list[_Node] = []
        self.by_key: dict[Hashable, list[int]] = {}
        self.conflicts: list[int] = []  # positions the solver called unwinnable that a checked line wins

    def add(self, state: State, parent: int | None, move: Move | None) -> int:
        index = len(self.nodes)
        key = state.key()
        self.nodes.append(_Node(state, key, parent, move))
        self.by_key.setdefault(key, []).append(index)
        if state.is_won():
            self.settle(index, WINNABLE, "won", [])
        else:  # a position equal to one already judged
            for other in self.by_key[key]:
                known = self.nodes[other]
                if other != index and known.verdict is not None:
                    self.settle(index, known.verdict, "same", known.line)
                    break
        return index

    def settle(self, index: int, verdict: str, by: str, line: list[Move] | None) -> None:
        """Give ``index`` its verdict and spread it (see the module docstring)."""
        work: list[tuple[int, str, str, list[Move] | None]] = [(index, verdict, by, line)]
        while work:
            i, v, how, moves = work.pop()
            node = self.nodes[i]
            if node.verdict is not None:
                if node.verdict != v and i not in self.conflicts:
                    self.conflicts.append(i)
                # a winnable verdict rests on a line the rules engine played through; an unwinnable one on
                # the search alone: where they disagree, the line wins
                if node.verdict == WINNABLE or v != WINNABLE:
                    continue
            node.verdict, node.by, node.line = v, how, moves
            work.extend((j, v, "same", moves) for j in self.by_key[node.key] if j != i)
            if v == WINNABLE:
                if node.parent is not None and node.move is not None:
                    work.append((node.parent, v, "later", None if moves is None else [node.move, *moves]))
            else:
                work.extend((c, v, "earlier", None) for c in node.children.values())

    def follow_line(self, index: int, line: list[Move]) -> None:
        """Every position of the game on the winning line ``line`` from ``index`` is winnable."""
        state = self.nodes[index].state.copy()
        for step, move in enumerate(line[:-1], 1):
            state._apply(move)
            for j in self.by_key.get(state.key(), ()):
                self.settle(j, WINNABLE, "line", line[step:])

    def path(self, leaf: int) -> list[int]:
        out = [leaf]
        while (parent := self.nodes[out[-1]].parent) is not None:
            out.append(parent)
        return out[::-1]


def _next(tree: _Tree, paths: list[list[int]]) -> int | None:
    """The next position to search: on the first branch whose verdicts are still open, the deal, then
    the branch's end, then the middle of the open stretch (bisection)."""
    for path in paths:
        verdicts = [tree.nodes[i].verdict for i in path]
        last_w = max((k for k, v in enumerate(verdicts) if v == WINNABLE), default=-1)
        first_u = next((k for k in range(last_w + 1, len(path)) if verdicts[k] == UNWINNABLE), len(path))
        open_ = [k for k in range(last_w + 1, first_u) if verdicts[k] is None and not tree.nodes[path[k]].asked]
        if not open_:
            continue
        if open_[0] == 0:
            return path[0]
        if open_[-1] == len(path) - 1:
            return path[-1]
        return path[open_[len(open_) // 2]]
    return None


def analyse(record: Mapping[str, Any], *, budget: Budget | None = None,
            game_seconds: float | None = DEFAULT_GAME_SECONDS, chance_s: float | None = None,
            chance_samples: int | None = None, chance_seed: int = 0) -> Analysis:
    """Analyse one game record (it must replay exactly; RecordError if not): see the module docstring.

    ``budget`` bounds each position's search (its seconds are cut to what is left of ``game_seconds``,
    the CPU time of the whole analysis; None: no bound). ``chance_s``: also the win chance with what the
    player could see (:func:`patience.solve.chance.win_chances`), within that many CPU seconds, with at most
    ``chance_samples`` samples a position and the samples' seed ``chance_seed``."""
    from patience.record import replay
    from patience.session import ManualClock, Session
    from patience.solve.solution import solve

    budget = budget or DEFAULT_POSITION_BUDGET
    chances = None
    if chance_s is not None:
        from patience.solve.chance import DEFAULT_SAMPLES, win_chances

        chances = win_chances(record, budget_s=chance_s, samples=chance_samples or DEFAULT_SAMPLES,
                              seed=chance_seed)
    started = time.thread_time()
    finished = replay(record)  # checks the whole record (RecordError), the end and the result
    clock = ManualClock()
    session = Session(finished.game_id, finished.seed, finished.options, clock=clock)
    tree = _Tree()
    current = tree.add(session.state.copy(), None, None)
    at = [current]  # the node of each position, in the game's order
    texts: list[str | None] = [None]
    illegal: list[bool] = [False]
    given_up: int | None = None
    for number, action in enumerate(record["actions"], 1):
        clock.set_ms(int(action.get("t", 0)))
        text = str(action["m"])
        texts.append(text)
        illegal.append(bool(action.get("illegal")))
        if text == "undo":
            session.undo()
            parent = tree.nodes[current].parent
            assert parent is not None
            current = parent
        elif text == "giveup":
            session.give_up()
            given_up = number
        else:
            try:
                move = session.play(text)
            except IllegalMoveError:  # a rejected move the record keeps (replay checked it is marked)
                at.append(current)
                continue
            child = tree.nodes[current].children.get(str(move))
            if child is None:
                child = tree.add(session.state.copy(), current, move)
                tree.nodes[current].children[str(move)] = child
                parent_verdict = tree.nodes[current].verdict
                if parent_verdict == UNWINNABLE:
                    tree.settle(child, UNWINNABLE, "earlier", None)
            current = child
        at.append(current)

    leaves = [at[-1]] + [i for i, node in enumerate(tree.nodes) if not node.children and i != at[-1]]
    paths = [tree.path(leaf) for leaf in leaves]
    searches = nodes_total = 0
    complete = True
    while (index := _next(tree, paths)) is not None:
        left = None if game_seconds is None else game_seconds - (time.thread_time() - started)
        if left is not None and left <= 0:
            complete = False
            break
        seconds = budget.seconds if left is None else left if budget.seconds is None else min(budget.seconds, left)
        node = tree.nodes[index]
        node.asked = True
        # solve() plays a winning line through the rules engine before it reports it
        solution = solve(node.state, Budget(seconds, budget.nodes, budget.memory_mb))
        searches += 1
        nodes_total += solution.nodes
        node.nodes, node.seconds = solution.nodes, solution.seconds
        if solution.status is Status.WON:
            tree.settle(index, WINNABLE, "solver", list(solution.moves))
            tree.follow_line(index, list(solution.moves))
        elif solution.status is Status.UNWINNABLE:
            tree.settle(index, UNWINNABLE, "solver", None)
        else:
            node.by = "solver"

    positions: list[PositionVerdict] = []
    for number, index in enumerate(at):
        node = tree.nodes[index]
        verdict = node.verdict or UNKNOWN
        by = node.by
        if verdict == WINNABLE and node.state.is_won():
            verdict = WON
        if given_up is not None and number >= given_up:
            verdict, by = GIVEN_UP, "given_up"
        if by == "budget" and node.asked:
            by = "solver"
        positions.append(PositionVerdict(number, texts[number], verdict, by, illegal[number],
                                         node.nodes if by == "solver" else 0,
                                         node.seconds if by == "solver" else 0.0))
    if any(p.verdict == UNKNOWN and p.by == "budget" for p in positions):
        complete = False

    outcome = finished.outcome.value if finished.outcome else None
    verdicts = [p.verdict for p in positions]
    never = verdicts[0] == UNWINNABLE
    first: int | None = None
    span: tuple[int, int] | None = None
    better_from: int | None = None
    last_w = max((k for k, v in enumerate(verdicts) if v in _ALIVE), default=-1)
    if outcome != Outcome.WON.value and not never and 0 <= last_w < len(verdicts) - 1:
        better_from = last_w
        unknown_after = [k for k in range(last_w + 1, len(verdicts)) if verdicts[k] == UNKNOWN]
        if not unknown_after:
            first = last_w + 1
        else:
            span = (last_w + 1, min(unknown_after[-1] + 1, len(verdicts) - 1))
    slips = [k for k in range(1, len(verdicts))
             if verdicts[k - 1] in _ALIVE and verdicts[k] in _LOST and k != first and k < last_w]
    better_line: list[Move] = []
    if better_from is not None:
        better_line = list(tree.nodes[at[better_from]].line or [])
    return Analysis(
        game=finished.game_id, options=options_to_dict(finished.options, only_changed=True), seed=finished.seed,
        outcome=outcome, positions=positions, first_losing_action=first, first_losing_range=span,
        never_winnable=never, slips=slips, better_from=better_from, better_line=better_line,
        searches=searches, nodes=nodes_total, seconds=time.thread_time() - started, complete=complete,
        conflicts=sorted({number for number, index in enumerate(at) if index in tree.conflicts}), chances=chances,
        budget={"game_s": game_seconds, "position_s": budget.seconds, "position_nodes": budget.nodes,
                "memory_mb": budget.memory_mb})


def analyse_data(data: Any, *, budget: Budget | None = None, game_seconds: float | None = DEFAULT_GAME_SECONDS,
                 **chance: Any) -> tuple[str, list[Analysis]]:
    """Analyse what a record file holds: a game record (one analysis), a finished match (both games,
    after :func:`patience.duel.verify_match`) or a day's deal once revealed (every game of it). Returns
    the kind (``game``, ``match``, ``daily``) and the analyses; RecordError for anything else."""
    from patience.daily import DAILY_FORMAT, verify_daily
    from patience.duel import MATCH_FORMAT, verify_match
    from patience.session import RECORD_FORMAT

    if not isinstance(data, Mapping):
        raise RecordError("a record is a JSON object")
    kind = data.get("format")
    if kind == MATCH_FORMAT:
        verify_match(data)  # a match still going on has no seed: nothing of its deal is analysed
        kind_name, games = "match", list(data["games"])
    elif kind == DAILY_FORMAT:
        verify_daily(data)
        kind_name, games = "daily", list(data.get("games") or [])
    elif kind == RECORD_FORMAT:
        kind_name, games = "game", [data]
    else:
        raise RecordError(f"not a game, match or day record (format {RECORD_FORMAT!r}, {MATCH_FORMAT!r} or "
                          f"{DAILY_FORMAT!r})")
    return kind_name, [analyse(game, budget=budget, game_seconds=game_seconds, **chance) for game in games]


def analyse_file(path: str | Path, *, budget: Budget | None = None, game_seconds: float | None = DEFAULT_GAME_SECONDS,
                 **chance: Any) -> tuple[str, list[Analysis]]:
    """:func:`analyse_data` of the JSON in a file (read within the bounds of every record file); ``chance``:
    :func:`analyse`'s ``chance_s``, ``chance_samples``, ``chance_seed``."""
    from patience.record import load_record

    file = Path(path)
    if not file.exists():
        raise BadInputError(f"{path}: no such file")
    if not file.is_file():
        raise BadInputError(f"{path} is not a regular file")
    return analyse_data(load_record(file), budget=budget, game_seconds=game_seconds, **chance)
