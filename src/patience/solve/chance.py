"""The win chance of a game's positions with what the player could see, and each action's drop.

:func:`win_chances` replays a game record and gives each position of the game (the deal, and the
position after each action) an estimate of the chance that **the hint player** (:mod:`patience.solve.hints`,
the strong player of ``patience study --players hint``) wins from there, knowing only what the player
could see there: the face-up cards and every stock card already turned (:mod:`patience.solve.unseen`).

How it is computed (docs/solving.md, "The win chance"):

- **Sampled deals.** ``k`` deals that look exactly like the table are drawn: the unseen cards dealt at
  random into the unseen places (:func:`patience.solve.unseen.visible_deals`, from a generator seeded by
  ``seed`` and the sample's number, never by a hidden card). Each sample is *carried* along the game
  (:func:`patience.solve.unseen.carry`): after each action the same sampled deal, with the cards the
  action turned up put where the real game shows them, so that a position after a move that turns
  nothing up has exactly the samples of the position before, moved.
- **Play-outs.** Each sample is played to its end by the hint player, move by move by
  :func:`patience.solve.hints.hint` (which itself sees only what the player sees, in all three games). A
  play-out's result is remembered for every position it passed, so the samples of the next position,
  when the player played the hint's move, cost nothing.
- **The estimate** of ``won`` of ``n`` samples is calibrated (:mod:`patience.solve.calibration`): the mean
  chance of the positions that show those samples, the posterior under the variant's fitted prior, with
  its 95 % interval (``low``, ``high``); for a variant never fitted, the share won and its Wilson interval
  (``prior`` says which). A position whose every card was seen has no doubt: its samples are all the
  real deal, and the share won is its chance. A won position is 1, a position after a give-up or with no
  useful move left is 0, as is the last position of a game the rules ended though cards are unseen (no
  sampling).
- **An action's drop.** A move's *chance* is the estimate from the position's samples won after that move
  is made on each of them (before the cards it turns up are known). The *played chance* is the played move's;
  the *best chance* the highest among the played move and every move the hint player makes first on some
  sample (the hint sees only what the player sees, so that is one move, the same on every sample, and its
  chance is the position's). ``drop = best -
  played``; ``label`` is ``blunder`` for a drop of at least :data:`BLUNDER` (20 points), ``mistake`` at
  least :data:`MISTAKE` (10), ``inaccuracy`` at least :data:`INACCURACY` (5), and only when the drop is
  clear of the samples' noise (the paired differences, sample by sample, put it above 0 at 95 %, and at
  least two samples are won by the best move and lost by the played one); else None. A give-up's played
  chance is 0; an undo, a rejected move and a move after the end have no figures.
- **Luck.** ``luck`` of an action is the chance after it minus its played chance: what the cards it
  turned up gave or took (0 for a move that turns nothing up). For the game: the deal's chance, the
  outcome, ``luck`` = the sum over actions, ``lost_by_play`` = the sum of the drops; the outcome minus
  the deal's chance is (up to the samples' noise) ``luck - lost_by_play``, so a lost game of a good deal
  played well was unlucky, one of a good deal with big drops was lost by play.

Samples are added in rounds of :data:`ROUND` to every position in the game's order (the first round is
the first graph), until ``samples`` a position or the CPU budget ``budget_s`` (of this thread) is spent;
``on_position`` is called after each position's figures change, so a caller can store the graph as it
fills. The result depends on the record, ``seed``, ``samples`` and how far the budget reached only
(the searches are bounded by positions, not time; a budget cut is marked ``complete: False``); a
position not reached has ``chance`` None ("not decided").

    result = win_chances(record, budget_s=60, seed=1, on_position=store)
    result.positions[0].chance, result.actions[12].label, result.to_dict()
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from patience.games import Move, State
from patience.solve.calibration import Z95, Prior, prior_for, variant, wilson
from patience.solve.unseen import carry, unseen, visible_deals

__all__ = ["ActionChance", "HintPlayer", "PositionChance", "WinChances", "estimator", "label_of", "wilson",
           "win_chances", "win_chances_from"]

ROUND = 4  # samples added to every position a round
DEFAULT_SAMPLES = 32  # samples a position at most
DEFAULT_BUDGET_S = 45.0  # CPU seconds of a game's win chances
MAX_BUDGET_S = 3600.0
INACCURACY, MISTAKE, BLUNDER = 0.05, 0.10, 0.20  # drops in win chance (0..1) that name an action
HINT_CAP_S = 5.0  # a hint's time cap in a play-out: the hint's node bounds decide first
MAX_PLAY = 1_500  # moves of a play-out at most

PositionCallback = Callable[["PositionChance", "ActionChance | None"], None]


def label_of(drop: float | None, clear: bool = True) -> str | None:
    """The name of an action by its drop in win chance (0..1): blunder, mistake, inaccuracy or None.
    ``clear``: the drop is clear of the samples' noise (else None)."""
    if drop is None or not clear:
        return None
    if drop >= BLUNDER - 1e-9:
        return "blunder"
    if drop >= MISTAKE - 1e-9:
        return "mistake"
    if drop >= INACCURACY - 1e-9:
        return "inaccuracy"
    return None


