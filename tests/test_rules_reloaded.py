"""RULES.md §2, Solitaire Reloaded: one test per rule line and per score line, named after it.

Positions are built by hand (``Reloaded.from_position``) so that each test checks one rule with
exact numbers; score and time tests play them in a :class:`Session` on a ``ManualClock``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any

import pytest

from patience.cards import CARDS, card_of, parse_card
from patience.errors import BadInputError, GameOverError, IllegalMoveError
from patience.games import Event, Move, Outcome, get_game
from patience.games.base import DRAW, REDEAL
from patience.games.reloaded import Reloaded
from patience.rng import shuffled
from patience.scoring import match_bonus
from patience.session import ManualClock, Session

SUITS = "SHDC"
FOUNDATIONS = ("fs", "fh", "fd", "fc")
TABLEAU = tuple(f"t{i}" for i in range(1, 8))


def run(suit: str, low: int, high: int) -> list[str]:
    """The cards of ``suit`` from rank ``low`` to rank ``high``, as text."""
    return [card_of(rank, SUITS.index(suit)).text for rank in range(low, high + 1)]


def klondike(
    piles: Mapping[str, Sequence[str]],
    *,
    heights: Sequence[int] = (0, 0, 0, 0),
    rest: str = "s",
    options: Mapping[str, Any] | None = None,
    passes: int = 1,
) -> Reloaded:
    """A hand-made position: tableau piles, stock and waste bottom to top (lower case: face
    down), foundation heights (♠ ♥ ♦ ♣). Cards placed nowhere go face down under pile ``rest``."""
    out: dict[str, list[str]] = {
        name: run(SUITS[suit], 1, heights[suit]) for suit, name in enumerate(FOUNDATIONS)
    }
    for name in (*TABLEAU, "s", "w"):
        out[name] = list(piles.get(name, []))
    out["s"] = [t.lower() for t in out["s"]]
    placed = {parse_card(t) for cards in out.values() for t in cards}
    out[rest] = [c.text.lower() for c in CARDS if c not in placed] + out[rest]
    return Reloaded.from_position(
        {"game": "reloaded", "options": dict(options or {}), "piles": out, "counters": {"passes": passes}}
    )


def pile(state: Reloaded, name: str) -> list[str]:
    """A pile as position text: face-down cards in lower case."""
    return state.position()["piles"][name]


def assert_refused(state: Reloaded, move: Move, phrase: str) -> None:
    """``move`` is illegal for a reason that says ``phrase``, and trying it changes nothing."""
    key, position = state.key(), state.position()
    reason = state.check(move)
    assert reason is not None and phrase in reason, reason
    assert move not in state.legal_moves()
    with pytest.raises(IllegalMoveError) as caught:
        state.push(move)
    assert phrase in caught.value.reason
    assert state.key() == key and state.position() == position


def session_on(state: Reloaded, clock: ManualClock | None = None) -> Session:
    """A session playing a hand-made position. A session always deals from a seed, so a deal
    that is not over at once (same options, so the same score table) is replaced by ``state``."""
    clock = clock or ManualClock()
    for seed in count(1):
        session = Session("reloaded", seed=seed, options=state.options, clock=clock)
        if session.outcome is None:
            session.state = state
            return session
    raise AssertionError("unreachable")


def lines(session: Session) -> list[tuple[str, int]]:
    return [(e.kind, e.points) for e in session.ledger]


# a position to score in: 6♠ and 7♠ go up one after the other (+60, +70)
def two_spades(**options: Any) -> Reloaded:
    return klondike({"t1": ["6S"], "t2": ["7S"]}, heights=(5, 0, 0, 0), options=options)


# no stock left, a waste that can be turned over, and 7♠ to put up for +70
def waste_to_turn(**options: Any) -> Reloaded:
    return klondike({"t1": ["7S"], "t2": ["KH"], "w": ["9D", "8C"]}, heights=(6, 0, 0, 0), rest="t2",
                    options=options)


# -- Layout --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 300, 99999])
def test_layout_7_tableau_piles_of_1_to_7_cards_only_the_top_face_up_24_in_the_stock(seed: int) -> None:
    """"7 tableau piles with 1..7 cards, only the top card of each face up; 24 cards in the stock." """
    state = Reloaded.deal(seed)
    piles = state.piles()
    for i, name in enumerate(TABLEAU, start=1):
        assert [up for _, up in piles[name]] == [False] * (i - 1) + [True]
    assert len(piles["s"]) == 24 and not any(up for _, up in piles["s"])
    assert piles["w"] == [] and state.foundation_cards() == 0
    deck = shuffled(list(CARDS), seed, salt="reloaded")
    assert sorted(c for cards in piles.values() for c, _ in cards) == sorted(deck)


# -- Play ----------------------------------------------------------------------------------


def test_play_stock_turns_one_card_at_a_time_onto_the_waste() -> None:
    """"Stock: turn one card at a time onto the waste" """
    state = klondike({"t1": ["KS"], "s": ["3C", "7D"], "w": ["QS"]})
    stock = len(pile(state, "s"))
    assert state.push(DRAW) == ()
    assert pile(state, "w") == ["QS", "7D"]
    assert len(pile(state, "s")) == stock - 1 and pile(state, "s")[-1] == "3c"
    assert state.parse_move("draw") == DRAW == state.parse_move("d")


def test_play_only_the_waste_top_card_is_visible_and_playable() -> None:
    """"only the waste's top card is visible and playable." """
    state = klondike({"t1": ["10H"], "t2": ["6S"], "w": ["5D", "9C"]}, heights=(0, 0, 4, 0))
    assert state.view()["piles"]["w"] == [None, "9C"]
    assert [m for m in state.legal_moves() if m.src == "w"] == [Move("w", "t1")]
    assert_refused(state, Move("w", "t2"), "9♣ cannot go on 6♠")
    assert_refused(state, Move("w", "fd"), "goes only on the ♣ foundation")
    assert state.parse_move("5D>f") == Move("w", "f", 2)
    assert_refused(state, Move("w", "f", 2), "only the waste's top card can move")


def test_play_the_waste_may_be_turned_over_as_often_as_wanted() -> None:
    """"When the stock is empty the waste may be turned over into a new stock, as often as wanted" """
    state = klondike({"t1": ["KS"], "w": ["3D", "5C", "8H"]}, rest="t1", passes=7)
    for cycle in range(5):
        assert REDEAL in state.legal_moves()
        state.push(REDEAL)
        assert pile(state, "s") == ["8h", "5c", "3d"]  # the first card turned is on top again
        assert pile(state, "w") == []
        assert state.counters() == {"passes": 8 + cycle}
        for _ in range(3):
            state.push(DRAW)
        assert pile(state, "w") == ["3D", "5C", "8H"]


def test_play_the_waste_is_turned_over_only_when_the_stock_is_empty() -> None:
    """"When the stock is empty the waste may be turned over into a new stock" """
    state = klondike({"t1": ["KS"], "w": ["QD"]})
    assert_refused(state, REDEAL, "the stock is not empty yet")
    bare = klondike({"t1": ["KS"]}, rest="t1")
    assert_refused(bare, REDEAL, "the waste is empty")
    assert_refused(bare, DRAW, "the stock is empty")
    assert not {DRAW, REDEAL} & set(bare.legal_moves())
    turn = klondike({"t1": ["KS"], "w": ["QD"]}, rest="t1")
    assert_refused(turn, DRAW, "redeal to turn the waste over")


def test_play_foundations_one_per_suit_ace_up_to_king() -> None:
    """"Foundations: one per suit, Ace up to King." """
    state = klondike({"t1": ["AS"], "t2": ["3H"], "t3": ["2D"], "t4": ["KC"], "t5": ["3S"]},
                     heights=(0, 2, 0, 12))
    assert {m for m in state.legal_moves() if m.dst == "f"} == {Move("t1", "f"), Move("t2", "f"), Move("t4", "f")}
    assert_refused(state, Move("t3", "f"), "cannot start a foundation: it starts with A♦")
    assert_refused(state, Move("t2", "fs"), "goes only on the ♥ foundation")
    state.push(Move("t1", "f"))
    assert_refused(state, Move("t5", "f"), "2♠ comes next")
    state.push(Move("t4", "fc"))
    assert pile(state, "fc") == run("C", 1, 13)
    assert pile(state, "fs") == ["AS"]


def test_play_tableau_builds_down_in_alternating_colours() -> None:
    """"Tableau: build down in alternating colours" """
    state = klondike({"t1": ["10S"], "t2": ["9H"], "t3": ["9S"], "t4": ["8H"], "t5": ["9D"]})
    assert {m for m in state.legal_moves() if m.dst == "t1"} == {Move("t2", "t1"), Move("t5", "t1")}
    assert_refused(state, Move("t3", "t1"), "colours must alternate")
    assert_refused(state, Move("t4", "t1"), "builds down by one rank")
    assert_refused(state, Move("t1", "t2"), "builds down by one rank")
    assert_refused(state, Move("t2", "t2"), "its own pile")
    state.push(Move("t2", "t1"))
    assert pile(state, "t1") == ["10S", "9H"]


def test_play_any_face_up_run_moves_as_a_unit() -> None:
    """"any face-up run may move as a unit" """
    state = klondike({"t1": ["kd", "10S", "9H", "8C"], "t2": ["JH"], "t3": ["10C"]})
    assert Move("t1", "t2", 3) in state.legal_moves() and Move("t1", "t3", 2) in state.legal_moves()
    state.push(Move("t1", "t3", 2))  # part of the run
    assert pile(state, "t3") == ["10C", "9H", "8C"] and pile(state, "t1") == ["kd", "10S"]
    state.pop()
    state.push(Move("t1", "t2", 3))  # the whole run
    assert pile(state, "t2") == ["JH", "10S", "9H", "8C"] and pile(state, "t1") == ["KD"]
    state.pop()
    assert_refused(state, Move("t1", "t3", 3), "10♠ cannot go on 10♣")
    assert_refused(state, Move("t1", "t2", 4), "has 3 face-up cards, not 4")


def test_play_only_a_king_or_a_run_starting_with_a_king_may_go_into_an_empty_pile() -> None:
    """"only a King (or a run starting with a King) may go into an empty pile." """
    state = klondike({"t1": ["2d", "QH"], "t3": ["3d", "KS", "QD"], "t4": ["5S"], "t5": ["5H"],
                      "t6": ["5D"], "t7": ["6H"], "w": ["KH"]}, heights=(0, 0, 0, 13))
    into_t2 = {m for m in state.legal_moves() if m.dst == "t2"}
    assert into_t2 == {Move("t3", "t2", 2), Move("w", "t2"), Move("fc", "t2")}
    assert_refused(state, Move("t1", "t2"), "only a King (or a run headed by one) may fill an empty pile, not Q♥")
    assert_refused(state, Move("t3", "t2"), "not Q♦")
    state.push(Move("t3", "t2", 2))
    assert pile(state, "t2") == ["KS", "QD"] and pile(state, "t3") == ["3D"]


def test_play_a_face_down_card_that_becomes_a_piles_top_is_turned_face_up_at_once() -> None:
    """"A face-down card that becomes a pile's top is turned face up at once." """
    state = klondike({"t1": ["5c", "4d", "9H"], "t2": ["10S"], "t3": ["js", "AH"]})
    events = state.push(Move("t1", "t2"))
    assert pile(state, "t1") == ["5c", "4D"]
    assert Event(Event.REVEAL, parse_card("4D"), "t1") in events
    events = state.push(Move("t3", "f"))
    assert pile(state, "t3") == ["JS"]
    assert Event(Event.REVEAL, parse_card("JS"), "t3") in events
    state.pop()
    state.pop()
    assert pile(state, "t1") == ["5c", "4d", "9H"] and pile(state, "t3") == ["js", "AH"]


def test_play_a_card_may_be_moved_back_from_a_foundation_onto_the_tableau() -> None:
    """"A card may be moved back from a foundation onto the tableau." """
    state = klondike({"t1": ["6S"], "t2": ["9C"]}, heights=(0, 5, 0, 0))
    assert Move("fh", "t1") in state.legal_moves()
    assert_refused(state, Move("fh", "t2"), "5♥ cannot go on 9♣")
    assert_refused(state, Move("fh", "fs"), "only go back to the tableau")
    assert_refused(state, Move("fs", "t1"), "foundation fs is empty")
    assert_refused(state, Move("f", "t1"), "name the foundation")
    events = state.push(state.parse_move("fh>t1"))
    assert events == (Event(Event.FROM_FOUNDATION, parse_card("5H"), "foundation"),)
    assert pile(state, "fh") == run("H", 1, 4) and pile(state, "t1") == ["6S", "5H"]


def test_play_undo_the_last_1_to_3_moves_in_a_row_never_more_than_3_back() -> None:
    """"Undo: the last 1–3 moves may be undone in a row (never more than 3 back)." """
    session = Session("reloaded", 5, clock=ManualClock())
    keys = [session.state.key()]
    for _ in range(4):
        session.play("draw")
        keys.append(session.state.key())
    assert session.undos_left() == 3
    for back in (1, 2, 3):
        assert session.undo() == DRAW
        assert session.state.key() == keys[4 - back]
    assert session.undos_left() == 0
    score, ledger = session.score, len(session.ledger)
    with pytest.raises(IllegalMoveError) as caught:
        session.undo()
    assert caught.value.reason == "at most 3 moves back: make a move first"
    assert session.state.key() == keys[1] and session.score == score and len(session.ledger) == ledger


def test_play_undo_depends_on_the_play_since_never_more_than_3_back() -> None:
    """"Depending on the game state 1–3 moves can be undone in a row" (seed page): each move
    makes one more undo possible, up to 3; so after 3 undos and one new move, only that move
    can be undone, and the game never goes back past 3 moves before the furthest point."""
    session = Session("reloaded", 5, clock=ManualClock())
    keys = [session.state.key()]
    for _ in range(5):
        session.play("draw")
        keys.append(session.state.key())
    for _ in range(3):
        session.undo()
    session.play("draw")
    assert session.undos_left() == 1
    session.undo()
    assert session.state.key() == keys[2]
    with pytest.raises(IllegalMoveError, match="at most 3 moves back"):
        session.undo()
    assert session.state.ply == 2
    session.play("draw")
    session.play("draw")
    assert session.undos_left() == 2
    session.play("draw")
    session.play("draw")
    assert session.undos_left() == 3


def test_undo_each_move_adds_one_undo_up_to_3_each_undo_uses_one() -> None:
    """docs/rules.md's two examples: "4 draws then 4 undos: the 4th undo is refused; 5 draws, 2 undos,
    a draw: 2 undos are allowed" (a new move gives back one undo, it does not start a new row of 3)."""
    session = Session("reloaded", 5, clock=ManualClock())
    for _ in range(4):
        session.play("draw")
    for _ in range(3):
        session.undo()
    with pytest.raises(IllegalMoveError, match="at most 3 moves back: make a move first"):
        session.undo()
    session = Session("reloaded", 5, clock=ManualClock())
    for action in ["draw"] * 5 + ["undo"] * 2 + ["draw"]:
        session.apply_action(action)
    assert session.undos_left() == 2
    session.undo()
    session.undo()
    with pytest.raises(IllegalMoveError, match="at most 3 moves back: make a move first"):
        session.undo()
    assert session.state.ply == 2


