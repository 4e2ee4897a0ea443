"""Solving Solitaire Reloaded (Klondike draw-one, unlimited redeals) with every card known.

This is "thoughtful" Klondike: the solver sees the face-down cards and the stock's order.
Depth-first search with a transposition table, as in Bjarnason, Fern & Tadepalli
("Searching solitaire in real time", 2007) and Solvitaire (Blake & Gent, 2019), with:

- **The stock as a set.** Drawing one card at a time with unlimited redeals, any card of the
  stock or the waste can be brought to the waste's top whenever it is wanted; what is left
  keeps its order. So the stock and waste together are just "the talon cards", all of them
  playable, and turning the stock never branches. The draws and redeals that bring a card up
  are written into the line only when a win is found.
- **Safe moves to the foundations** are made at once, without branching. A card of rank r is
  safe when it is an Ace or a 2, or when both foundations of the other colour hold r - 1 or
  more and the other foundation of its colour holds r - 2 or more. Then every card that
  could ever lie on it in the tableau, or on such a card, and so on down, is on a foundation
  already; so in the tableau it could only carry cards brought back from the foundations,
  which frees nothing. (The usual rule, without the second condition, is not safe here,
  because cards may come back from the foundations: a 6♠ brought back onto a 7♥ can take a
  5♦ off a face-down card.)
- **Moves back from a foundation** are tried only for cards that are not safe (the others
  could carry nothing useful), and last.
- **Symmetry:** the tableau piles are sorted in the key, and a King goes only to the first
  empty pile; a King that is already a pile's bottom card never moves to another empty pile.

Face-down cards count in the key (a pile is its face-down count and its cards), the
foundations are their heights, and the talon is whatever is left.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from patience.games.base import DRAW, REDEAL, Move
from patience.games.common import FOUNDATION_NAMES
from patience.games.reloaded import TABLEAU, Reloaded
from patience.solve.search import Budget, SearchOutcome, Status, depth_first

__all__ = ["KlondikeProblem", "abstract_to_moves", "is_safe", "solve_klondike"]

_RED = (False, True, True, False)
_OTHER_COLOUR = ((1, 2), (0, 3), (0, 3), (1, 2))
_SAME_COLOUR_OTHER = (3, 2, 1, 0)
# the two cards each card may lie on in the tableau (one rank higher, other colour); none for Kings
_PARENTS: tuple[tuple[int, ...], ...] = tuple(
    () if c % 13 == 12 else tuple(s * 13 + c % 13 + 1 for s in _OTHER_COLOUR[c // 13]) for c in range(52)
)
_BY_RANK = sorted(range(52), key=lambda c: c % 13)
# the two cards that may lie on each card (one rank lower, other colour); none for Aces
_CHILDREN: tuple[tuple[int, ...], ...] = tuple(
    () if c % 13 == 0 else tuple(s * 13 + c % 13 - 1 for s in _OTHER_COLOUR[c // 13]) for c in range(52)
)


def is_safe(card: int, height: list[int]) -> bool:
    """May ``card`` go to its foundation without branching? (See the module docstring.)"""
    rank = card % 13 + 1
    if rank <= 2:
        return True
    a, b = _OTHER_COLOUR[card // 13]
    return height[a] >= rank - 1 and height[b] >= rank - 1 and height[_SAME_COLOUR_OTHER[card // 13]] >= rank - 2


# Abstract moves (all tuples, first item the kind):
#   ("tf", i)        tableau pile i's top to its foundation
#   ("sf", card)     a talon card to its foundation
#   ("tt", i, k, n)  the top n cards of pile i onto pile k
#   ("st", card, k)  a talon card onto pile k
#   ("ft", suit, k)  a foundation's top card back onto pile k


class KlondikeProblem:
    """A Solitaire Reloaded position for the search (see the module docstring)."""

    def __init__(self, state: Reloaded) -> None:
        self.piles: list[list[int]] = [list(p) for p in state.tableau]
        self.down: list[int] = list(state.down)
        self.height: list[int] = list(state.height)
        self.talon = bytearray(52)
        for card in (*state.stock, *state.waste):
            self.talon[card] = 1
        self._undo: list[Any] = []
        self.auto_log: list[list[tuple[Any, ...]]] = []  # the safe moves each play made
        self.initial_auto = self._settle()

    # -- the search interface ----------------------------------------------------------

    def key(self) -> Hashable:
        return bytes(self.height) + b"\xff".join(
            sorted(bytes((self.down[i], *self.piles[i])) for i in range(7)))

    def is_won(self) -> bool:
        return self.height == [13, 13, 13, 13]

    def moves(self) -> list[tuple[Any, ...]]:
        """The moves worth trying, best first.

        A move that only puts a card in place to carry others waits until it is needed (it
        can always be made later, and making it early only covers its target): a talon card
        goes onto the tableau, a foundation card comes back, and a run leaves a face-up card
        only when a chain of cards can at once come to rest on it that ends with a face-up
        tableau card (or the uncovered card can go to its foundation); a pile is emptied only
        when a King is ready to move into it.
        """
        piles, down, height, talon = self.piles, self.down, self.height, self.talon
        top_of: dict[int, int] = {}
        first_empty = -1
        # where each card is: 1 face-up in the tableau, 2 in the talon, 3 on a foundation
        # (it could come back, after the cards above it), 0 face down
        at = [2 if t else 0 for t in talon]
        for suit in range(4):
            for c in range(suit * 13, suit * 13 + height[suit]):
                at[c] = 3
        king_free = False
        for k in range(7):
            pile = piles[k]
            if pile:
                top_of[pile[-1]] = k
                for j in range(down[k], len(pile)):
                    at[pile[j]] = 1
                    if j and pile[j] % 13 == 12:
                        king_free = True
            elif first_empty < 0:
                first_empty = k
        # From the Aces up: carry[c], could a chain of cards laid on c end with a face-up
        # tableau card; dig[c], for a foundation card, would bringing it down let a card
        # under it come back that carries; good[c], is c worth laying on its parent (it is
        # a face-up tableau card, or it comes from the talon or a foundation and carries or
        # digs). Cards from the talon or a foundation help only through such chains.
        carry = [False] * 52
        dig = [False] * 52
        good = [False] * 52
        for c in _BY_RANK:
            if c % 13:
                a, b = _CHILDREN[c]
                carry[c] = good[a] or good[b]
                if at[c - 1] == 3:
                    dig[c] = carry[c - 1] or dig[c - 1]
            where = at[c]
            good[c] = where == 1 or (where >= 2 and carry[c]) or (where == 3 and dig[c])
        if not king_free:
            king_free = any(at[k] >= 2 and (carry[k] or dig[k]) for k in (12, 25, 38, 51))
        found: list[tuple[Any, ...]] = []
        reveal: list[tuple[int, tuple[Any, ...]]] = []
        from_talon: list[tuple[Any, ...]] = []
        other: list[tuple[Any, ...]] = []
        back: list[tuple[Any, ...]] = []
        # to the foundations (safe ones were made already)
        for i in range(7):
            pile = piles[i]
            if pile and pile[-1] % 13 == height[pile[-1] // 13]:
                found.append(("tf", i))
        for suit in range(4):
            h = height[suit]
            if h < 13 and talon[suit * 13 + h]:
                found.append(("sf", suit * 13 + h))
        # tableau runs onto other piles
        for i in range(7):
            pile = piles[i]
            size = len(pile)
            for j in range(down[i], size):
                card = pile[j]
                if j > down[i]:
                    # the run lies on a face-up card: worth it only if that card can then go
                    # to its foundation or take the other card of the run's rank and colour
                    under = pile[j - 1]
                    a, b = _CHILDREN[under]
                    if under % 13 != height[under // 13] and not good[b if a == card else a]:
                        continue
                elif j == 0 and not king_free:
                    continue  # emptying a pile is worth it only for a King to come
                if card % 13 == 12:
                    if first_empty < 0 or j == 0:
                        continue  # no empty pile, or the King is the bottom card already
                    targets: tuple[int, ...] = (first_empty,)
                else:
                    targets = tuple(top_of[p] for p in _PARENTS[card] if p in top_of)
                for k in targets:
                    move = ("tt", i, k, size - j)
                    if j == down[i] and j > 0:
                        reveal.append((-j, move))  # turns a card up: deeper piles first
                    elif j == 0:
                        reveal.append((0, move))  # empties a pile
                    else:
                        other.append(move)
        # talon cards onto the tableau, only as a base for a card to come at once
        for top, k in top_of.items():
            for card in _CHILDREN[top]:
                if talon[card] and carry[card]:
                    from_talon.append(("st", card, k))
        if first_empty >= 0:
            for suit in range(4):
                king = suit * 13 + 12
                if talon[king] and carry[king]:
                    from_talon.append(("st", king, first_empty))
        # foundation cards back to the tableau, when they or a card under them (which must
        # then come back first) might carry something useful
        for suit in range(4):
            h = height[suit]
            if h >= 3 and not is_safe(suit * 13 + h - 1, height):
                card = suit * 13 + h - 1
                if not (carry[card] or dig[card]):
                    continue
                if card % 13 == 12:
                    if first_empty >= 0:
                        back.append(("ft", suit, first_empty))
                else:
                    for p in _PARENTS[card]:
                        if p in top_of:
                            back.append(("ft", suit, top_of[p]))
        reveal.sort(key=lambda item: item[0])
        return found + [m for _, m in reveal] + from_talon + other + back

    def _king_at_bottom(self, king: int) -> bool:
        """Is ``king`` the bottom card of a pile with nothing face down (it needs no empty pile)?"""
        for k in range(7):
            pile = self.piles[k]
            if pile and pile[0] == king and self.down[k] == 0:
                return True
        return False

    def play(self, move: tuple[Any, ...]) -> None:
        piles, down, height = self.piles, self.down, self.height
        self._undo.append(([p[:] for p in piles], down[:], height[:], self.talon[:]))
        kind = move[0]
        if kind == "tf":
            i = move[1]
            card = piles[i].pop()
            height[card // 13] += 1
            self._flip(i)
        elif kind == "sf":
            card = move[1]
            self.talon[card] = 0
            height[card // 13] += 1
        elif kind == "tt":
            _, i, k, n = move
            run = piles[i][-n:]
            del piles[i][-n:]
            piles[k].extend(run)
            self._flip(i)
        elif kind == "st":
            _, card, k = move
            self.talon[card] = 0
            piles[k].append(card)
        else:
            _, suit, k = move
            height[suit] -= 1
            piles[k].append(suit * 13 + height[suit])
        self.auto_log.append(self._settle())

    def undo(self) -> None:
        self.piles, self.down, self.height, self.talon = self._undo.pop()
        self.auto_log.pop()

    # -- helpers -----------------------------------------------------------------------

    def _flip(self, i: int) -> None:
        if self.piles[i] and self.down[i] == len(self.piles[i]):
            self.down[i] -= 1

    def _settle(self) -> list[tuple[Any, ...]]:
        """Make every safe move to the foundations; return them (see the module docstring)."""
        piles, height, talon = self.piles, self.height, self.talon
        made: list[tuple[Any, ...]] = []
        changed = True
        while changed:
            changed = False
            for suit in range(4):
                h = height[suit]
                if h == 13:
                    continue
                card = suit * 13 + h
                if talon[card]:
                    if is_safe(card, height):
                        talon[card] = 0
                        height[suit] += 1
                        made.append(("sf", card))
                        changed = True
                    continue
                for i in range(7):
                    pile = piles[i]
                    if pile and pile[-1] == card:
                        if is_safe(card, height):
                            pile.pop()
                            height[suit] += 1
                            self._flip(i)
                            made.append(("tf", i))
                            changed = True
                        break
        return made


def abstract_to_moves(state: Reloaded, line: list[tuple[Any, ...]]) -> list[Move]:
    """The engine moves of an abstract line, played from ``state`` (a copy is used): talon
    cards are brought to the waste's top by drawing, and redealing when the stock is empty."""
    s = state.copy()
    out: list[Move] = []

    def push(move: Move) -> None:
        reason = s.check(move)
        if reason is not None:  # pragma: no cover - a solver bug, caught by the tests
            raise AssertionError(f"solver line: {move} is illegal: {reason}")
        s._apply(move)
        out.append(move)

    def bring_up(card: int) -> None:
        for _ in range(200):
            if s.waste and s.waste[-1] == card:
                return
            push(DRAW if s.stock else REDEAL)
        raise AssertionError(f"solver line: card {card} is not in the talon")  # pragma: no cover

    for move in line:
        kind = move[0]
        if kind == "tf":
            push(Move(TABLEAU[move[1]], "f"))
        elif kind == "sf":
            bring_up(move[1])
            push(Move("w", "f"))
        elif kind == "tt":
            push(Move(TABLEAU[move[1]], TABLEAU[move[2]], move[3]))
        elif kind == "st":
            bring_up(move[1])
            push(Move("w", TABLEAU[move[2]]))
        else:
            push(Move(FOUNDATION_NAMES[move[1]], TABLEAU[move[2]]))
    return out


def solve_klondike(state: Reloaded, budget: Budget) -> tuple[SearchOutcome, list[Move]]:
    """Decide a Solitaire Reloaded position; the moves are the whole winning line when it is won."""
    problem = KlondikeProblem(state)
    outcome = depth_first(problem, budget)
    if outcome.status is not Status.WON:
        return outcome, []
    # the abstract line with the safe moves that followed each move
    replay = KlondikeProblem(state)
    line = list(replay.initial_auto)
    for move in outcome.line:
        replay.play(move)
        line.append(move)
        line.extend(replay.auto_log[-1])
    return outcome, abstract_to_moves(state, line)