@dataclass
class PositionChance:
    """The win chance of the position after action ``action`` (0: the deal): ``chance`` (None: not decided
    yet), its 95 % interval ``low``..``high``, over ``samples`` sampled deals (0 for a decided end)."""

    action: int
    chance: float | None = None
    low: float = 0.0
    high: float = 1.0
    samples: int = 0
    won: int = 0
    end: str | None = None  # "won", "given_up", "no_moves": no sampling needed

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "chance": _round(self.chance), "low": round(self.low, 4),
                "high": round(self.high, 4), "samples": self.samples}


@dataclass
class ActionChance:
    """Action ``action`` (1-based) seen from the position before it: the move ``played``, the hint player's
    ``best_action`` there (None where no sample had one), ``best_chance``, ``played_chance`` (the samples
    won after the move, before what it turned up is known), ``drop``, ``label`` and ``luck``."""

    action: int
    played: str
    best_action: str | None = None
    best_chance: float | None = None
    played_chance: float | None = None
    drop: float | None = None
    label: str | None = None
    luck: float | None = None
    # per move weighed (the played one, the hint player's): won on each sample after it
    _results: dict[str, list[bool]] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "played": self.played, "best_action": self.best_action,
                "best_chance": _round(self.best_chance), "played_chance": _round(self.played_chance),
                "drop": _round(self.drop), "label": self.label, "luck": _round(self.luck)}


@dataclass
class WinChances:
    """The win chances of one game: see the module docstring."""

    game: str
    outcome: str | None
    positions: list[PositionChance]
    actions: list[ActionChance]  # actions[k] is action k + 1
    seed: int
    samples: int  # asked for a position at most
    budget_s: float
    seconds: float = 0.0
    playouts: int = 0
    complete: bool = True
    prior: str | None = None  # the variant whose fitted prior made the samples chances (None: the share won)
    unjudged: int = 0  # actions to judge (moves, a give-up) the budget left without figures

    @property
    def deal_chance(self) -> float | None:
        return self.positions[0].chance

    def summary(self) -> dict[str, Any]:
        """The deal's chance, the outcome (1 won, 0 not), the luck and what play lost, the labels counted.
        The luck and what play lost are None when the budget left an action without figures
        (``unjudged``): their sums would miss it (a give-up not judged made a lost game look played without
        a loss). A budget that ran out in a later round of samples, every action judged, leaves them."""
        won = 1.0 if self.outcome == "won" else 0.0
        drops = [a.drop for a in self.actions if a.drop is not None]
        lucks = [a.luck for a in self.actions if a.luck is not None]
        labels = Counter(a.label for a in self.actions if a.label)
        deal = self.deal_chance
        return {"deal_chance": _round(deal), "result": won,
                "luck": _round(sum(lucks)) if lucks and not self.unjudged else None,
                "lost_by_play": _round(sum(drops)) if drops and not self.unjudged else None,
                "result_minus_deal": None if deal is None else _round(won - deal),
                "inaccuracies": labels["inaccuracy"], "mistakes": labels["mistake"], "blunders": labels["blunder"]}

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "samples": self.samples, "budget_s": self.budget_s, "prior": self.prior,
                "seconds": round(self.seconds, 3), "playouts": self.playouts, "complete": self.complete,
                "unjudged": self.unjudged,
                "thresholds": {"inaccuracy": INACCURACY, "mistake": MISTAKE, "blunder": BLUNDER},
                **self.summary(),
                "positions": [p.to_dict() for p in self.positions],
                "actions": [a.to_dict() for a in self.actions]}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


