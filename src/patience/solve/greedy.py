"""Simple greedy players: the yardstick a solver's win rate is compared with.

Each looks only at what a person sees (face-up cards; for Solitaire Reloaded only the waste's
top card), never plans ahead, and plays the first move of a fixed order of preference:

- Teppich: any card that goes to a foundation (carpet cards first), otherwise turn the stock.
  Without a waste this is as good as any play (the order does not matter there).
- Der Fächer: to a foundation; a card onto a reserve pile it fits (waste first, then fan);
  turn the talon (redeal when it is empty); only then a card into an empty reserve pile.
- Solitaire Reloaded: to a foundation; a run that turns up a face-down card (the pile with
  most face-down cards first) or moves a King off face-down cards; the waste's top onto the
  tableau; turn the stock. It stops when a whole turn of the stock changes nothing else.

:func:`greedy_move` gives the next move, :func:`play_greedy` plays a game out.
"""

from __future__ import annotations

from patience.games import DRAW, REDEAL, Carpet, Faecher, Move, Reloaded, State

__all__ = ["greedy_move", "play_greedy"]

_MAX_MOVES = 5000


def greedy_move(state: State) -> Move | None:
    """The greedy player's move in ``state``, or None when it has none."""
    if isinstance(state, Carpet):
        return _carpet(state)
    if isinstance(state, Faecher):
        return _faecher(state)
    if isinstance(state, Reloaded):
        return _reloaded(state)
    moves = state.useful_moves()
    return moves[0] if moves else None


def _carpet(state: Carpet) -> Move | None:
    moves = state.legal_moves()
    for move in moves:
        if move.dst == "f" and move.src != "w":
            return move
    for move in moves:
        if move.dst == "f":
            return move
    return moves[0] if moves else None


def _faecher(state: Faecher) -> Move | None:
    moves = state.useful_moves()
    if not moves:
        return None
    to_foundation = [m for m in moves if m.dst == "f"]
    if to_foundation:
        return max(to_foundation, key=lambda m: m.n)
    onto = [m for m in moves if m.dst.startswith("r") and state.reserves[int(m.dst[1:]) - 1]
            and not m.src.startswith("r")]
    for source in ("w", "v"):
        for move in onto:
            if move.src.startswith(source):
                return move
    for move in moves:
        if move in (DRAW, REDEAL):
            return move
    for source in ("w", "v"):
        for move in moves:
            if move.src.startswith(source):
                return move
    return None


def _reloaded(state: Reloaded) -> Move | None:
    moves = state.legal_moves()
    for move in moves:
        if move.dst == "f":
            return move
    best: tuple[int, Move] | None = None
    for move in moves:
        if move.src.startswith("t") and move.dst.startswith("t"):
            i = int(move.src[1:]) - 1
            pile, down = state.tableau[i], state.down[i]
            if len(pile) - move.n == down and down > 0 and (best is None or down > best[0]):
                best = (down, move)
    if best is not None:
        return best[1]
    for move in moves:
        if move.src == "w" and move.dst.startswith("t"):
            return move
    for move in moves:
        if move in (DRAW, REDEAL):
            return move
    return None


def play_greedy(state: State) -> tuple[bool, list[Move]]:
    """Play ``state`` (a copy) out with the greedy player: (won, moves)."""
    s = state.copy()
    moves: list[Move] = []
    quiet = 0  # stock turns in a row: a whole turn of the stock without another move ends it
    while len(moves) < _MAX_MOVES and not s.is_won():
        move = greedy_move(s)
        if move is None:
            break
        if isinstance(s, Reloaded):
            if move in (DRAW, REDEAL):
                quiet += 1
                if quiet > len(s.stock) + len(s.waste) + 1:
                    break
            else:
                quiet = 0
        s._apply(move)
        moves.append(move)
    return s.is_won(), moves
