"""Hints while playing: a good next move for the position a person is looking at.

- Teppich and Der Fächer: every card is face up except the stock's, and the rule pages let
  the player know the deal, so the hint is the first move of the solver's winning line from
  this position; when the solver finds no win in its short budget, the greedy player's move.
- Solitaire Reloaded: the hint may only use what the player sees, never the face-down cards
  nor the stock's order. It searches what is visible: it deals the unseen cards at random
  into the unseen places many times over (every deal that fits what is visible), solves each
  with a small budget, and suggests the first move that wins in most of them (a vote, the
  "determinized" search of card-game programs). Without any win, the greedy player's move.
  The random deals come from a generator seeded by the visible position, so the same
  position always gives the same hint.

:func:`hint` is the one entry point (the terminal's ``hint`` and the browser's button call it).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import Counter
from typing import Any

from patience.cards import CARDS, parse_card
from patience.games import DRAW, REDEAL, Carpet, Move, Reloaded, State
from patience.session import Session
from patience.solve.greedy import greedy_move
from patience.solve.search import Budget, Status

__all__ = ["hint", "visible_deals"]

_SAMPLES = 10  # random deals of the unseen cards a Solitaire Reloaded hint solves
_SAMPLE_NODES = 20_000  # positions each may search (a few ms in the core): the hint depends on nothing else


def hint(target: State | Session, *, budget_s: float = 1.0) -> Move | None:
    """A good move now, or None when no move is left (see the module docstring).

    ``budget_s`` caps the time; the searches are bounded by positions, so within the cap the
    hint depends on the position alone (a very tight cap may cut a Solitaire Reloaded vote short).
    """
    state = target.state if isinstance(target, Session) else target
    if state.is_won() or not state.useful_moves():
        return None
    if isinstance(state, Carpet) and not state.options.waste:
        return state.legal_moves()[0]  # every order of play is as good as any other
    if isinstance(state, Reloaded):
        return _reloaded_hint(state, budget_s)
    key = str(state)
    cached = _NEXT.get(key)
    if cached is not None:
        return cached
    from patience.solve.solution import solve

    solution = solve(state, Budget(seconds=budget_s, nodes=None, memory_mb=64))
    if solution.status is Status.WON and solution.moves:
        _remember(state, solution.moves)
        return solution.moves[0]
    return greedy_move(state)


# The next move of the last winning lines, by position: a player who follows the hints keeps
# getting the same line (a fresh search from the next position might choose another line,
# and hints that switch lines could go round in circles).
_NEXT: dict[str, Move] = {}
_NEXT_MAX = 20_000


def _remember(state: State, moves: list[Move]) -> None:
    if len(_NEXT) + len(moves) > _NEXT_MAX:
        _NEXT.clear()
    s = state.copy()
    for move in moves:
        _NEXT[str(s)] = move
        s._apply(move)


def visible_deals(state: Reloaded, count: int, rng: random.Random) -> list[Reloaded]:
    """``count`` positions that look exactly like ``state`` to the player: the cards the player
    cannot see are dealt at random into the places the player cannot see."""
    view = state.view()
    seen = {parse_card(text) for cards in view["piles"].values() for text in cards if text is not None}
    unseen = [c for c in range(52) if c not in seen]
    out = []
    for _ in range(count):
        cards = unseen[:]
        rng.shuffle(cards)
        it = iter(cards)
        piles: dict[str, list[str]] = {}
        for name, texts in view["piles"].items():
            row = []
            for text in texts:
                if text is None:
                    card = next(it)
                    face_up = name == "w"  # the waste's cards are face up, only hidden from view
                    text_of = CARDS[card].text
                    row.append(text_of if face_up else text_of.lower())
                else:
                    row.append(text)
            piles[name] = row
        position: dict[str, Any] = {"game": view["game"], "options": view["options"], "piles": piles,
                                    "counters": view["counters"]}
        out.append(Reloaded.from_position(position))
    return out


def _first_engine_move(state: Reloaded, abstract: tuple[Any, ...]) -> Move:
    """The engine move that starts an abstract solver move in the real position (a talon card
    the player cannot see is reached by turning the stock)."""
    from patience.games.common import FOUNDATION_NAMES
    from patience.games.reloaded import TABLEAU

    kind = abstract[0]
    if kind in ("sf", "st"):
        card = abstract[1]
        if state.waste and state.waste[-1] == card:
            return Move("w", "f") if kind == "sf" else Move("w", TABLEAU[abstract[2]])
        return DRAW if state.stock else REDEAL
    if kind == "tf":
        return Move(TABLEAU[abstract[1]], "f")
    if kind == "tt":
        return Move(TABLEAU[abstract[1]], TABLEAU[abstract[2]], abstract[3])
    return Move(FOUNDATION_NAMES[abstract[1]], TABLEAU[abstract[2]])


def _reloaded_hint(state: Reloaded, budget_s: float) -> Move | None:
    from patience.solve.klondike import search_klondike

    seed = int.from_bytes(hashlib.blake2b(str(state.view()).encode(), digest_size=8).digest(), "big")
    rng = random.Random(seed)
    votes: Counter[Move] = Counter()
    deadline = time.perf_counter() + budget_s
    legal = set(state.legal_moves())
    for sample in visible_deals(state, _SAMPLES, rng):
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        outcome = search_klondike(sample, Budget(seconds=left, nodes=_SAMPLE_NODES, memory_mb=32))
        if outcome.status is not Status.WON or not outcome.line:
            continue
        move = _first_engine_move(state, outcome.line[0])
        if move in legal:
            votes[move] += 1
    if votes:
        return votes.most_common(1)[0][0]
    return greedy_move(state)
