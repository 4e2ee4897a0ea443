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
- **Moves to the foundations that can be taken back** are made at once as well: a tableau
  top card that may go to its foundation and lies on a face-up card of its pile. The position
  after it and the one before are each one move from the other (the card can come straight
  back onto the card it lay on, which it uncovered), so one is won exactly when the other is,
  and the search keeps only the one with the card on its foundation. This is done only
  when nothing is pending (see the pending moves below), or for the very card that is pending
  as a talon card to cover or a card to use (going up is then one of its uses, or the same as
  playing it from the talon to its foundation).
- **Moves back from a foundation** are tried only for cards that are not safe (the others
  could carry nothing useful), and last.
- **Moves that only prepare are made just in time.** A talon card is put onto the tableau,
  a run leaves a face-up card, and a pile is emptied only to be used by the very next move:
  a card laid on the talon card; the uncovered card taken to its foundation or given a card;
  a King moved into the empty pile. In any winning line such a move can wait until just
  before its use (until then it only covers its target, and the card it would uncover or
  the pile it would empty stays as it was), so the search keeps it "pending" and lets only
  such a use follow. Likewise a card brought back from a foundation waits for its first use
  (BACK): a card laid on it, or the card under it on its foundation coming back (another card
  back); if it instead goes on elsewhere it could have come straight there, and if it goes back
  up the two moves undo each other; until then it only covers its target. Several may have to
  come back before one of them is used (a 9♣ needs the 10♣ above it off its foundation and a
  red 10 to lie on), so any card back may follow one, and so may a move that leaves pending a
  card the foundation card under it could come onto (its use may be that card: the cards above
  come back first, and the move waits until just before its use). While anything is pending, no
  other card goes up by the rule above: the cards brought back stay until they are used. A position
  with something pending allows a subset of the moves of the same position with less pending,
  so it is skipped when that one is in the table (but for BACK, with nothing pending cards
  would go up).
- **A preparing move is made only when the next position offers a use for it.** A talon card
  is laid on the tableau only when one of the moves offered after it lays a card on it (a run
  worth moving, a talon card that carries, a foundation card worth bringing back, a pile's
  bottom card while another King could come into its pile), or when it goes straight up to its
  foundation; a pile is emptied only when a King can come into it by such a move (a face-up
  King lying on a card, a foundation King worth bringing back, a talon King with a Queen to come
  onto it in turn). Otherwise the next position has no move, and the search would only learn it
  one position later. Whether such moves are offered depends only on cards of lower rank than
  the card laid (and, for a pile emptied, on the cards that move), so it is known beforehand.
- **Dead ends.** A position where some tableau card can never leave its place, whatever is
  played, is lost: :func:`dead_end` finds them by a relaxation (cards, once free, stay free; a
  card goes to its foundation only once the lower ones can and it can be uncovered; a
  card off the tableau carries others only once it could lie in the tableau itself, and a card
  that left its place with others on it only once the card right on it could leave by a move of
  its own; its docstring has the argument), and such a position has no moves. Only positions
  with nothing pending are checked: the others (most of the positions searched) lead within a
  few moves to one with nothing pending, and checking them too cost more time than it saved.
- **Symmetry:** the tableau piles are sorted in the key, and a King goes only to the first
  empty pile; a King that is already a pile's bottom card never moves to another empty pile.
- **Order:** runs that turn a card face up (deeper piles first) or empty a pile, then moves
  to the foundations, talon cards, the other runs, and last the cards back from the foundations.

Face-down cards count in the key (a pile is its face-down count and its cards), the
foundations are their heights, the talon is whatever is left, and what is pending is added.

:class:`KlondikeProblem` is this search in Python, on :func:`patience.solve.search.depth_first`:
the reference. :func:`solve_klondike` runs the same search in the compiled core
(``src/patience/solve/_core/klondike.cpp``, the module ``patience.solve._klondike``): the same
moves in the same order and the same keys, tens of times faster, with a table of whole
keys (a hash collision can never pass a position off as searched) that is bounded by the
budget's memory and then gives up the positions whose search was cheapest. The tests check the
core against the rules engine (legal moves) and against this module (moves, safe moves, keys,
and the very same search, node for node).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from patience.games.base import DRAW, REDEAL, Move
from patience.games.common import FOUNDATION_NAMES
from patience.games.reloaded import TABLEAU, Reloaded
from patience.solve.search import Budget, SearchOutcome, Status

__all__ = ["KlondikeProblem", "abstract_to_moves", "core_position", "dead_end", "is_safe", "search_klondike",
           "solve_klondike"]

