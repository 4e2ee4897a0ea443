"""Hints: what they may know, the moves that were reported bad, and the player that follows them."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patience.cards import CARDS
from patience.games import DRAW, REDEAL, Carpet, Faecher, Move, Reloaded
from patience.session import ManualClock, Session
from patience.solve.hints import hint, play_hints, unseen, visible_deals
from patience.solve.study import study


def _walk(seed: int, steps: int, rng: random.Random) -> Reloaded:
    """Deal ``seed`` after ``steps`` moves picked at random (stock turns twice as likely)."""
    state = Reloaded.deal(seed)
    for _ in range(steps):
        moves = state.legal_moves()
        turns = [m for m in moves if m in (DRAW, REDEAL)]
        if not moves:
            break
        state.push(rng.choice(moves + turns))
    return state


def _rehide(state: Reloaded, rng: random.Random) -> Reloaded:
    """The same position as a player sees it, the cards the player has not seen dealt anew."""
    cards, in_stock = unseen(state)
    rng.shuffle(cards)
    it = iter(cards)
    tableau = [[CARDS[next(it)] for _ in pile[:down]] + list(pile[down:])
               for pile, down in zip(state.tableau, state.down, strict=True)]
    stock = [CARDS[next(it)] for _ in range(in_stock)] + list(state.stock[in_stock:])
    return Reloaded._make(state.options, tableau, state.down, stock, state.waste, state.height, state.passes_used)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(1, 10_000), steps=st.integers(0, 200), shuffle=st.integers(0, 2**32))
def test_changing_the_cards_a_player_has_not_seen_never_changes_a_hint(seed: int, steps: int, shuffle: int) -> None:
    state = _walk(seed, steps, random.Random(shuffle)).copy()  # copy: the same (empty) past for both
    other = _rehide(state, random.Random(shuffle + 1))
    assert other.view() == state.view() and other.passes_used == state.passes_used
    assert hint(other, budget_s=60.0) == hint(state, budget_s=60.0)


def test_what_the_player_has_seen_of_the_stock() -> None:
    """Before the first redeal the stock is unseen; after it every talon card was turned once."""
    state = Reloaded.deal(5)
    assert len(unseen(state)[0]) == 21 + 24 and unseen(state)[1] == 24
    for _ in range(3):
        state.push(DRAW)
    assert unseen(state)[1] == 21  # the waste's three cards were seen, though only its top shows
    while state.stock:
        state.push(DRAW)
    state.push(REDEAL)
    assert unseen(state) == (sorted(int(c) for p, d in zip(state.tableau, state.down, strict=True)
                                    for c in p[:d]), 0)
    for deal in visible_deals(state, 4):
        assert deal.view() == state.view()
        assert deal.stock == state.stock and deal.waste == state.waste


def test_game_21_starts_with_the_ace_up_not_a_draw() -> None:
    state = Reloaded.deal(21)  # A♥ on t7, 4♠ could go onto 5♥
    assert hint(state) == Move("t7", "f")


def test_game_7_turns_cards_up_before_it_draws() -> None:
    """Game 7 once said "draw" with 6♥→7♣ and 3♠→4♦ open: a hint to draw now comes only when no
    move turns a face-down card up."""
    state = Reloaded.deal(7)
    for _ in range(200):
        move = hint(state)
        assert move is not None
        if move == DRAW:
            break
        state.push(move)
    reveals = [m for m in state.legal_moves() if m.src.startswith("t") and m.dst.startswith("t")
               and len(state.tableau[int(m.src[1:]) - 1]) - m.n == state.down[int(m.src[1:]) - 1] > 0]
    assert reveals == []
    assert str(state).count("AH") == 1 and state.height[1] >= 1  # A♥ went up on the way


def test_teppich_with_waste_draws_first_where_that_is_the_same_as_an_ace_up() -> None:
    """Game 1 of Teppich with the waste starts with two aces on the carpet and an empty waste: an ace
    up now fills its gap from the stock, as drawing first and then taking the ace up fills it from the
    waste, so the two end alike and the hint may draw first (it weighs the stock first; docs/solving.md)."""
    state = Carpet.deal(1, {"waste": True})
    aces = [m for m in state.legal_moves() if m.dst == "f"]
    assert len(aces) == 2 and not state.waste
    assert hint(state, budget_s=10.0) in [DRAW, *aces]
    up, later = state.copy(), state.copy()
    up.push(aces[0])
    later.push(DRAW)
    later.push(aces[0])
    assert later.key() == up.key()


def _stock_walk(game: str, seed: int, steps: int, rng: random.Random) -> Carpet | Faecher:
    """A Teppich-with-waste or Der Fächer deal after ``steps`` legal moves picked at random (the
    stock twice as likely), stopped while some stock cards are still unseen."""
    state: Carpet | Faecher = Carpet.deal(seed, {"waste": True}) if game == "teppich" else Faecher.deal(seed)
    for _ in range(steps):
        moves = state.useful_moves()
        if not moves:
            break
        move = rng.choice(moves + [m for m in moves if m in (DRAW, REDEAL)])
        state.push(move)
        if not unseen(state)[0]:
            state.pop()
            break
    return state.copy()


def _restock(state: Carpet | Faecher, rng: random.Random) -> Carpet | Faecher:
    """The same table, the stock cards the player has not seen put in another order."""
    from patience.solve.unseen import hidden_cards, with_hidden

    cards = hidden_cards(state)
    for _ in range(10):
        rng.shuffle(cards)
        if cards != hidden_cards(state) or len(cards) < 2:
            break
    return with_hidden(state, cards)


@pytest.mark.parametrize(("game", "seed", "steps"), [("teppich", 3, 0), ("teppich", 5, 0), ("faecher", 3, 3),
                                                     ("faecher", 12, 0)])
def test_the_stock_order_the_player_has_not_seen_never_changes_a_hint(game: str, seed: int, steps: int) -> None:
    """Teppich with the waste and Der Fächer keep their stock face down: two deals that look the same
    to the player, their stocks in different orders, get the same hint. (The hint once followed the
    solver's line, which knows the stock: it gave these deals different hints, and a player asking for
    hints learnt about the order of the stock.)"""
    state = _stock_walk(game, seed, steps, random.Random(seed))
    assert unseen(state)[0]
    for shuffle in range(3):
        other = _restock(state, random.Random(shuffle))
        assert other.view() == state.view() and other.key() != state.key()
        assert hint(other, budget_s=60.0) == hint(state, budget_s=60.0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(["teppich", "faecher"]), seed=st.integers(1, 10_000), steps=st.integers(0, 60),
       shuffle=st.integers(0, 2**32))
def test_changing_the_unseen_stock_never_changes_a_hint(game: str, seed: int, steps: int, shuffle: int) -> None:
    state = _stock_walk(game, seed, steps, random.Random(shuffle))
    other = _restock(state, random.Random(shuffle + 1))
    assert other.view() == state.view() and other.passes_used == state.passes_used
    assert hint(other, budget_s=60.0) == hint(state, budget_s=60.0)


def test_once_the_talon_was_seen_the_hint_follows_a_winning_line() -> None:
    """Der Fächer after its first pass: the redeal keeps the talon's order, so nothing is hidden any
    more and the hint is a move of the solver's winning line again."""
    from patience.solve import Budget, solve
    from patience.solve.hints import _NEXT

    state = Faecher.deal(4)
    while state.passes_used == 1:  # the hint player's first pass
        move = hint(state, budget_s=10.0)
        assert move is not None
        state.push(move)
    assert unseen(state) == ([], 0) and state.stock
    assert solve(state, Budget(seconds=10.0)).won
    move = hint(state, budget_s=10.0)
    assert move is not None and str(state) in _NEXT  # the solver's line was searched and kept
    state.push(move)
    assert solve(state, Budget(seconds=10.0)).won