def test_undo_limit_is_an_option() -> None:
    """The undo limit is configurable: ``undo_limit=1`` allows one move back, 0 none."""
    session = Session("reloaded", 5, {"undo_limit": 1}, clock=ManualClock())
    session.play("draw")
    session.play("draw")
    session.undo()
    with pytest.raises(IllegalMoveError, match="at most 1 move back: make a move first"):
        session.undo()
    none = Session("reloaded", 5, {"undo_limit": 0}, clock=ManualClock())
    none.play("draw")
    with pytest.raises(IllegalMoveError, match="no undo"):
        none.undo()


def test_play_move_text_infers_the_run_length_and_reads_a_card_as_its_place() -> None:
    """Moves are typed ``t6>t1`` (the run length follows), ``t6>t1:3``, or by card: ``QH>f``."""
    state = klondike({"t1": ["KH"], "t2": ["QS"], "t3": ["2d", "9S"], "t4": ["KS", "QH", "JC"],
                      "t5": ["KC"], "t6": ["5d", "QC", "JD", "10S"], "t7": ["8S"]},
                     heights=(0, 11, 0, 10))
    assert state.parse_move("t6>t1") == Move("t6", "t1", 3)
    assert str(state.parse_move("t6>t1")) == "t6>t1:3"
    assert state.parse_move("t6>t1:1") == Move("t6", "t1", 1)
    assert state.parse_move("t6 t1") == Move("t6", "t1", 3)
    assert state.parse_move("QC>t1") == Move("t6", "t1", 3)
    assert state.parse_move("JD>t2") == Move("t6", "t2", 2)
    assert state.parse_move("t4>t5") == Move("t4", "t5", 2)
    # a card names itself, not the card lying on it: Q♥ under J♣ is not J♣ going up
    assert state.parse_move("QH>f") == Move("t4", "f", 2)
    assert_refused(state, Move("t4", "f", 2), "one at a time")
    assert state.parse_move("JC>f") == Move("t4", "f")
    assert state.parse_move("QH") == Move("t4", "t5", 2)
    assert state.parse_move("JC") == Move("t4", "f")
    with pytest.raises(BadInputError, match="not face up"):
        state.parse_move("2D>f")
    with pytest.raises(BadInputError):
        state.parse_move("t9>f")