_RED = (False, True, True, False)
_OTHER_COLOUR = ((1, 2), (0, 3), (0, 3), (1, 2))
_SAME_COLOUR_OTHER = (3, 2, 1, 0)
# the two cards each card may lie on in the tableau (one rank higher, other colour); none for Kings
_PARENTS: tuple[tuple[int, ...], ...] = tuple(
    () if c % 13 == 12 else tuple(s * 13 + c % 13 + 1 for s in _OTHER_COLOUR[c // 13]) for c in range(52)
)
_BY_RANK = sorted(range(52), key=lambda c: c % 13)
# the card of the same rank and colour
_TWIN: tuple[int, ...] = tuple(_SAME_COLOUR_OTHER[c // 13] * 13 + c % 13 for c in range(52))
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


def dead_end(piles: list[list[int]], down: list[int], height: list[int], talon: bytearray) -> bool:
    """Is some tableau card unable ever to leave its place, whatever is played? Then the position
    is lost (see the module docstring).

    A relaxation in which a card, once free, stays free: cards off the tableau (talon and
    foundations) are free from the start; a tableau card leaves its place, with the cards above
    it, when it is face up and one of its parents counts (see below; a King: when another pile
    is empty); the top card also when every lower card of its suit reaches its foundation (see
    below). What leaves is free. In a real game, when a card first leaves its place, the cards above
    it have left first (or go with it as a run it heads), a parent it goes onto lies uncovered or
    came from elsewhere, the lower cards of its suit lie on their foundation if it goes there, and
    an empty pile it fills has lost every card. So the cards that first leave their places, in
    their order, leave in the relaxation too; since every rule of the relaxation only gets easier
    as more cards are free, count or reach their foundations, taking every card that can leave
    until none can finds the most that can ever leave.

    Reaching the foundation: the cards on the foundations reach them; then, suit by suit from the
    lowest, a card reaches its foundation once the card under it there does and it is a talon
    card, a tableau card that left its place and counts as a parent (see below), or a pile's top
    card in its place (which then leaves). Leaving its place is not enough: a card that left only
    inside a run headed lower down stays covered until the card right on it leaves it by a move of
    its own. In a real game, when a card first goes to its foundation the lower cards of its suit
    lie there (so they reached it before), and it is uncovered: in the talon, a pile's top in its
    place, or a tableau card that left its place and lies uncovered, so that the card right on it
    has left it by a move of its own, which makes it count (below); so every card that reaches a
    foundation in a real game reaches it in the relaxation.

    A parent counts only where a card could be laid on it. A tableau card counts when it is its
    pile's top, or when the cards above it are free and the card right on it could have left it
    by a move of its own: onto its other parent (if that counts), to its foundation (it reaches
    it) or, a King, into another pile that is empty. (Free cards above it may have left only with
    it, as a run: it is still covered.) A card off the tableau counts once one of its own parents
    counts (a King: once a pile is empty); a card on a foundation only once the cards above it on
    that foundation count as well (they come back to the tableau before it can, and a card leaves
    a foundation only to be laid in the tableau). In a real game a card is laid on a parent that
    lies uncovered, so the card that lay right on it in its pile has left it by a move of its own
    (a move of a run headed lower down would have taken the parent along), or that was laid in
    the tableau before, on a parent or, a King, in an empty pile; so, by induction on the moves,
    every parent a real card is laid on counts in the relaxation. (A Queen in the talon is no base
    for a Jack while both red Kings stay face down; a Queen whose Jack can go nowhere else is no
    base for the other Jack.)
    """
    free = [bool(talon[c]) or c % 13 < height[c // 13] for c in range(52)]
    place: dict[int, tuple[int, int]] = {}
    for i, pile in enumerate(piles):
        for j, c in enumerate(pile):
            place[c] = (i, j)
    left = [len(p) for p in piles]  # the cards of each pile still in their places
    placed = [False] * 52  # the cards that count as parents
    reach = list(height)  # the cards of each suit that can reach their foundation: the lowest reach[suit]
    for pile in piles:
        if pile:
            placed[pile[-1]] = True

    def parent_free(card: int) -> bool:
        return placed[_PARENTS[card][0]] or placed[_PARENTS[card][1]]

    changed = True
    while changed:
        changed = False
        for c in range(52):
            if free[c] and not placed[c] and c not in place:
                placed[c] = any(not left[k] for k in range(7)) if c % 13 == 12 else parent_free(c)
                if placed[c] and not talon[c]:  # on its foundation: the cards above it come back first
                    placed[c] = all(placed[y] for y in range(c + 1, c - c % 13 + height[c // 13]))
                changed = changed or placed[c]
        for i, pile in enumerate(piles):
            for j in range(max(left[i] - 1, 0), len(pile) - 1):
                q, x = pile[j], pile[j + 1]
                if not placed[q]:
                    if x % 13 == 12:
                        placed[q] = any(not left[k] for k in range(7) if k != i)
                    else:
                        placed[q] = (any(placed[y] for y in _PARENTS[x] if y != q)
                                     or reach[x // 13] > x % 13)
                    changed = changed or placed[q]
        for i, pile in enumerate(piles):
            while left[i]:
                n, cut = left[i], -1
                for j in range(min(down[i], n - 1), n):
                    c = pile[j]
                    goes = any(not left[k] for k in range(7) if k != i) if c % 13 == 12 else parent_free(c)
                    if not goes and j == n - 1 and reach[c // 13] >= c % 13:
                        goes = True
                        reach[c // 13] += 1  # it goes to its foundation
                    if goes:
                        cut = j
                        break
                if cut < 0:
                    break
                for j in range(cut, n):
                    free[pile[j]] = True
                left[i] = cut
                changed = True
        for suit in range(4):
            while reach[suit] < 13 and (talon[suit * 13 + reach[suit]]
                                        or (free[suit * 13 + reach[suit]] and placed[suit * 13 + reach[suit]])):
                reach[suit] += 1
                changed = True
    return any(left)


# Abstract moves (all tuples, first item the kind):
#   ("tf", i)        tableau pile i's top to its foundation
#   ("sf", card)     a talon card to its foundation
#   ("tt", i, k, n)  the top n cards of pile i onto pile k
#   ("st", card, k)  a talon card onto pile k
#   ("ft", suit, k)  a foundation's top card back onto pile k

# What a move that only prepares leaves pending (see the module docstring): the next move
# must lay a card on the talon card just placed (COVER), use the face-up card a run left
# (USE: lay a card on it or play it to its foundation), bring a King into an empty pile (KING),
# or, after a card brought back from a foundation (BACK), lay a card on it, bring back another
# or leave pending a card that the foundation card under it could come onto.
COVER, USE, KING, BACK = 1, 2, 3, 4


class KlondikeProblem:
    """A Solitaire Reloaded position for the search (see the module docstring)."""

    def __init__(self, state: Reloaded) -> None:
        self.piles: list[list[int]] = [list(p) for p in state.tableau]
        self.down: list[int] = list(state.down)
        self.height: list[int] = list(state.height)
        self.talon = bytearray(52)
        for card in (*state.stock, *state.waste):
            self.talon[card] = 1
        self.pending: tuple[int, int, int] | None = None  # (COVER/USE/KING/BACK, pile, card)
        self._undo: list[Any] = []
        self.auto_log: list[list[tuple[Any, ...]]] = []  # the safe moves each play made
        self.initial_auto = self._settle()

    # -- the search interface ----------------------------------------------------------

    def key(self) -> bytes:
        key = bytes(self.height) + b"\xff".join(
            sorted(bytes((self.down[i], *self.piles[i])) for i in range(7)))
        if self.pending is None:
            return key
        kind, _, card = self.pending
        return key + bytes((0xFE, kind, max(card, 0)))

    def stronger_keys(self) -> tuple[bytes, ...]:
        """Keys of this position with less pending (more moves allowed): nothing pending, and
        for a talon card to cover, that card to use (cover it or play it to its foundation)."""
        if self.pending is None or self.pending[0] == BACK:
            return ()  # BACK: with nothing pending, cards would go back up to the foundations
        kind, pile, card = self.pending
        self.pending = None
        plain = self.key()
        self.pending = (kind, pile, card)
        if kind == COVER:
            return plain, plain + bytes((0xFE, USE, card))
        return (plain,)

    def is_won(self) -> bool:
        return self.height == [13, 13, 13, 13]

    def moves(self) -> list[tuple[Any, ...]]:
        """The moves worth trying, best first.

        A move that only puts a card in place to carry others waits until it is needed (it
        can always be made later, and making it early only covers its target): a talon card
        goes onto the tableau, a foundation card comes back, and a run leaves a face-up card
        only when a chain of cards can at once come to rest on it that ends with a face-up
        tableau card (or the uncovered card can go to its foundation); a pile is emptied only
        when a King is ready to move into it. A talon card is laid, and a pile emptied, only
        when the moves of the next position include one that uses it (see the module
        docstring). When the last move left something pending, only the moves that use it.
        """
        piles, down, height, talon = self.piles, self.down, self.height, self.talon
        if self.pending is None and dead_end(piles, down, height, talon):
            return []
        top_of: dict[int, int] = {}
        first_empty = -1
        # where each card is: 1 face-up in the tableau, 2 in the talon, 3 on a foundation
        # (it could come back, after the cards above it), 0 face down
        at = [2 if t else 0 for t in talon]
        for suit in range(4):
            for c in range(suit * 13, suit * 13 + height[suit]):
                at[c] = 3
        king_up = False  # a face-up King lies on another card
        for k in range(7):
            pile = piles[k]
            if pile:
                top_of[pile[-1]] = k
                for j in range(down[k], len(pile)):
                    at[pile[j]] = 1
                    if j and pile[j] % 13 == 12:
                        king_up = True
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
        # The face-up cards whose run is worth moving onto a parent: it lies on face-down cards, or
        # on a card that can then go to its foundation or take the other card of the run's rank and
        # colour; and the cards at a pile's bottom (worth moving only for a King to come).
        run_ok: set[int] = set()
        bottoms: set[int] = set()
        for i in range(7):
            pile = piles[i]
            for j in range(down[i], len(pile)):
                card = pile[j]
                if j == 0:
                    bottoms.add(card)
                elif j == down[i] or pile[j - 1] % 13 == height[pile[j - 1] // 13] or good[_TWIN[card]]:
                    run_ok.add(card)
        # the foundation cards worth bringing back: a suit's top, when not safe and it or a card
        # under it carries
        tops = [suit * 13 + h - 1 for suit, h in enumerate(height) if h >= 3]
        back_ok = {c for c in tops if not is_safe(c, height) and (carry[c] or dig[c])}
        # the cards that can come at once onto a card just laid: a run, a talon card that carries,
        # a foundation card back; a pile's bottom card only while a King could come into its pile
        can_come = run_ok | {c for c in range(52) if talon[c] and carry[c]} | back_ok

        def comes(card: int, from_bottom: bool) -> bool:
            return any(x in can_come or (from_bottom and x in bottoms) for x in _CHILDREN[card])

        # the Kings that could come into an empty pile: face up on another card, back from a
        # foundation, or from the talon when it carries and a Queen can come onto it (from a
        # pile's bottom only if another King could come into that pile)
        talon_kings = {k for k in (12, 25, 38, 51) if talon[k] and carry[k] and comes(k, True)}
        king_other = king_up or any(k in back_ok for k in (12, 25, 38, 51))
        king_free = king_other or bool(talon_kings)
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
                if (card not in run_ok) if j else not king_free:
                    continue
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
        # talon cards onto the tableau, only as a base for a card to come at once (or when it goes
        # up to its foundation at once)
        for top, k in top_of.items():
            for card in _CHILDREN[top]:
                if talon[card] and carry[card] and (comes(card, king_free) or card % 13 == height[card // 13]):
                    from_talon.append(("st", card, k))
        if first_empty >= 0:
            for suit in range(4):
                king = suit * 13 + 12
                others = king_other or bool(talon_kings - {king})
                if talon[king] and carry[king] and comes(king, others):
                    from_talon.append(("st", king, first_empty))
        # foundation cards back to the tableau, when they or a card under them (which must
        # then come back first) might carry something useful
        for card in sorted(back_ok):  # suit by suit
            suit = card // 13
            if card % 13 == 12:
                if first_empty >= 0:
                    back.append(("ft", suit, first_empty))
            else:
                for p in _PARENTS[card]:
                    if p in top_of:
                        back.append(("ft", suit, top_of[p]))
        reveal.sort(key=lambda item: item[0])
        moves = [m for _, m in reveal] + found + from_talon + other + back
        if self.pending is None:
            return moves
        kind, target, _ = self.pending
        if kind == KING:  # only Kings go to empty piles
            return [m for m in moves if m[0] in ("tt", "st", "ft") and not piles[m[2]]]
        return [m for m in moves if (m[0] in ("tt", "st", "ft") and m[2] == target)
                or (kind == USE and m == ("tf", target)) or (kind == BACK and (m[0] == "ft" or self._under_back(m)))]

    def _under_back(self, move: tuple[Any, ...]) -> bool:
        """After a card brought back from a foundation: does ``move`` leave pending a card that the
        foundation card under it could come onto?"""
        assert self.pending is not None
        card = self.pending[2]
        if card % 13 == 0:
            return False
        if move[0] == "st":
            return move[1] in _PARENTS[card - 1]
        if move[0] != "tt":
            return False
        _, i, _, n = move
        pile = self.piles[i]
        return n < len(pile) - self.down[i] and pile[-n - 1] in _PARENTS[card - 1]

    def _king_at_bottom(self, king: int) -> bool:
        """Is ``king`` the bottom card of a pile with nothing face down (it needs no empty pile)?"""
        for k in range(7):
            pile = self.piles[k]
            if pile and pile[0] == king and self.down[k] == 0:
                return True
        return False

    def play(self, move: tuple[Any, ...]) -> None:
        piles, down, height = self.piles, self.down, self.height
        self._undo.append(([p[:] for p in piles], down[:], height[:], self.talon[:], self.pending))
        kind = move[0]
        self.pending = None
        if kind == "st":
            self.pending = (COVER, move[2], move[1])
        elif kind == "tt":
            _, i, _, n = move
            if n < len(piles[i]) - down[i]:
                self.pending = (USE, i, piles[i][-n - 1])
            elif n == len(piles[i]):
                self.pending = (KING, i, -1)
        elif kind == "ft":
            self.pending = (BACK, move[2], move[1] * 13 + height[move[1]] - 1)
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
        self.piles, self.down, self.height, self.talon, self.pending = self._undo.pop()
        self.auto_log.pop()

    # -- helpers -----------------------------------------------------------------------

    def _flip(self, i: int) -> None:
        if self.piles[i] and self.down[i] == len(self.piles[i]):
            self.down[i] -= 1

    def _settle(self) -> list[tuple[Any, ...]]:
        """Make every safe move to the foundations, and every move of a tableau top card to its
        foundation that can be taken back (it lies on a face-up card) when nothing is pending or it
        is the card to cover or use; return them (see the module docstring)."""
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
                        back = len(pile) - 1 > self.down[i] and (
                            self.pending is None or (self.pending[0] in (COVER, USE) and self.pending[1] == i))
                        if back or is_safe(card, height):
                            pile.pop()
                            height[suit] += 1
                            self._flip(i)
                            made.append(("tf", i))
                            changed = True
                        break
            if self.pending is not None and self.pending[0] != KING:
                _, target, card = self.pending
                if not piles[target] or piles[target][-1] != card:
                    self.pending = None  # the safe moves played the card left for use
                    changed = True
        return made


def abstract_to_moves(state: Reloaded, line: list[tuple[Any, ...]],
                      visit: Callable[[Reloaded], None] | None = None) -> list[Move]:
    """The engine moves of an abstract line, played from ``state`` (a copy is used): talon
    cards are brought to the waste's top by drawing, and redealing when the stock is empty.
    ``visit`` is shown the copy after each engine move."""
    s = state.copy()
    out: list[Move] = []

    def push(move: Move) -> None:
        reason = s.check(move)
        if reason is not None:  # pragma: no cover - a solver bug, caught by the tests
            raise AssertionError(f"solver line: {move} is illegal: {reason}")
        s._apply(move)
        out.append(move)
        if visit is not None:
            visit(s)

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


def core_position(state: Reloaded, settle: bool = True) -> Any:
    """The position of ``state`` in the compiled core (:class:`patience.solve._klondike.Klondike`);
    with ``settle`` the safe moves are made at once, as :class:`KlondikeProblem` makes them."""
    from patience.solve._klondike import Klondike  # type: ignore[import-untyped]  # compiled core: no stubs

    # the cards are ints: the core reads the engine's lists as they are (it copies what it reads)
    return Klondike(state.tableau, state.down, state.height, [*state.stock, *state.waste], settle)


def search_klondike(state: Reloaded, budget: Budget, *, probes: bool = False) -> SearchOutcome:
    """Search ``state`` with the compiled core. When it is won, the outcome's line is the whole
    abstract line from ``state``: every move followed by the safe moves it brought.

    Without ``probes`` it is :class:`KlondikeProblem`'s search, node for node. With them, the
    search pauses now and then for a short search in another move order (each with a table of its
    own): wins the reference order finds late are often found at once in another order, and a
    probe that ends without a win proves the deal unwinnable as well as the search itself."""
    core = core_position(state)
    found = core.solve(seconds=budget.seconds, nodes=budget.nodes, memory_mb=budget.memory_mb, probes=probes)
    status = Status(found["status"])
    return SearchOutcome(
        status,
        [*core.initial_auto, *found["line"]] if status is Status.WON else [],
        nodes=found["nodes"],
        seconds=found["seconds"],
        table_peak=found["table_peak"],
        table_bytes=found["table_bytes"],
        reason=found["reason"],
    )


def solve_klondike(state: Reloaded, budget: Budget) -> tuple[SearchOutcome, list[Move]]:
    """Decide a Solitaire Reloaded position; the moves are the whole winning line when it is won."""
    outcome = search_klondike(state, budget, probes=True)
    if outcome.status is not Status.WON:
        return outcome, []
    return outcome, abstract_to_moves(state, outcome.line)
