"""Hints while playing: a good next move for the position a person is looking at.

A hint may only use what the player has seen (RULES.md: every stock starts face down): the face-up
cards, and a stock's cards once they were turned (:mod:`patience.solve.unseen`).

- Base Teppich: any card that can go up (the order of play never matters there).
- Teppich with a waste and Der Fächer, while stock cards are unseen (until the first pass through
  the stock is over: a redeal keeps the order, RULES.md): a **sampled search**
  like Solitaire Reloaded's below. The unseen stock cards are dealt at random into the stock
  :data:`STOCK_SAMPLES` times (:func:`visible_deals`, from a generator seeded by what is unseen, so the
  same table always gets the same hint, whatever the real stock's order), each order is solved by the
  compiled core with :data:`STOCK_SAMPLE_NODES` positions, and the hint is the move after which most of
  them are won: the moves are weighed in a careful player's order (Teppich: the stock first, then a card
  to its foundation, or the other way round where gaps are filled from the stock; Der Fächer: a card
  to its foundation, onto a pile, the talon) and the first that
  keeps every order won that the position wins is taken at once. When no sampled order is won within
  the budget, the greedy player's move. (Once a hint followed the solver's line, computed with the
  real stock: a player asking for hints learnt about the stock's order.)
- Teppich with a waste and Der Fächer once every card was seen: nothing is hidden, so the hint is a
  move of the solver's winning line from this position: a card to a foundation when a winning line
  starts with one (so the hint never says "draw" while a card can go up and the game stays won), else
  the first move of the solver's line; when the solver finds no win in its budget, the greedy
  player's move.
- Solitaire Reloaded: the hint may only use what the player has seen: the face-up cards, and the
  stock's cards once they were turned (the waste's cards, and after the first redeal the whole
  stock in its order, since redealing keeps the order); never a face-down card, nor the order
  of the cards not yet turned. It is a **determinized search** (hindsight optimisation, as in
  Bjarnason, Fern & Tadepalli, "Lower bounding Klondike solitaire with Monte-Carlo planning",
  2009): the unseen cards are dealt at random into the unseen places many times over (every
  such deal fits what was seen), each deal is solved by the compiled Klondike core with a small
  budget, and the hint is the move after which most deals are still won. Candidates are taken
  in the order a careful player prefers (a card turned up; before the first redeal the stock,
  which shows a card and commits nothing; a card to a foundation, the waste's card onto the
  tableau, a run that frees a card, the stock, a card back from a foundation), and the first
  that keeps every deal won that the position wins is taken at once. Once every talon card was
  seen, the moves weighed are whole *lines* instead: the moves up to the next face-down card
  turned up (or the win), which touch no unseen card before their last move and so are the same
  in every sampled deal; the hint is the first move of the line after which most deals are won
  (lines are taken in a careful player's order: those that turn up a card of the pile with the
  most face-down cards first, shorter lines first among them; the first that keeps every deal
  won is taken at once: each deal is solved with every card seen, so many lines keep them all
  won, and which of those comes first decides most hints). A move that commits a card
  (the waste's card onto the tableau, a King into a gap) is then worth only what the one line of
  play it starts is worth, not what each deal's own best line after it is worth ("strategy
  fusion", which made such moves look safe). When every deal is proved lost, there is no hint. A card to
  its foundation that no other card can ever need (the solvers' "safe" move) is the hint
  without any search, and a move back into a position the game was in already is never
  suggested (no circles through the stock or between two piles). (:mod:`patience.solve.auto` plays
  the same safe cards up by itself when a player turns auto-move on.)

  The random deals come from a generator seeded by what is unseen (which cards, and the
  places), so the same position always gives the same hint, and a move that turns up nothing
  keeps the same deals: what was solved for them one move earlier is remembered.

:func:`hint` is the one entry point: the terminal's ``hint``, the browser's hint button and the
study's ``hint`` player (:func:`play_hints`) all call it.
"""

from __future__ import annotations

import time
from typing import Any

from patience.games import DRAW, REDEAL, Carpet, Faecher, Move, Reloaded, State
from patience.solve.auto import safe_foundation_move
from patience.solve.greedy import greedy_move
from patience.solve.search import Budget, Status
from patience.solve.unseen import unseen, visible_deals

__all__ = ["hint", "play_hints", "unseen", "visible_deals"]