# -- Score ---------------------------------------------------------------------------------


def test_score_a_card_turned_face_up_is_plus_5() -> None:
    """"a card becomes visible (face-down card turned up) | +5" """
    session = session_on(klondike({"t1": ["4d", "9H"], "t2": ["10S"]}))
    session.play("t1>t2")
    assert lines(session) == [("reveal", 5)]
    assert session.score == 5


def test_decision_reveal_points_option_0_pays_nothing_for_a_turned_card() -> None:
    """"+5 (the source marks this one with "???"; keep it, configurable)" """
    session = session_on(klondike({"t1": ["4d", "9H"], "t2": ["10S"]}, options={"reveal_points": 0}))
    session.play("t1>t2")
    assert pile(session.state, "t1") == ["4D"]
    assert session.score == 0


def test_score_card_onto_foundation_is_10_times_value() -> None:
    """"a card onto a foundation | +10 × value" """
    state = klondike({"t1": ["7S"], "t2": ["AD"], "t3": ["KC"], "w": ["QH"]}, heights=(6, 11, 0, 12))
    session = session_on(state)
    for move in ("t1>f", "w>f", "t2>f", "t3>f"):
        session.play(move)
    assert lines(session) == [("foundation", 70), ("foundation", 120), ("foundation", 10), ("foundation", 130)]
    assert session.score == 330