class HintPlayer:
    """The hint player's result from a deal (a sampled one, or the real one in ``benchmarks/win_chance.py``:
    the prediction and the observation are of this one player, each hint capped at :data:`HINT_CAP_S`),
    remembered by position."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.memo: dict[Hashable, bool] = {}
        self.first: dict[Hashable, Move | None] = {}  # the hint player's move from a position
        self.playouts = 0

    def wins(self, state: State) -> bool:
        key = state.key()
        known = self.memo.get(key)
        if known is not None:
            return known
        self.playouts += 1
        return self._play(state)

    def _play(self, state: State) -> bool:
        from patience.solve.hints import hint

        s = with_history(state)
        path: list[Hashable] = []
        won: bool | None = None
        for _ in range(MAX_PLAY):
            key = s.key()
            known = self.memo.get(key)
            if known is not None:
                won = known
                break
            path.append(key)
            if s.is_won():
                won = True
                break
            move = hint(s, budget_s=HINT_CAP_S)
            self.first[key] = move
            if move is None:
                won = False
                break
            s.push(move)
        for key in path:
            self.memo[key] = bool(won)
        return bool(won)

    def move(self, state: State) -> Move | None:
        """The hint player's move from ``state`` (after :meth:`wins` on it)."""
        return self.first.get(state.key())


def with_history(state: State) -> State:
    out = state.copy()
    out._history = list(state._history)
    return out


def _end(state: State, given_up: bool) -> str | None:
    """How the game ended at a real position of the record (the rules' own end: every position but the last
    has a useful move, or the game would have ended there), or None while it goes on."""
    outcome = state.outcome()
    if given_up and outcome is None:
        return "given_up"
    return None if outcome is None else outcome.value


def win_chances(record: Mapping[str, Any], *, budget_s: float = DEFAULT_BUDGET_S, samples: int = DEFAULT_SAMPLES,
                seed: int = 0, on_position: PositionCallback | None = None,
                positions: Collection[int] | None = None) -> WinChances:
    """The win chance of every position of a game record and every action's drop (module docstring).

    Input: ``record`` (a game record that replays exactly; RecordError if not), ``budget_s`` (CPU seconds
    of this thread for the whole game), ``samples`` (sampled deals a position at most), ``seed`` (the
    samples' generator: the same record, seed, samples and budget reached give the same figures),
    ``on_position(position, action)`` called whenever a position's figures change (``action`` is the
    action that led to it, None for the deal), the first time after the first :data:`ROUND` samples.
    ``positions``: estimate only these positions (action numbers; a benchmark's choice), and the actions
    from them; the others stay None (default: every position).

    Output: :class:`WinChances`: ``positions[i]`` (``chance``, ``low``, ``high``, ``samples``; ``chance``
    None where the budget did not reach), ``actions[i - 1]`` (``played``, ``best_action``, ``best_chance``,
    ``played_chance``, ``drop``, ``label``, ``luck``), ``summary()``, ``to_dict()``."""
    from patience.record import replay
    from patience.session import ManualClock, Session

    finished = replay(record)
    initial = Session(finished.game_id, finished.seed, finished.options, clock=ManualClock()).state
    return win_chances_from(initial, [str(action["m"]) for action in record["actions"]],
                            outcome=finished.outcome.value if finished.outcome else None, budget_s=budget_s,
                            samples=samples, seed=seed, on_position=on_position, positions=positions)