SAMPLES = 12  # random deals of the unseen cards a Solitaire Reloaded hint solves
SAMPLE_NODES = 1_500  # positions each may search in the core (about 5 ms)
_MAX_PLAY = 1_500  # moves a hint player makes at most in one game
_WALK_BACK = 400  # how far back in a game a hint looks for positions it was in
_LOOK_FIRST = True  # before the first redeal, turn the stock rather than commit a card (see _candidates)
LINE_DEPTH = 5  # moves of a line up to the next card turned up, at most
LINE_MOST = 120  # lines a hint weighs, at most
STOCK_SAMPLES = 12  # Teppich with a waste, Der Fächer: random orders of the unseen stock a hint solves
STOCK_SAMPLE_NODES = 20_000  # positions the core may search for each (a few ms at most)


def hint(target: Any, *, budget_s: float = 1.0) -> Move | None:
    """A good move now, or None when no move is left (see the module docstring).

    ``target`` is a state or a session (its ``state``); the state's move stack tells which
    positions the game was in already. ``budget_s`` caps the time, counted in the CPU time of the
    thread that asks (as the solvers' budgets are): the searches are bounded by positions, so
    within the cap the hint depends on what the player has seen alone, not on the machine's load.
    """
    state: State = target if isinstance(target, State) else target.state
    if state.is_won():
        return None
    if isinstance(state, Reloaded):  # (its useful_moves() looks at the stock's cards: not asked here)
        return _reloaded_hint(state, time.thread_time() + budget_s)
    if not state.useful_moves():
        return None
    if isinstance(state, Carpet) and not state.options.waste:
        return state.legal_moves()[0]  # every order of play is as good as any other
    if unseen(state)[0]:  # the stock's order is not known yet
        return _sampled_hint(state, time.thread_time() + budget_s)
    return _full_information_hint(state, budget_s)


def play_hints(state: State, *, budget_s: float = 1.0) -> tuple[bool, list[Move]]:
    """Play ``state`` (a copy) out by following :func:`hint` at every step: (won, moves)."""
    s = state.copy()
    moves: list[Move] = []
    while len(moves) < _MAX_PLAY and not s.is_won():
        move = hint(s, budget_s=budget_s)
        if move is None:
            break
        s.push(move)
        moves.append(move)
    return s.is_won(), moves


# -- Teppich with a waste, Der Fächer, every card seen: the solver's line ---------------------------

# The next move of the last winning lines, by position: a player who follows the hints keeps
# getting the same line (a fresh search from the next position might choose another line,
# and hints that switch lines could go round in circles).
_NEXT: dict[str, Move] = {}
_NEXT_MAX = 20_000
_MEMORY_MB = 128  # a full-information hint's search table at most


def _remember(state: State, moves: list[Move]) -> None:
    if len(_NEXT) + len(moves) > _NEXT_MAX:
        _NEXT.clear()
    s = state.copy()
    for move in moves:
        _NEXT[str(s)] = move
        s._apply(move)


def _full_information_hint(state: State, budget_s: float) -> Move | None:
    from patience.solve.solution import solve

    deadline = time.thread_time() + budget_s
    key = str(state)
    move = _NEXT.get(key)
    if move is None:
        solution = solve(state, Budget(seconds=budget_s, nodes=None, memory_mb=_MEMORY_MB))
        if solution.status is not Status.WON or not solution.moves:
            return greedy_move(state)
        _remember(state, solution.moves)
        move = solution.moves[0]
    if move.dst == "f":
        return move
    # A card that can go up now and leaves the game won is the hint rather than a draw: first
    # where it leads to a position of a known winning line (in Teppich, drawing and then filling
    # the gap from the waste ends where filling it from the stock does), else by a search.
    ups = [m for m in state.legal_moves() if m.dst == "f"]
    afters = []
    for up in ups:
        after = state.copy()
        after._apply(up)
        if str(after) in _NEXT:
            return up
        afters.append((up, after))
    for up, after in afters:
        left = deadline - time.thread_time()
        if left <= 0:
            break
        rest = solve(after, Budget(seconds=left, nodes=None, memory_mb=_MEMORY_MB))
        if rest.status is Status.WON:
            _remember(after, rest.moves)
            return up
    return move


# -- Teppich with a waste, Der Fächer, before the whole stock was seen: sampled deals ----------------

# What a sampled deal's search found, by the game, its options and the deal's whole key (the key holds
# the sampled stock, so one sample's answer never stands for another's).
_SEEN_WON: dict[Any, bool] = {}


