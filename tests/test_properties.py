"""Properties of every game and variant, over random deals and random legal play.

For each seed and each way of playing it: all 52 cards stay in play exactly once, no card
lands where a rule forbids, ``legal_moves`` and ``check`` agree, undo and ``pop`` restore the
exact position, positions survive every round trip, a record replays to the same game, and
a player's view never shows a face-down card.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patience.cards import CARDS, Card
from patience.errors import GameOverError, IllegalMoveError
from patience.games import DRAW, REDEAL, Move, State, get_game
from patience.notation import parse_position_text
from patience.record import replay
from patience.session import ManualClock, Session

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("teppich", {}),
    ("teppich", {"rows": 5, "cols": 6}),
    ("teppich", {"waste": True}),
    ("teppich", {"waste": True, "rows": 5, "cols": 6}),
    ("teppich", {"waste": True, "waste_passes": 2, "fill_from": "stock"}),
    ("reloaded", {}),
    ("faecher", {}),
]
# Der Fächer has no undo by default; this variant lets the undo properties reach it too.
SESSION_VARIANTS = [*VARIANTS, ("faecher", {"undo_limit": 2})]


def _id(variant: tuple[str, dict[str, Any]]) -> str:
    game, options = variant
    return " ".join([game, *(f"{k}={v}" for k, v in options.items())])


seeds = st.integers(0, 2**63 - 1)
players = st.randoms(use_true_random=False)
few = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FOUNDATIONS = ("fs", "fh", "fd", "fc")
ACES_HIGH = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1)  # Der Fächer's rank order


# -- playing ---------------------------------------------------------------------------------


def pick(state: State, rnd: random.Random) -> Move | None:
    """A random legal move, often one to a foundation so that games get somewhere."""
    moves = state.legal_moves()
    if not moves:
        return None
    up = [m for m in moves if m.dst == "f"]
    if up and rnd.random() < 0.5:
        return rnd.choice(up)
    return rnd.choice(moves)


def random_game(state: State, rnd: random.Random, max_moves: int = 60) -> Iterator[Move]:
    """Play random legal moves on ``state``, yielding each move after it is played."""
    for _ in range(max_moves):
        move = pick(state, rnd)
        if move is None:
            return
        state.push(move)
        yield move


# -- what must hold in every position --------------------------------------------------------


def all_cards(state: State) -> list[Card]:
    return [card for cards in state.piles().values() for card, _ in cards]


def rank_order(game: str) -> tuple[int, ...]:
    return ACES_HIGH if game == "faecher" else tuple(range(1, 14))


def fits_tableau(card: Card, target: Card) -> bool:
    return target.rank == card.rank + 1 and card.is_red != target.is_red


def fits_reserve(card: Card, target: Card) -> bool:
    order = ACES_HIGH.index
    return card.suit == target.suit and order(target.rank) == order(card.rank) + 1


def assert_rules_hold(state: State) -> None:
    """The structural facts of the position that no legal play can break."""
    game = state.INFO.id
    piles = state.piles()
    assert sorted(all_cards(state)) == list(range(52)), "every card exactly once"

    sequence = rank_order(game)
    for suit, name in enumerate(FOUNDATIONS):
        cards = piles[name]
        assert [c for c, _ in cards] == [CARDS[suit * 13 + r - 1] for r in sequence[: len(cards)]], name
        assert all(up for _, up in cards)
    assert sum(len(piles[name]) for name in FOUNDATIONS) == state.foundation_cards()
    assert state.is_won() == (state.foundation_cards() == 52)
    assert all(not up for _, up in piles["s"]), "the stock is face down"
    assert all(up for _, up in piles.get("w", [])), "the waste is face up"

    if game == "teppich":
        places = [name for name in piles if name[0] == "c"]
        assert len(places) == state.options.rows * state.options.cols
        gaps = 0
        for name in places:
            assert len(piles[name]) <= 1, f"{name} holds one card at most"
            assert all(up for _, up in piles[name])
            gaps += not piles[name]
        if gaps:
            # a gap is filled at once from the waste or the stock while either has a card
            assert not piles["s"] and not piles.get("w")
        if not state.options.waste:
            assert all(piles[name] for name in FOUNDATIONS), "the aces start the foundations"
        else:
            assert 1 <= state.counters()["passes"] <= state.options.waste_passes
    elif game == "reloaded":
        for i in range(1, 8):
            cards = piles[f"t{i}"]
            flags = [up for _, up in cards]
            down = flags.count(False)
            assert flags == [False] * down + [True] * (len(cards) - down), "face-down cards lie below"
            assert not cards or cards[-1][1], "a pile's top card is face up"
            run = [c for c, up in cards if up]
            assert all(fits_tableau(a, b) for b, a in pairwise(run)), f"t{i} builds down"
            assert down <= i - 1, "no card is ever turned face down"
    elif game == "faecher":
        for i in range(1, 10):
            assert len(piles[f"v{i}"]) <= 1
            assert all(up for _, up in piles[f"v{i}"])
        for i in range(1, 5):
            pile = [c for c, _ in piles[f"r{i}"]]
            assert all(up for _, up in piles[f"r{i}"])
            assert all(fits_reserve(a, b) for b, a in pairwise(pile)), f"r{i} builds down"
        assert all(piles[name] for name in FOUNDATIONS), "the 2s start the foundations"
        assert 1 <= state.counters()["passes"] <= state.options.passes
    else:  # pragma: no cover - a new game needs its own rules here
        raise AssertionError(game)

    useful = state.useful_moves()
    assert set(useful) <= set(state.legal_moves())
    assert (state.outcome() is None) == (not state.is_won() and bool(useful))


def assert_move_did_what_it_says(before: dict[str, list[tuple[Card, bool]]], state: State, move: Move) -> None:
    """The cards a move names left its source and arrived where it says, face up."""
    after = state.piles()
    if move == DRAW:
        assert after["w"][-1] == (before["s"][-1][0], True)
        assert len(after["s"]) == len(before["s"]) - 1
        return
    if move == REDEAL:
        assert [c for c, _ in after["s"]] == [c for c, _ in reversed(before["w"])]
        assert not after["w"]
        return
    moved = [c for c, _ in before[move.src][-move.n:]]
    assert len(moved) == move.n
    targets = FOUNDATIONS if move.dst == "f" else (move.dst,)
    landed = {c: up for name in targets for c, up in after[name]}
    for card in moved:
        assert landed.get(card) is True, f"{card} went to {move.dst}"


@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
@few
@given(seed=seeds, rnd=players)
def test_cards_stay_and_rules_hold(variant: tuple[str, dict[str, Any]], seed: int, rnd: random.Random) -> None:
    game, options = variant
    state = get_game(game).deal(seed, options)
    layout = list(state.piles())
    assert_rules_hold(state)
    used_fan: set[str] = set()
    before = state.piles()
    for move in random_game(state, rnd, 150):
        assert list(state.piles()) == layout, "piles are never added or removed"
        assert_move_did_what_it_says(before, state, move)
        assert_rules_hold(state)
        before = state.piles()
        if game == "faecher":
            empty = {name for name, cards in before.items() if name[0] == "v" and not cards}
            assert used_fan <= empty, "a used fan place is not refilled"
            used_fan = empty


# -- legal_moves and check agree -------------------------------------------------------------


def candidate_moves(state: State) -> list[Move]:
    """Every source/target pair of the game's pile names, with every card count that could matter."""
    piles = state.piles()
    names = [*piles, "f"]
    moves = []
    for src in names:
        cards = piles.get(src, [])
        face_up = sum(up for _, up in cards)
        # every count up to one past the face-up cards (runs, whole reserve piles), the whole pile
        counts = {*range(face_up + 2), len(cards), len(cards) + 1}
        moves += [Move(src, dst, n) for n in sorted(counts) for dst in names]
    return moves