def win_chances_from(initial: State, texts: Sequence[str], *, outcome: str | None = None,
                     budget_s: float = DEFAULT_BUDGET_S, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                     on_position: PositionCallback | None = None,
                     positions: Collection[int] | None = None) -> WinChances:
    """:func:`win_chances` of the game that starts at ``initial`` (a deal, or any position) and goes on by the
    actions ``texts`` (moves, ``undo``, ``giveup``; a move the rules refuse counts as a rejected one and
    changes nothing); ``outcome`` is the game's (``won`` or other), for the summary."""
    if not 0 < budget_s <= MAX_BUDGET_S:
        raise ValueError(f"budget_s must be more than 0 and at most {MAX_BUDGET_S:g}")
    if samples < 1:
        raise ValueError("samples must be at least 1")
    started = time.thread_time()
    state = with_history(initial)
    # the game's positions: the real state (read through unseen() and carry() only: which cards are unseen,
    # never where) and how each was reached
    reals: list[State] = [with_history(state)]
    came_from: list[int] = [-1]  # the position an action starts from
    same_as: list[int] = [0]  # the position whose samples a position has: itself, or the one an undo went back to
    moves: list[Move | None] = [None]  # the move played (None: undo, give-up, illegal)
    kinds: list[str] = ["deal"]
    trail = [0]  # the positions of the current line of play
    for number, text in enumerate(texts, 1):
        came_from.append(trail[-1])
        move: Move | None = None
        if text == "undo":
            state.pop()
            trail.pop()
            kind, own = "undo", trail[-1]
        elif text == "giveup":
            kind, own = "giveup", number
        else:
            parsed = state.parse_move(text)
            if state.check(parsed) is None:
                state._apply(parsed)
                move = parsed
                kind, own = "move", number
                trail.append(number)
            else:  # a rejected move (a record keeps them where the game charges for them)
                kind, own = "illegal", trail[-1]
        same_as.append(own)
        moves.append(move)
        kinds.append(kind)
        reals.append(with_history(state))
    n = len(reals)
    wanted = set(range(n)) if positions is None else set(positions)
    # with every card seen, each sample is the real deal: its share won is its chance, with no doubt
    known = [not unseen(real)[0] for real in reals]
    chances = [PositionChance(i) for i in range(n)]
    for i in range(n):
        end = _end(reals[i], kinds[i] == "giveup")
        if end is not None and same_as[i] == i:
            _decided(chances[i], end)
    actions = [ActionChance(i, texts[i - 1]) for i in range(1, n)]
    player = HintPlayer(initial.INFO.id)
    prior = prior_for(initial.INFO.id, initial.options)
    estimate = estimator(prior)
    result = WinChances(initial.INFO.id, outcome, chances, actions, seed, samples, budget_s,
                        prior=None if prior is None else variant(initial.INFO.id, initial.options))
    sampled: list[list[State]] = [[] for _ in range(n)]  # the samples of each position (its own ones)
    wins: list[list[bool]] = [[] for _ in range(n)]  # ... and whether the hint player wins each
    done = 0
    while done < samples and result.complete:
        count = min(ROUND, samples - done)
        rngs = [random.Random(f"{seed}/{j}") for j in range(done, done + count)]
        for i in range(n):
            if time.thread_time() - started >= budget_s:
                result.complete = False
                break
            own, p = same_as[i], chances[i]
            if own == i and kinds[i] != "giveup":
                if i == 0:
                    news = [visible_deals(reals[0], 1, rng)[0] for rng in rngs]
                else:
                    news = [carry(_after(s, moves[i]), reals[i], rng)
                            for rng, s in zip(rngs, sampled[came_from[i]][done:done + count], strict=True)]
                sampled[i].extend(news)
                if p.end is None and i in wanted:
                    wins[i].extend(player.wins(s) for s in news)
                    p.samples = len(wins[i])
                    p.won = sum(wins[i])
                    p.chance, p.low, p.high = (exact if known[i] else estimate)(p.won, p.samples)
            elif own != i:
                q = chances[own]
                p.chance, p.low, p.high, p.samples, p.won, p.end = q.chance, q.low, q.high, q.samples, q.won, q.end
            a = actions[i - 1] if i > 0 else None
            if a is not None and came_from[i] in wanted:
                _judge(a, kinds[i], chances, came_from[i], i, moves[i], sampled, player, done + count,
                       exact if known[came_from[i]] else estimate)
            if on_position is not None:
                on_position(p, a)
        done += count
    result.seconds = time.thread_time() - started
    result.playouts = player.playouts
    result.unjudged = sum(1 for i in range(1, n) if kinds[i] in ("move", "giveup") and came_from[i] in wanted
                          and chances[came_from[i]].end is None and actions[i - 1].drop is None)
    return result