def _sample_won(world: Carpet | Faecher, deadline: float) -> bool:
    """Does the compiled core win the sampled deal ``world`` (every card known) within
    :data:`STOCK_SAMPLE_NODES` positions?"""
    if world.is_won():
        return True
    key = (type(world).__name__, world.options, world.key())
    known = _SEEN_WON.get(key)
    if known is not None:
        return known
    budget = Budget(seconds=max(0.001, deadline - time.thread_time()), nodes=STOCK_SAMPLE_NODES, memory_mb=8.0)
    if isinstance(world, Carpet):
        from patience.solve.carpet import search_waste

        found = search_waste(world, budget)
    else:
        import patience.solve._faecher as compiled  # type: ignore[import-untyped]  # compiled core: no stubs
        from patience.solve.faecher import _search_core

        found = _search_core(compiled, world, budget)
    won = found.status is Status.WON
    if found.status is Status.UNKNOWN and found.reason != "nodes":
        return won  # cut by the time cap: not remembered
    _keep(_SEEN_WON, key, won)
    return won


def _stock_candidates(state: State) -> list[Move]:
    """The useful moves in the order they are weighed (the first of those that keep every sampled
    deal won is the hint). Teppich, gaps filled from the waste: the stock first (it shows a card; a
    card played up fills its gap with the waste's card, which the card turned next might have
    wanted, and with the waste empty, drawing and then playing the card up ends where playing it up
    at once does), then the cards to their foundations: the stock first won 250 of the tuning deals
    1..400 where a card up first when the stock fills its gap won 229. Teppich, gaps filled from the
    stock: the cards to their foundations first (a card up puts the stock's next card on the carpet,
    where it stays at hand; drawn, it is buried by the next): 59 of deals 1..200 against 54 with the
    stock first. Der Fächer: a card to its foundation (never a loss: see
    :mod:`patience.solve.faecher`), a card onto a pile, the talon. The samples decide between moves;
    the order only among moves that keep every sample won."""
    stock_first = isinstance(state, Carpet) and state.options.fill_from == "waste"

    def rank(move: Move) -> int:
        if move in (DRAW, REDEAL):
            return -1 if stock_first else 2
        return 0 if move.dst == "f" else 1

    return sorted(state.useful_moves(), key=rank)


def _sampled_hint(state: State, deadline: float) -> Move | None:
    """Teppich with a waste and Der Fächer while stock cards are unseen: the move after which most
    sampled deals (the unseen stock dealt at random, :func:`visible_deals`) are won; the first in the
    careful player's order that keeps every deal won that the position wins is taken at once."""
    assert isinstance(state, (Carpet, Faecher))
    candidates = _stock_candidates(state)
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    worlds = [w for w in visible_deals(state, STOCK_SAMPLES) if _sample_won(w, deadline)]
    if not worlds:
        return greedy_move(state)  # no sampled deal won within the budget: the greedy player's move
    best, best_won = candidates[0], -1
    for move in candidates:
        if time.thread_time() >= deadline:
            break
        won = 0
        for n, world in enumerate(worlds):
            if won + len(worlds) - n <= best_won:
                break  # it cannot beat the best move any more
            world._apply(move)
            won += _sample_won(world, deadline)
            world.pop()
        if won > best_won:
            best, best_won = move, won
        if won == len(worlds):
            break
    return best


# -- Solitaire Reloaded: what the player has seen, and the determinized search ---------------------


# What the search found for each sampled deal from a position, by the position's whole key: a
# move that turns up nothing keeps the deals (see visible_deals), so the next hint finds them here.
_WON: dict[Any, Status] = {}
_WON_MAX = 200_000


def _keep(memo: dict[Any, Any], key: Any, value: Any) -> None:
    """Remember ``value`` for ``key`` in one of the hints' memos, each bounded by ``_WON_MAX`` entries
    (a full memo starts again empty)."""
    if len(memo) >= _WON_MAX:
        memo.clear()
    memo[key] = value


def _won(world: Reloaded, deadline: float) -> bool:
    return _status(world, deadline) is Status.WON


def _status(world: Reloaded, deadline: float, core: Any = None) -> Status:
    """What the core's search of ``world`` (every card known) finds within :data:`SAMPLE_NODES` positions;
    ``core``: ``world``'s position in the core, when the caller has it (a search leaves it as it was)."""
    key = world.key()
    known = _WON.get(key)
    if known is not None:
        return known
    if core is None:
        from patience.solve.klondike import core_position

        core = core_position(world)
    left = max(0.001, deadline - time.thread_time())
    found = core.solve(seconds=left, nodes=SAMPLE_NODES, memory_mb=8.0, line=False)  # the verdict only
    status = Status(found["status"])
    if status is Status.UNKNOWN and found["reason"] != "nodes":
        return status  # cut by the time cap: not remembered
    _keep(_WON, key, status)
    return status