def test_the_hint_player_never_goes_round_in_circles() -> None:
    """Following the hints, a Solitaire Reloaded game never comes back to a position it left
    without turning a card up in between, and it ends (won, or no hint left)."""
    for seed in (3, 4):
        state = Reloaded.deal(seed)
        won, moves = play_hints(state)
        s = state.copy()
        seen = {s.key()}
        for move in moves:
            events = s.push(move)
            if any(e.kind == "reveal" for e in events):
                seen.clear()
            assert s.key() not in seen
            seen.add(s.key())
        assert won or hint(s) is None


def test_the_hint_player_in_a_study() -> None:
    result = study("reloaded", None, 4, players=("hint", "greedy"), workers=1, progress=None)
    hinted = result.players["hint"]
    assert hinted.deals == 4 and hinted.won + hinted.lost == 4
    rows: list = []
    study("faecher", None, 2, first_seed=9, players=("hint", "solver"), workers=1, progress=None, rows_out=rows)
    assert [r[5] for r in rows] == [r[1] == "won" for r in rows]


def test_the_server_hint_is_the_players() -> None:
    """The browser's hint button asks the same function the hint player follows."""
    from patience.server.solo.hints import hint as server_hint

    session = Session("reloaded", 21, clock=ManualClock())
    assert server_hint(session) == hint(session.state) == Move("t7", "f")


def test_auto_move_plays_only_safe_cards_and_finishes_an_open_game() -> None:
    from patience.solve import Budget, solve_deal
    from patience.solve.auto import auto_move

    state = Reloaded.deal(21)
    assert auto_move(state) == Move("t7", "f")  # A♥
    state.push(Move("t7", "f"))
    assert auto_move(state) is None  # Q♥ is no Ace or 2, and nothing lies under it on a foundation
    solution = solve_deal("reloaded", 21, None, Budget(seconds=30))
    assert solution.won
    s = Reloaded.deal(21)
    for move in solution.moves:
        if not any(s.down) and not s.stock and not s.waste:
            break
        s.push(move)
    assert not s.is_won()
    for _ in range(52):  # every card face up: auto-move finishes the game
        move = auto_move(s)
        if move is None:
            break
        s.push(move)
    assert s.is_won()
    carpet = Carpet.deal(3)
    assert auto_move(carpet) in carpet.legal_moves()  # base Teppich: any card that fits
    assert auto_move(Carpet.deal(1, {"waste": True})) is None  # with the waste a gap's filling matters