Estimator = Callable[[int, int], tuple[float, float, float]]


def estimator(prior: Prior | None) -> Estimator:
    """``won`` of ``n`` samples made a chance and its 95 % interval: the posterior under the variant's
    fitted prior (:mod:`patience.solve.calibration`), else the share won and its Wilson interval."""
    if prior is not None:
        return prior.estimate

    def share(won: int, n: int) -> tuple[float, float, float]:
        return (won / n, *wilson(won, n))

    return share


def exact(won: int, n: int) -> tuple[float, float, float]:
    """The chance of a position whose every card was seen: all its samples are the one real deal."""
    share = won / n
    return share, share, share


def _decided(p: PositionChance, end: str) -> None:
    p.end = end
    p.chance = p.low = p.high = 1.0 if end == "won" else 0.0


def _after(sample: State, move: Move | None) -> State:
    out = with_history(sample)
    assert move is not None
    out._apply(move)  # legal on every sample: what may be played depends on the seen cards only
    return out


def _judge(a: ActionChance, kind: str, positions: list[PositionChance], before: int, after: int,
           move: Move | None, sampled: list[list[State]], player: HintPlayer, upto: int,
           estimate: Estimator) -> None:
    """Action ``a``'s figures from the first ``upto`` samples of the position before it: the played
    move's samples won, and those of each move the hint player makes on some sample (one move, the same
    on every sample, whose chance is the position's: the hint sees what the player sees), each made a
    chance by ``estimate`` (a give-up's is 0: it loses for certain)."""
    start = positions[before]
    if kind in ("undo", "illegal") or start.end is not None:
        return
    samples = sampled[before][:upto]
    candidates: dict[str, Move] = {}
    for s in samples:
        first = player.move(s)
        if first is not None:
            candidates.setdefault(str(first), first)
    if kind == "move":
        assert move is not None
        candidates.setdefault(str(move), move)
    results = a._results
    for text, candidate in candidates.items():
        got = results.setdefault(text, [])
        got.extend(player.wins(_after(s, candidate)) for s in samples[len(got):])
    played = [False] * len(samples) if kind == "giveup" else results[str(move)]
    counted = Counter(str(m) for s in samples if (m := player.move(s)) is not None)
    # the best: the move whose samples are won most often, the hint player's most frequent move on a tie
    best_text = max(results, key=lambda t: (sum(results[t]), counted.get(t, 0), t == str(move)), default=None)
    best = results[best_text] if best_text is not None else played
    a.best_action = best_text
    a.best_chance = estimate(sum(best), len(best))[0]
    a.played_chance = 0.0 if kind == "giveup" else estimate(sum(played), len(played))[0]
    a.drop = max(0.0, a.best_chance - a.played_chance)
    a.label = label_of(a.drop, _clear(best, played))
    now = positions[after].chance
    a.luck = 0.0 if kind == "giveup" else None if now is None else now - a.played_chance


def _clear(best: list[bool], played: list[bool]) -> bool:
    """Is the paired drop (best minus played, sample by sample) clear of 0 at 95 %? With few samples
    a single sample's difference is no evidence: at least two samples must differ one way."""
    diffs = [int(b) - int(p) for b, p in zip(best, played, strict=True)]
    k = len(diffs)
    if k == 0:
        return False
    mean = sum(diffs) / k
    if sum(d > 0 for d in diffs) < 2:
        return False
    var = sum((d - mean) ** 2 for d in diffs) / max(1, k - 1)
    return mean - Z95 * math.sqrt(var / k) > 0