def _visited(state: Reloaded) -> set[Any]:
    """The positions the game was in since its last card was turned face up (at most
    ``_WALK_BACK`` moves back): only there can a position come again."""
    seen: set[Any] = set()
    s = state.copy()
    s._history = list(state._history[-_WALK_BACK:])
    while s._history:
        _, flipped, _ = s._history[-1]
        s.pop()
        seen.add(s.key())
        if flipped:
            break
    return seen


def _candidates(state: Reloaded, moves: list[Move]) -> list[Move]:
    """The moves worth a search, in a careful player's order of preference; moves that only
    shift cards about without freeing anything are left out."""
    tableau, down = state.tableau, state.down
    height = state.height
    waste_top = int(state.waste[-1]) if state.waste else -1

    def takes(card: int) -> bool:
        """Could a visible card be laid on ``card`` now, the waste's or one that turns a card up?"""
        for child in _children(card):
            if child == waste_top:
                return True
            for k, pile in enumerate(tableau):
                if down[k] and len(pile) > down[k] and pile[down[k]] == child:
                    return True
        return False

    seen_talon = [*state.waste, *(state.stock if state.passes_used > 1 else ())]
    king_waiting = any(int(p[j]) % 13 == 12 for k, p in enumerate(tableau) for j in range(max(1, down[k]), len(p))) \
        or any(int(c) % 13 == 12 for c in seen_talon)
    looking = _LOOK_FIRST and state.passes_used == 1 and bool(state.stock)
    ranked: list[tuple[int, int, Move]] = []
    for move in moves:
        if move in (DRAW, REDEAL):
            # before the first redeal, turning the stock shows a card and commits nothing
            ranked.append((2 if looking else 7, 0, move))
            continue
        if move.dst == "f":
            src = move.src
            if src == "w":
                ranked.append((3, waste_top % 13, move))
                continue
            i = int(src[1:]) - 1
            card = int(tableau[i][-1])
            ranked.append((0 if len(tableau[i]) - 1 == down[i] > 0 else 3, card % 13, move))
            continue
        if move.src == "w":
            ranked.append((4, 0, move))
            continue
        if move.src.startswith("f"):
            ranked.append((8, 0, move))
            continue
        i = int(move.src[1:]) - 1
        pile = tableau[i]
        left = len(pile) - move.n
        if left == down[i] and left > 0:
            ranked.append((1, -down[i], move))  # turns a card up: deeper piles first
        elif left == 0:
            if king_waiting and tableau[int(move.dst[1:]) - 1]:
                ranked.append((5, 0, move))  # empties a pile for a King
        else:
            under = int(pile[left - 1])
            if height[under // 13] == under % 13:
                ranked.append((1, 1, move))  # the card under it can go up
            elif takes(under):
                ranked.append((6, 0, move))
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [m for _, _, m in ranked]


def _children(card: int) -> tuple[int, ...]:
    if card % 13 == 0:
        return ()
    red = 13 <= card < 39
    suits = (0, 3) if red else (1, 2)
    return tuple(s * 13 + card % 13 - 1 for s in suits)


def _reloaded_hint(state: Reloaded, deadline: float) -> Move | None:
    moves = state.legal_moves()
    visited = _visited(state)
    safe = safe_foundation_move(state, moves)
    if safe is not None:
        state._apply(safe)
        again = state.key() in visited
        state.pop()
        if not again:
            return safe
    candidates = []
    for move in _candidates(state, moves):
        state._apply(move)
        again = state.key() in visited
        state.pop()
        if not again:
            candidates.append(move)
    if not candidates:
        return None  # nothing left but circles: the game is lost
    if len(candidates) == 1:
        return candidates[0]
    deals = visible_deals(state, SAMPLES, history=False)
    lined = not _unseen_in_stock(state)  # the lines are weighed: each deal's position in the core is needed
    if lined:
        from patience.solve.klondike import core_position

        cores = [core_position(w) for w in deals]
        found = [_status(w, deadline, c) for w, c in zip(deals, cores, strict=True)]
    else:
        found = [_status(w, deadline) for w in deals]
    worlds = [w for w, status in zip(deals, found, strict=True) if status is Status.WON]
    if not worlds:
        if all(status is Status.UNWINNABLE for status in found):
            return None  # every deal that fits what was seen is lost: no move is of any use
        return candidates[0]  # no deal won within the budget: the careful player's choice
    if lined:
        won_cores = [c for c, status in zip(cores, found, strict=True) if status is Status.WON]
        planned = _line_hint(state, won_cores, visited, deadline)
        if planned is not None:
            return planned
    best, best_won = candidates[0], -1
    for move in candidates:
        if time.thread_time() >= deadline:
            break
        won = 0
        for world in worlds:
            world._apply(move)
            won += _won(world, deadline)
            world.pop()
        if won > best_won:
            best, best_won = move, won
        if won == len(worlds):
            break
    return best


def _unseen_in_stock(state: Reloaded) -> bool:
    """Are there stock cards the player has not seen yet (the first pass is not through)?"""
    return state.passes_used == 1 and bool(state.stock)


# What the core found for a sampled deal after a line, by the core's key (which holds the
# face-down cards, so one sample's answer never stands for another's).
_LINE_WON: dict[Any, bool] = {}


def _line_won(core: Any, deadline: float) -> bool:
    key = core.key()
    known = _LINE_WON.get(key)
    if known is not None:
        return known
    if core.is_won():
        return True
    found = core.solve(seconds=max(0.001, deadline - time.thread_time()), nodes=SAMPLE_NODES, memory_mb=8.0,
                       line=False)
    won = found["status"] == "won"
    if found["status"] == "unknown" and found["reason"] != "nodes":
        return won  # cut by the time cap: not remembered
    _keep(_LINE_WON, key, won)
    return won


def _lines(core: Any) -> list[list[Any]]:
    """The core's lines of moves from ``core`` that end where a face-down card turns up, the game
    is won, or after ``LINE_DEPTH`` moves; before their last move they touch no unseen card, so
    they are the same lines in every sampled deal. In a careful player's order: a line that wins,
    then lines that turn up a card of a pile with more face-down cards before those of a pile
    with fewer (the deepest piles hold most of what is unseen and block most), shorter lines
    first among those, and last the lines that turn nothing up. The walk is the compiled core's
    (``Klondike.lines``; walked from Python it took a quarter of a hint's time)."""
    return core.lines(LINE_DEPTH, LINE_MOST)


def _line_hint(state: Reloaded, cores: list[Any], visited: set[Any], deadline: float) -> Move | None:
    """Once every talon card was seen: the first move of the line up to the next card turned up
    after which most sampled deals (``cores``: their positions in the compiled core, every one won)
    are won (see step 2 of the module docstring), or None when there is no such line (the
    candidates' search answers then)."""
    from patience.solve.klondike import abstract_to_moves

    down = list(state.down)
    if cores[0].state()[1] != down:
        return None  # the safe moves the core makes at once turned a card up: the deals part there
    prefix = list(cores[0].initial_auto)  # safe talon cards: the same in every deal
    lines = _lines(cores[0])
    # Does a line's first move (and every draw for it, after the prefix's) lead to new positions only?
    # Asked only of the lines weighed, the prefix's engine moves played once for them all.
    new = [True]

    def check(s: Reloaded) -> None:
        new[0] = new[0] and s.key() not in visited

    after_prefix = state.copy()
    prefix_moves = abstract_to_moves(state, prefix, check) if prefix else []
    for m in prefix_moves:
        after_prefix._apply(m)
    prefix_new = new[0]
    engine_moves: dict[Any, list[Move]] = {}
    fresh: dict[Any, bool] = {}

    def is_fresh(move: Any) -> bool:
        known = fresh.get(move)
        if known is None:
            new[0] = prefix_new
            engine_moves[move] = abstract_to_moves(after_prefix, [move], check)
            known = fresh[move] = new[0]
        return known

    best: list[Any] | None = None
    best_won = -1
    for line in lines:
        if not is_fresh(line[0]):
            continue
        if best is not None and time.thread_time() >= deadline:
            break
        won = 0
        for n, core in enumerate(cores):
            if won + len(cores) - n <= best_won:
                break  # it cannot beat the best line any more
            for move in line:
                core.play(move)
            won += _line_won(core, deadline)
            for _ in line:
                core.undo()
        if won > best_won:
            best, best_won = line, won
        if won == len(cores):
            break  # the first line, in the careful player's order, that keeps every deal won
    if best is None:
        return None
    return prefix_moves[0] if prefix_moves else engine_moves[best[0]][0]