def moving_card(state: State, move: Move) -> Card | None:
    """The card a move takes to a foundation: the top card of its source."""
    cards = state.piles().get(move.src)
    return cards[-1][0] if cards else None


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, rnd=players)
def test_legal_moves_agree_with_check(variant: tuple[str, dict[str, Any]], seed: int, rnd: random.Random) -> None:
    game, options = variant
    state = get_game(game).deal(seed, options)

    def agree() -> None:
        legal = state.legal_moves()
        assert len(set(legal)) == len(legal), "no move is listed twice"
        for move in legal:
            assert state.check(move) is None, move
        legal_set = set(legal)
        for move in candidate_moves(state):
            reason = state.check(move)
            allowed = reason is None
            if move.dst in FOUNDATIONS:
                # legal_moves names the foundations "f"; a named one must be the card's own
                card = moving_card(state, move)
                expected = Move(move.src, "f", move.n) in legal_set and card is not None \
                    and FOUNDATIONS[card.suit] == move.dst
            else:
                expected = move in legal_set
            assert allowed == expected, (move, reason)
            assert allowed or (isinstance(reason, str) and reason and "\n" not in reason)

    agree()
    for _ in random_game(state, rnd, 40):
        agree()


# -- sessions, records and undo --------------------------------------------------------------