def test_score_card_from_waste_onto_tableau_is_5_times_value() -> None:
    """"a card from the waste onto the tableau | +5 × value" (other tableau moves pay nothing) """
    session = session_on(klondike({"t1": ["10S"], "t3": ["8C"], "t4": ["3H"], "t5": ["3D"], "t6": ["3S"],
                                   "t7": ["3C"], "w": ["KD", "9H"]}))
    session.play("w>t1")
    session.play("w>t2")
    session.play("t3>t1")
    assert lines(session) == [("waste_to_tableau", 45), ("waste_to_tableau", 65)]
    assert session.score == 110


def test_score_game_solved_is_2500_plus_7000_divided_by_steps() -> None:
    """"game solved | +2500 + 7000 / steps (Decision: steps = player moves made, integer division)" """
    session = session_on(klondike({"t1": ["KS"], "t2": ["QS"], "w": ["JS"]}, heights=(10, 13, 13, 13)))
    for move in ("w>f", "t2>f", "t1>f"):
        session.play(move)
    assert session.outcome == Outcome.WON
    assert lines(session)[-1] == ("solved", 2500 + 7000 // 3)
    assert session.score == 110 + 120 + 130 + 4833


def test_decision_solved_steps_are_the_moves_made_undone_ones_included() -> None:
    """"Decision: steps = player moves made" (a move later undone was made too) """
    session = session_on(klondike({"t1": ["KS"], "t2": ["QS"], "w": ["JS"]}, heights=(10, 13, 13, 13)))
    for action in ("w>f", "undo", "w>f", "t2>f", "t1>f"):
        session.apply_action(action)
    assert session.moves_made == 4
    assert lines(session)[-1] == ("solved", 2500 + 7000 // 4)
    assert session.score == 360 + 4250


def test_decision_steps_net_option_counts_only_the_moves_not_undone() -> None:
    """The steps are a Decision, so an option: ``steps=net`` counts the moves that stand."""
    state = klondike({"t1": ["KS"], "t2": ["QS"], "w": ["JS"]}, heights=(10, 13, 13, 13),
                     options={"steps": "net"})
    session = session_on(state)
    for action in ("w>f", "undo", "w>f", "t2>f", "t1>f"):
        session.apply_action(action)
    assert lines(session)[-1] == ("solved", 2500 + 7000 // 3)
    assert session.score == 360 + 4833


def test_score_stock_turned_over_again_is_minus_10() -> None:
    """"stock turned over again | −10" (each time: "as often as wanted (each time costs points)") """
    session = session_on(waste_to_turn())
    session.play("t1>f")
    session.play("redeal")
    assert lines(session) == [("foundation", 70), ("redeal", -10)]
    assert session.score == 60
    session.play("draw")
    session.play("draw")
    session.play("redeal")
    assert session.score == 50


def test_score_card_from_foundation_back_to_tableau_is_minus_15() -> None:
    """"a card from a foundation back to the tableau | −15" """
    session = session_on(klondike({"t1": ["7S"], "t2": ["8H"]}, heights=(6, 0, 0, 0)))
    session.play("t1>f")
    session.play("fs>t2")
    assert lines(session) == [("foundation", 70), ("from_foundation", -15)]
    assert session.score == 55


def test_decision_a_card_earns_its_foundation_points_only_the_first_time() -> None:
    """"+10 × value (Decision: only the first time that card reaches a foundation; a card taken back
    and played up again earns nothing, so no loop of moves gains points)" (issue 10: ``fh>t3``,
    ``t3>f`` repeated earned +5 a round with the 2♥, +115 with a King) """
    session = session_on(klondike({"t1": ["7S"], "t2": ["8H"]}, heights=(6, 0, 0, 0)))
    session.play("t1>f")
    for _ in range(3):
        session.play("fs>t2")
        session.play("t2>f")
    assert lines(session) == [("foundation", 70)] + [("from_foundation", -15)] * 3
    assert session.score == 70 - 3 * 15
    assert session.scored == {parse_card("7S")}


def test_decision_an_undone_move_never_happened_so_the_card_earns_its_points_again() -> None:
    """An undo takes the move's points back and with them the card's "already scored" mark."""
    session = session_on(klondike({"t1": ["7S"], "t2": ["8H"]}, heights=(6, 0, 0, 0)))
    session.play("t1>f")
    session.undo()
    assert session.scored == set()
    session.play("t1>f")
    assert lines(session) == [("foundation", 70), ("take_back", -70), ("undo", -1), ("foundation", 70)]
    assert session.score == 70  # the undo's −1 was held at 0
    # taken back by a move, put up again, and those two moves undone: the card's points stand
    session.play("fs>t2")
    session.play("t2>f")
    session.undo()
    session.undo()
    assert session.scored == {parse_card("7S")}
    session.play("fs>t2")
    session.play("t2>f")
    assert lines(session)[-1] == ("from_foundation", -15)


def test_decision_foundation_once_option_no_pays_every_time() -> None:
    """The Decision is an option: ``foundation_once=no`` pays a card each time it goes up."""
    state = klondike({"t1": ["7S"], "t2": ["8H"]}, heights=(6, 0, 0, 0), options={"foundation_once": False})
    session = session_on(state)
    for move in ("t1>f", "fs>t2", "t2>f"):
        session.play(move)
    assert lines(session) == [("foundation", 70), ("from_foundation", -15), ("foundation", 70)]
    assert Reloaded.INFO.options().foundation_once is True


def test_decision_the_scored_cards_replay_from_the_record() -> None:
    """The "already scored" mark is rebuilt by replaying the record, undos included."""
    state = klondike({"t1": ["7S"], "t2": ["8H"]}, heights=(6, 0, 0, 0))
    live = session_on(state)
    for action in ("t1>f", "fs>t2", "undo", "fs>t2", "t2>f", "fs>t2"):
        live.apply_action(action)
    again = session_on(klondike({"t1": ["7S"], "t2": ["8H"]}, heights=(6, 0, 0, 0)))
    for entry in live.record()["actions"]:
        again.apply_action(entry["m"])
    assert again.ledger == live.ledger and again.scored == live.scored == {parse_card("7S")}


def test_score_undo_is_minus_1_and_the_undone_moves_points_are_taken_back() -> None:
    """"an undo | −1, and the undone move's points are taken back" """
    session = session_on(two_spades())
    session.play("t1>f")
    after_first = session.state.key()
    session.play("t2>f")
    assert session.score == 130
    assert session.undo() == Move("t2", "f")
    assert lines(session)[-2:] == [("take_back", -70), ("undo", -1)]
    assert session.score == 59
    assert session.state.key() == after_first


def test_score_undo_takes_back_a_penalty_too() -> None:
    """"an undo | −1, and the undone move's points are taken back" (negative points as well) """
    session = session_on(waste_to_turn())
    session.play("t1>f")
    session.play("redeal")
    assert session.score == 60
    session.undo()
    assert lines(session)[-2:] == [("take_back", 10), ("undo", -1)]
    assert session.score == 69


def test_score_every_full_10_seconds_of_play_is_minus_2() -> None:
    """"every full 10 seconds of play | −2" """
    clock = ManualClock()
    session = session_on(two_spades(), clock)
    session.play("t1>f")
    clock.set_ms(9_999)
    session.tick()
    assert session.score == 60
    clock.set_ms(10_000)
    session.tick()
    assert session.score == 58
    clock.set_ms(25_000)
    session.play("t2>f")  # the 20th second is charged before the move
    assert session.score == 126
    clock.set_ms(29_999)
    session.tick()
    assert [(e.t_ms, e.points) for e in session.ledger if e.kind == "time"] == [(10_000, -2), (20_000, -2)]
    assert session.score == 126


def test_decision_score_is_clamped_at_0_after_every_change() -> None:
    """"never below 0: Decision: the running total is clamped at 0 after every change" """
    session = session_on(waste_to_turn())
    session.play("redeal")
    redeal = session.ledger[-1]
    assert (redeal.points, redeal.applied, redeal.total) == (-10, 0, 0)
    session.play("t1>f")
    assert session.score == 70


def test_decision_clamp_end_option_lets_the_running_total_go_below_0() -> None:
    """The floor is a Decision, so an option: ``clamp=end`` floors only the final score."""
    session = session_on(waste_to_turn(clamp="end"))
    session.play("redeal")
    assert session.score == -10
    session.play("t1>f")
    assert session.score == 60
    below = session_on(waste_to_turn(clamp="end"))
    below.play("redeal")
    below.give_up()
    assert lines(below) == [("redeal", -10), ("floor", 10)]
    assert below.score == 0


# -- Match ---------------------------------------------------------------------------------


def test_match_time_limit_is_5_minutes_and_ends_the_game_as_time_out() -> None:
    """"each with a time limit (Decision: default 5 minutes, configurable)"; "A game ends when
    ... the time runs out ...; the score reached so far is the result." """
    assert Reloaded.make_options(None).time_limit == 300
    clock = ManualClock()
    session = session_on(two_spades(), clock)
    session.play("t1>f")
    clock.set_ms(1_000)
    session.play("t2>f")
    assert session.time_left_ms() == 299_000
    clock.set_ms(299_999)
    session.tick()
    assert session.outcome is None and session.score == 130 - 29 * 2
    clock.set_ms(400_000)
    session.tick()
    assert session.outcome == Outcome.TIME_OUT
    assert session.elapsed_ms() == 300_000 and session.time_left_ms() == 0
    assert session.score == 130 - 30 * 2  # no penalty for time after the end
    with pytest.raises(GameOverError):
        session.play("draw")
    with pytest.raises(GameOverError):
        session.undo()


def test_decision_time_limit_option_600_seconds_gives_10_minutes() -> None:
    """The time limit is a Decision, so an option: ``time_limit=600``; 0 means no limit."""
    clock = ManualClock()
    session = Session("reloaded", 5, {"time_limit": 600}, clock=clock)
    clock.set_ms(300_000)
    session.tick()
    assert session.outcome is None and session.time_left_ms() == 300_000
    clock.set_ms(600_000)
    session.tick()
    assert session.outcome == Outcome.TIME_OUT and session.elapsed_ms() == 600_000
    untimed_clock = ManualClock()
    untimed = Session("reloaded", 5, {"time_limit": 0}, clock=untimed_clock)
    untimed_clock.set_ms(10_000_000)
    untimed.tick()
    assert untimed.outcome is None and untimed.time_left_ms() is None


def test_match_a_game_ends_when_no_move_is_left() -> None:
    """"A game ends when it is solved, no move is left, ...; the score reached so far is the result." """
    state = klondike({"t1": ["10S"], "t2": ["5H"], "t3": ["5D"], "t4": ["2S"], "t5": ["kd", "9H"]}, rest="t1")
    assert state.legal_moves() == [Move("t5", "t1")]
    session = session_on(state)
    session.play("t5>t1")
    assert session.outcome == Outcome.NO_MOVES
    assert session.score == 5
    with pytest.raises(GameOverError):
        session.play("t5>t6")


def test_match_giving_up_ends_the_game_and_keeps_the_score() -> None:
    """"A game ends when ... the player gives up; the score reached so far is the result." """
    clock = ManualClock()
    session = session_on(two_spades(), clock)
    session.play("t1>f")
    clock.set_ms(5_000)
    session.give_up()
    assert session.outcome == Outcome.GIVEN_UP
    assert session.score == 60 and session.summary()["score"] == 60
    clock.set_ms(100_000)
    assert session.elapsed_ms() == 5_000 and session.score == 60
    with pytest.raises(GameOverError):
        session.give_up()
    with pytest.raises(GameOverError):
        session.play("t2>f")


def test_match_winner_bonus_is_10_percent_of_the_winners_score_at_least_100() -> None:
    """"the winner gets a bonus (Decision: +10 % of the winner's score, at least 100; configurable)" """
    options = Reloaded.make_options(None)
    assert match_bonus(5193, options) == 519
    assert match_bonus(1010, options) == 101
    assert match_bonus(1000, options) == 100
    assert match_bonus(500, options) == 100
    assert match_bonus(0, options) == 100


def test_decision_match_bonus_options_set_the_percent_and_the_minimum() -> None:
    """The bonus is a Decision, so options: ``match_bonus_percent`` and ``match_bonus_min``."""
    game = get_game("reloaded")
    assert match_bonus(5193, game.make_options({"match_bonus_percent": 20})) == 1038
    assert match_bonus(500, game.make_options({"match_bonus_min": 0})) == 50
    assert match_bonus(1000, game.make_options({"match_bonus_min": 250})) == 250
    assert match_bonus(5193, game.make_options(["match_bonus_min=250"])) == 519