def test_a_hopeless_game_gets_no_hint_rather_than_circles() -> None:
    """When every deal that fits what the player has seen is lost, the hint says no useful move
    (None) though moves that lead somewhere new are left, and the hint player stops there."""
    from patience.server.solo.hints import hint as server_hint
    from patience.solve.klondike import core_position

    state = Reloaded.deal(69)
    won, moves = play_hints(state)
    assert not won
    s = state.copy()
    for move in moves:
        s.push(move)
    assert hint(s) is None
    session = Session("reloaded", 69, clock=ManualClock())
    for move in moves:
        session.play(move)
    assert server_hint(session) is None  # the browser's hint button says so too
    assert all(core_position(w).solve(seconds=5.0, nodes=50_000, memory_mb=32.0)["status"] == "unwinnable"
               for w in visible_deals(s, 12))
    fresh = 0
    for move in s.legal_moves():
        s.push(move)
        fresh += s.key() not in {t.key() for t in _positions(state, moves)}
        s.pop()
    assert fresh  # not a dead end of circles: moves to new positions were left, none of use


def _positions(state: Reloaded, moves: list[Move]) -> list[Reloaded]:
    s, out = state.copy(), [state.copy()]
    for move in moves:
        s.push(move)
        out.append(s.copy())
    return out


def _walked_lines(core: Any, depth: int, most: int) -> list[list[Any]]:
    """The hint's lines walked move by move from Python through the core's play and undo: the reference
    the compiled ``Klondike.lines`` must agree with (it was the hint's own walk)."""
    down = core.state()[1]
    lines: list[tuple[float, list[Any]]] = []
    seen = {core.key()}

    def walk(line: list[Any]) -> None:
        for move in core.moves():
            if len(lines) >= most:
                return
            core.play(move)
            line.append(move)
            won, after = core.is_won(), core.state()[1]
            if won or after != down or len(line) >= depth:
                turned = [d for d, a in zip(down, after, strict=True) if a != d]
                lines.append((math.inf if won else max(turned, default=-1), line[:]))
            elif (key := core.key()) not in seen:
                seen.add(key)
                walk(line)
            line.pop()
            core.undo()

    walk([])
    lines.sort(key=lambda r: (-r[0], len(r[1])))
    return [line for _, line in lines]


@pytest.mark.parametrize("seed", [3, 40, 77])
def test_the_cores_lines_are_those_of_the_walk_move_by_move(seed: int) -> None:
    """``Klondike.lines`` (the hint's lines, walked in the core) gives the very lines, in the very order,
    of the walk made move by move through the core's play and undo, at every position of a hint game
    once the talon was seen, on sampled deals, for several depths and caps (a cap cuts the walk short)."""
    from patience.solve.klondike import core_position

    state = Reloaded.deal(seed)
    compared = 0
    for _ in range(400):
        if state.is_won():
            break
        if not (state.passes_used == 1 and state.stock):
            core = core_position(visible_deals(state, 1)[0])
            for depth, most in ((5, 120), (3, 10), (8, 400), (1, 0)):
                assert core.lines(depth, most) == _walked_lines(core, depth, most), (seed, str(state), depth, most)
            compared += 1
        move = hint(state, budget_s=5.0)
        if move is None:
            break
        state.push(move)
    assert compared >= 10
    with pytest.raises(ValueError):
        core_position(Reloaded.deal(1)).lines(0, 10)


def test_a_line_is_the_same_in_every_sampled_deal() -> None:
    """Once the talon was seen, the hint weighs lines up to the next card turned up: each line is
    a line of legal moves in every sampled deal and turns nothing up before its last move,
    so a player can play it without knowing which deal is the real one; lines that turn up a card
    of a deeper pile come first."""
    from patience.solve.hints import _lines
    from patience.solve.klondike import core_position

    state = Reloaded.deal(40)
    while state.stock:
        state.push(DRAW)
    state.push(REDEAL)
    deals = [core_position(w) for w in visible_deals(state, 6)]
    lines = _lines(core_position(visible_deals(state, 1)[0]))
    assert lines
    turned = 0
    order = []  # (face-down cards of the pile a line turns a card up in, or -1; its length)
    for line in lines:
        core = deals[0]
        for move in line:
            core.play(move)
        after = core.state()[1]
        order.append((max((d for d, a in zip(state.down, after, strict=True) if a != d), default=-1), len(line)))
        for _ in line:
            core.undo()
    # a careful player's order: a card of the deepest pile first, shorter lines first among those
    assert order == sorted(order, key=lambda r: (-r[0], r[1]))
    for line in lines:
        for core in deals:
            for k, move in enumerate(line):
                # one of the core's moves, but where this sample is a dead end (the core offers no
                # moves in a lost position): a legal move there all the same
                assert move in core.moves() or (not core.moves() and move in core.legal_moves())
                core.play(move)
                if k < len(line) - 1:
                    assert core.state()[1] == list(state.down)
            turned += core.state()[1] != list(state.down)
            for _ in line:
                core.undo()
    assert turned
    assert hint(state) in state.legal_moves()