def random_illegal(state: State, rnd: random.Random) -> Move:
    names = [*state.piles(), "f"]
    while True:
        move = Move(rnd.choice(names), rnd.choice(names), rnd.choice((1, 1, 1, 2, 3)))
        if state.check(move) is not None:
            return move


def play_session(session: Session, clock: ManualClock, rnd: random.Random, steps: int) -> None:
    """Random actions on a session: moves, undos, rejected moves, time passing, sometimes giving up.

    Checks on the way that a rejected move or undo changes nothing (but Der Fächer's charge),
    and that an undo restores the position before the move and its score.
    """
    # for each move not undone: key, position and score before it, its points, ledger length after it
    played: list[tuple[Any, dict[str, Any], int, int, int]] = []
    last_logged = True
    last_was_move = False
    for _ in range(steps):
        clock.advance(rnd.choice((0, 0, 0.4, 1.5, 3, 9.99, 10, 25)))
        session.tick()
        if session.is_over:
            return
        state = session.state
        snapshot = (state.key(), state.position(), session.score, len(session.ledger))
        roll = rnd.random()
        if roll < 0.15:
            if session.undo_reason() is not None:
                with pytest.raises(IllegalMoveError):
                    session.undo()
                assert (state.key(), state.position(), session.score, len(session.ledger)) == snapshot
                last_logged = False
                continue
            key, position, score_before, move_points, mark = played.pop()
            quiet = last_was_move and len(session.ledger) == mark
            session.undo()
            assert state.key() == key and state.position() == position
            table = session.table
            expected = _floor(_floor(snapshot[2] - move_points, table) + table.undo_points, table)
            assert session.score == expected, "the move's points taken back, then the undo charged"
            if quiet:
                # nothing but the move and this undo since: the score before the move, charged
                # the undo (Reloaded: −1, never below 0)
                assert session.score == _floor(score_before + table.undo_points, table)
            last_logged = True
            last_was_move = False
        elif roll < 0.3:
            move = random_illegal(state, rnd)
            charge = session.table.illegal_points
            with pytest.raises(IllegalMoveError):
                session.play(move)
            assert (state.key(), state.position()) == snapshot[:2]
            assert session.score == snapshot[2] + charge
            assert len(session.ledger) == snapshot[3] + bool(charge)
            last_logged = bool(charge)
        else:
            move = pick(state, rnd)
            assert move is not None, "a game that goes on has a legal move"
            session.play(move)
            points = sum(e.applied for e in session.ledger[snapshot[3]:])
            played.append((snapshot[0], snapshot[1], snapshot[2], points, len(session.ledger)))
            last_logged = True
            last_was_move = True
    if not session.is_over and (not last_logged or rnd.random() < 0.5):
        session.give_up()


def _floor(score: int, table: Any) -> int:
    return max(0, score) if table.clamp_every else score


def new_session(variant: tuple[str, dict[str, Any]], seed: int) -> tuple[Session, ManualClock]:
    game, options = variant
    clock = ManualClock()
    return Session(game, seed, options, clock=clock), clock


@pytest.mark.parametrize("variant", SESSION_VARIANTS, ids=_id)
@few
@given(seed=seeds, rnd=players)
def test_record_replays_to_the_same_game(variant: tuple[str, dict[str, Any]], seed: int,
                                         rnd: random.Random) -> None:
    session, clock = new_session(variant, seed)
    play_session(session, clock, rnd, 80)
    record = json.loads(json.dumps(session.record()))
    again = replay(record)
    assert again.state.key() == session.state.key()
    assert again.state.position() == session.state.position()
    assert again.summary() == session.summary()
    assert [e.to_dict() for e in again.ledger] == [e.to_dict() for e in session.ledger]
    assert again.log == session.log
    assert again.record() == record


@pytest.mark.parametrize("variant", SESSION_VARIANTS, ids=_id)
@few
@given(seed=seeds, rnd=players)
def test_undo_restores_position_and_score(variant: tuple[str, dict[str, Any]], seed: int,
                                          rnd: random.Random) -> None:
    session, clock = new_session(variant, seed)
    play_session(session, clock, rnd, 60)
    if session.is_over:
        with pytest.raises(GameOverError):
            session.undo()


@pytest.mark.parametrize("game", ["teppich", "reloaded", "faecher"])
@few
@given(seed=seeds, rnd=players)
def test_undo_right_after_a_move_costs_only_the_undo(game: str, seed: int, rnd: random.Random) -> None:
    """No time passes: the score after move + undo is the score before, charged the undo."""
    options = {"undo_limit": 3} if game == "faecher" else {}
    session, _ = new_session((game, options), seed)
    for _ in range(30):
        if session.is_over:
            break
        move = pick(session.state, rnd)
        assert move is not None
        key, score = session.state.key(), session.score
        session.play(move)
        if session.is_over:
            break
        if rnd.random() < 0.5:
            session.undo()
            assert session.state.key() == key
            expected = score + session.table.undo_points
            assert session.score == (max(0, expected) if session.table.clamp_every else expected)
            if game == "reloaded":
                assert session.score == max(0, score - 1)


def pick_looping(state: State, rnd: random.Random) -> Move | None:
    """A random legal move, often one onto or off a foundation: the moves a loop of points would use."""
    moves = state.legal_moves()
    if not moves:
        return None
    foundation = [m for m in moves if m.dst == "f" or m.src in FOUNDATIONS]
    if foundation and rnd.random() < 0.7:
        return rnd.choice(foundation)
    return rnd.choice(moves)


@pytest.mark.parametrize("options", [{}, {"clamp": "end"}, {"time_limit": 0}], ids=str)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, rnd=players)
def test_no_loop_of_moves_raises_the_score(options: dict[str, Any], seed: int, rnd: random.Random) -> None:
    """Solitaire Reloaded: any sequence of moves and undos that comes back to a position of the game's
    line never leaves the score higher than it was there. A position is the cards and the cards that
    have earned their foundation points (RULES.md §2: only the first time a card reaches a foundation);
    the line is the positions the moves that stand went through: an undo takes its move back, and with
    it what a loop since cost, so a position passed only by moves now undone is no longer on it."""
    clock = ManualClock()
    session = Session("reloaded", seed, options, clock=clock)
    line = [((session.state.key(), frozenset(session.scored)), session.score)]
    for _ in range(150):
        if session.is_over:
            break
        clock.advance(rnd.choice((0, 0, 0, 0.5, 4)))
        if session.undo_reason() is None and rnd.random() < 0.25:
            session.undo()
            line.pop()
        else:
            move = pick_looping(session.state, rnd)
            if move is None:
                break
            session.play(move)
            line.append(((session.state.key(), frozenset(session.scored)), session.score))
        here = (session.state.key(), frozenset(session.scored))
        before = [score for position, score in line[:-1] if position == here]
        assert line[-1][0] == here
        assert session.score <= min(before, default=session.score), "a loop of moves gained points"
        assert session.score <= line[-1][1], "an undo gained points"
        line[-1] = (here, session.score)


class Readings:
    """A clock that moves on by the next of its steps (seconds) each time it is read, then stands."""

    def __init__(self, steps: list[float]) -> None:
        self.steps = list(steps)
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        if self.steps:
            self.now += self.steps.pop(0)
        return self.now


# steps that land on and just beside the 10 s periods and short time limits
clock_steps = st.lists(st.one_of(st.sampled_from((0.0, 0.001, 0.999, 1.0, 4.999, 5.0, 9.999, 10.0)),
                                 st.floats(0, 30, allow_nan=False)), max_size=120)
TIMED_VARIANTS = [*SESSION_VARIANTS, ("reloaded", {"time_limit": 20}), ("faecher", {"time_limit": 20}),
                  ("teppich", {"waste": True, "time_limit": 20, "undo_limit": 3})]


@pytest.mark.parametrize("variant", TIMED_VARIANTS, ids=_id)
@few
@given(seed=seeds, rnd=players, steps=clock_steps)
def test_any_clock_gives_a_record_that_replays(variant: tuple[str, dict[str, Any]], seed: int,
                                                rnd: random.Random, steps: list[float]) -> None:
    """Whatever the clock reads, and however often it is read between two actions, the record a
    session writes replays to the same ledger, score and outcome: each action reads the clock once."""
    game, options = variant
    clock = Readings(steps)
    session = Session(game, seed, options, clock=clock)
    for _ in range(60):
        if session.is_over:
            break
        roll = rnd.random()
        try:
            if roll < 0.1:
                session.tick()
            elif roll < 0.25:
                session.undo()
            elif roll < 0.35:
                session.play(random_illegal(session.state, rnd))
            else:
                move = pick(session.state, rnd)
                session.play(move if move is not None else DRAW)
        except (IllegalMoveError, GameOverError):
            pass
    if not session.is_over:
        session.give_up()
    again = replay(json.loads(json.dumps(session.record())))
    assert again.summary() == session.summary()
    assert again.ledger == session.ledger


# -- pop, copy and the position notation -----------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
@few
@given(seed=seeds, rnd=players)
def test_pop_copy_and_positions_round_trip(variant: tuple[str, dict[str, Any]], seed: int,
                                           rnd: random.Random) -> None:
    game, options = variant
    cls = get_game(game)
    state = cls.deal(seed, options)
    trail = [(state.key(), state.position())]
    for _ in random_game(state, rnd, 80):
        key, position = state.key(), state.position()
        assert state.copy().key() == key
        assert state.copy().position() == position
        rebuilt = cls.from_position(json.loads(json.dumps(position)))
        assert rebuilt.key() == key and rebuilt.position() == position
        assert rebuilt.legal_moves() == state.legal_moves()
        text = str(state)
        from_text = cls.from_position(parse_position_text(text))
        assert from_text.key() == key and str(from_text) == text
        trail.append((key, position))
        assert state.ply == len(trail) - 1
        # a push and a pop leave the position as it was
        probe = pick(state, rnd)
        if probe is not None:
            state.push(probe)
            assert state.pop() == probe
            assert (state.key(), state.position()) == (key, position)
    while state.ply:
        trail.pop()
        state.pop()
        assert (state.key(), state.position()) == trail[-1]
    assert len(trail) == 1


# -- what a player sees ----------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
@few
@given(seed=seeds, rnd=players)
def test_view_never_shows_a_face_down_card(variant: tuple[str, dict[str, Any]], seed: int,
                                           rnd: random.Random) -> None:
    game, options = variant
    state = get_game(game).deal(seed, options)

    def hidden() -> None:
        view = state.view()
        piles = state.piles()
        assert list(view["piles"]) == list(piles)
        face_down = {c.text for cards in piles.values() for c, up in cards if not up}
        for name, cards in piles.items():
            seen = view["piles"][name]
            assert len(seen) == len(cards), "the view shows how many cards a pile holds"
            # a face-down card is None; a game may hide face-up cards too (Reloaded's waste)
            assert all(v is None or (up and v == c.text) for v, (c, up) in zip(seen, cards, strict=True))
            assert not cards or not cards[-1][1] or seen[-1] == cards[-1][0].text, "a face-up top shows"
        shown = json.dumps(view)
        words = set(shown.replace('"', " ").replace(",", " ").replace("[", " ").replace("]", " ").split())
        assert not face_down & words, "a face-down card's identity is in the view"

    hidden()
    for _ in random_game(state, rnd, 80):
        hidden()
