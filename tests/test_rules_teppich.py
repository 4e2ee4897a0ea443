"""RULES.md §1, Teppich / Tappeto / Carpet: one test per rule line, named after it.

Most tests build an exact position by hand (``Carpet.from_position``) so that each checks one
rule with exact numbers; the layout tests deal from seeds and compare with the project's own
shuffle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any

import pytest

from patience.cards import CARDS, card_of
from patience.errors import BadInputError, IllegalMoveError
from patience.games import Event, Move, Outcome, get_game
from patience.games.base import DRAW, REDEAL
from patience.games.carpet import Carpet
from patience.rng import shuffled
from patience.session import ManualClock, Session

SUITS = "SHDC"
FOUNDATIONS = ("fs", "fh", "fd", "fc")
NON_ACES = [c for c in CARDS if c.rank != 1]


def run(suit: str, low: int, high: int) -> list[str]:
    """The cards of ``suit`` from rank ``low`` to rank ``high``, as text."""
    return [card_of(rank, SUITS.index(suit)).text for rank in range(low, high + 1)]


def carpet_state(
    places: Mapping[int, str],
    stock: Sequence[str] = (),
    *,
    heights: Sequence[int] = (1, 1, 1, 1),
    waste: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
    passes: int = 1,
) -> Carpet:
    """A hand-made position: foundation heights (♠ ♥ ♦ ♣), carpet places (1-based), the stock
    and the waste bottom to top. Cards placed nowhere go face down under the stock."""
    opts = Carpet.make_options(options)
    piles: dict[str, list[str]] = {
        name: run(SUITS[suit], 1, heights[suit]) for suit, name in enumerate(FOUNDATIONS)
    }
    for place in range(1, opts.rows * opts.cols + 1):
        piles[f"c{place}"] = [places[place]] if place in places else []
    placed = {t for cards in piles.values() for t in cards} | set(stock) | set(waste)
    rest = [c.text for c in CARDS if c.text not in placed]
    piles["s"] = [t.lower() for t in (*rest, *stock)]
    position: dict[str, Any] = {"game": "teppich", "options": dict(options or {}), "piles": piles}
    if opts.waste:
        piles["w"] = list(waste)
        position["counters"] = {"passes": passes}
    return Carpet.from_position(position)


def texts(cards: list[tuple[Any, bool]]) -> list[str]:
    return [c.text for c, _ in cards]


def assert_refused(state: Carpet, move: Move, phrase: str) -> None:
    """``move`` is illegal for a reason that says ``phrase``, and trying it changes nothing."""
    key, position = state.key(), state.position()
    reason = state.check(move)
    assert reason is not None and phrase in reason, reason
    with pytest.raises(IllegalMoveError) as caught:
        state.push(move)
    assert phrase in caught.value.reason
    assert state.key() == key and state.position() == position


def session_on(state: Carpet) -> Session:
    """A session playing a hand-made position. A session always deals from a seed, so a deal
    that is not over at once (same options: the same score table and the same four aces to
    start) is replaced by ``state``."""
    for seed in count(1):
        session = Session("teppich", seed=seed, options=state.options, clock=ManualClock())
        if session.outcome is None:
            session.state = state
            return session
    raise AssertionError("unreachable")


# -- Layout --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 77, 123456])
def test_layout_aces_start_the_four_foundations(seed: int) -> None:
    """"The four aces start on four foundations." """
    state = Carpet.deal(seed)
    piles = state.piles()
    assert [texts(piles[name]) for name in FOUNDATIONS] == [["AS"], ["AH"], ["AD"], ["AC"]]
    assert state.foundation_cards() == 4
    elsewhere = [c for name, cards in piles.items() if name not in FOUNDATIONS for c, _ in cards]
    assert not any(c.rank == 1 for c in elsewhere)


def test_layout_the_other_48_cards_are_shuffled() -> None:
    """"The other 48 cards are shuffled." """
    deals = [Carpet.deal(seed) for seed in range(1, 6)]
    for state in deals:
        rest = [c for name, cards in state.piles().items() if name not in FOUNDATIONS for c, _ in cards]
        assert sorted(rest) == NON_ACES
    assert len({state.key() for state in deals}) == 5
    assert Carpet.deal(3).key() == Carpet.deal(3).key()


@pytest.mark.parametrize("seed", [1, 42])
def test_layout_20_cards_dealt_face_up_into_4_rows_of_5_row_by_row(seed: int) -> None:
    """"20 cards are dealt face up into a carpet of 4 rows × 5 columns (row by row)." """
    state = Carpet.deal(seed)
    assert (state.options.rows, state.options.cols) == (4, 5)
    piles = state.piles()
    places = [name for name in piles if name.startswith("c")]
    assert places == [f"c{i}" for i in range(1, 21)]
    assert all(len(piles[p]) == 1 and piles[p][0][1] for p in places)
    # row r, column k is place 5r + k + 1 and holds the (5r + k)-th card dealt
    deck = shuffled(NON_ACES, seed, salt="teppich")
    for row in range(4):
        for col in range(5):
            assert piles[f"c{row * 5 + col + 1}"][0][0] == deck[row * 5 + col]


def test_layout_the_remaining_28_cards_form_the_stock_face_down() -> None:
    """"The remaining 28 cards form the stock, face down." """
    state = Carpet.deal(5)
    stock = state.piles()["s"]
    assert len(stock) == 28
    assert not any(up for _, up in stock)
    assert all(t == t.lower() for t in state.position()["piles"]["s"])
    assert state.view()["piles"]["s"] == [None] * 28
    assert sorted(c for c, _ in stock) == sorted(shuffled(NON_ACES, 5, salt="teppich")[20:])


# -- Play ----------------------------------------------------------------------------------


def test_play_the_only_move_is_a_carpet_card_next_on_its_suits_foundation() -> None:
    """"The only move: a carpet card that is the next card of its suit's foundation
    (same suit, one rank higher) goes onto that foundation." """
    state = carpet_state({1: "2S", 2: "3S", 3: "4H", 4: "3D", 5: "KC", 6: "2C"}, heights=(1, 3, 1, 1))
    assert sorted(state.legal_moves()) == sorted([Move("c1", "f"), Move("c3", "f"), Move("c6", "f")])
    events = state.push(Move("c3", "f"))
    assert events[0] == Event(Event.FOUNDATION, CARDS[13 + 3], "carpet")
    assert texts(state.piles()["fh"]) == ["AH", "2H", "3H", "4H"]
    # the stock never deals a card on its own in the base game
    assert_refused(state, DRAW, "no drawing")
    assert_refused(state, REDEAL, "no drawing")


def test_play_a_card_that_is_not_next_on_its_foundation_is_refused() -> None:
    """"... the next card of its suit's foundation (same suit, one rank higher) ..." """
    state = carpet_state({1: "2S", 2: "3S", 3: "KC"})
    assert_refused(state, Move("c2", "f"), "2♠ comes next")
    assert_refused(state, Move("c3", "fc"), "2♣ comes next")
    assert_refused(state, Move("c9", "f"), "is empty")


def test_play_a_card_goes_onto_its_own_suits_foundation_only() -> None:
    """"... goes onto that foundation." (its own suit's foundation) """
    state = carpet_state({1: "2S"})
    assert_refused(state, Move("c1", "fh"), "goes only on the ♠ foundation")
    state.push(Move("c1", "fs"))
    assert state.foundation_cards() == 5


def test_play_gap_is_filled_at_once_from_the_stock_top() -> None:
    """"The gap it leaves is filled at once with the top card of the stock, in the same place." """
    state = carpet_state({7: "2H", 8: "QS"}, stock=["5C", "9D"])
    stock_before = len(state.piles()["s"])
    events = state.push(Move("c7", "f"))
    piles = state.piles()
    assert texts(piles["c7"]) == ["9D"] and piles["c7"][0][1]
    assert texts(piles["c8"]) == ["QS"]
    assert len(piles["s"]) == stock_before - 1
    assert texts(piles["s"])[-1] == "5C"
    assert events[1] == Event(Event.FILL, CARDS[26 + 8], "s")


def test_play_when_the_stock_is_empty_gaps_stay_empty() -> None:
    """"When the stock is empty, gaps stay empty." """
    state = carpet_state({1: "QC", 2: "KC", 3: "JC"}, heights=(13, 13, 13, 10))
    assert state.piles()["s"] == []
    state.push(Move("c3", "f"))
    state.push(Move("c1", "f"))
    piles = state.piles()
    assert piles["c1"] == [] and piles["c3"] == []
    assert texts(piles["c2"]) == ["KC"]
    assert_refused(state, Move("c1", "f"), "c1 is empty")


def test_play_cards_never_build_on_each_other_on_the_carpet() -> None:
    """"Cards never build on each other on the carpet." """
    state = carpet_state({1: "9H", 2: "10S", 3: "8H"})
    assert_refused(state, Move("c1", "c2"), "never onto each other")
    assert_refused(state, Move("c3", "c1"), "never onto each other")
    assert_refused(state, Move("c1", "c2", 2), "one at a time")
    assert state.legal_moves() == []


def test_play_move_text_names_a_carpet_place_or_the_card_in_it() -> None:
    """Moves are typed as ``c3>f``, ``c3``, ``3`` or by the card: ``4H>f``."""
    state = carpet_state({3: "2H"})
    for text in ("c3>f", "c3", "3", "2H>f", "2h>fh", "c3 f"):
        assert state.parse_move(text).src == "c3", text
    assert str(state.parse_move("2h>fh")) == "c3>fh"
    with pytest.raises(BadInputError, match="not face up"):
        state.parse_move("KS>f")
    with pytest.raises(BadInputError, match="no pile"):
        state.parse_move("t3>f")


# -- End and score -------------------------------------------------------------------------


def test_end_won_when_all_four_foundations_reach_the_king() -> None:
    """"Won when all four foundations reach the King (52 cards on foundations)." """
    state = carpet_state({7: "KC"}, heights=(13, 13, 13, 12))
    assert not state.is_won() and state.outcome() is None
    state.push(Move("c7", "f"))
    assert state.is_won()
    assert state.outcome() == Outcome.WON
    assert state.foundation_cards() == 52


def test_end_over_when_no_carpet_card_can_move() -> None:
    """"Over when no carpet card can move." (cards left in the stock do not help) """
    places = {i + 1: t for i, t in enumerate(run("S", 4, 13) + run("H", 4, 13))}
    places[1] = "2S"
    state = carpet_state(places, stock=["9D", "4S"])
    assert state.outcome() is None
    state.push(Move("c1", "f"))  # the 4♠ fills the gap, but 3♠ lies in the stock
    assert texts(state.piles()["c1"]) == ["4S"]
    assert state.legal_moves() == []
    assert state.outcome() == Outcome.NO_MOVES
    assert len(state.piles()["s"]) == 27


def test_end_score_is_the_number_of_cards_on_the_foundations() -> None:
    """"Score = number of cards on the foundations (4..52)." """
    session = session_on(carpet_state({1: "2S", 2: "3S", 3: "9C"}, stock=["8D", "7D"]))
    assert session.score == 4
    session.play("c1>f")
    assert session.score == 5
    session.play("c2>f")
    assert session.outcome == Outcome.NO_MOVES
    assert session.score == 6 == session.state.foundation_cards()
    assert [(e.kind, e.points) for e in session.ledger] == [("start", 4), ("foundation", 1), ("foundation", 1)]


def test_end_score_is_52_when_won() -> None:
    """"Score = number of cards on the foundations (4..52)." (the top: a won game) """
    # every card comes up in turn: the carpet holds 2♠..K♠, 2♥..9♥, the stock the rest in order
    order = run("S", 2, 13) + run("H", 2, 13) + run("D", 2, 13) + run("C", 2, 13)
    state = carpet_state(dict(enumerate(order[:20], start=1)), stock=order[20:][::-1])
    session = session_on(state)
    while session.outcome is None:
        session.play(session.state.legal_moves()[0])
    assert session.outcome == Outcome.WON
    assert session.moves_made == 48
    assert session.score == 52


# -- Variants ------------------------------------------------------------------------------


def test_variant_larger_carpet_has_30_cards_in_5_by_6_and_18_in_the_stock() -> None:
    """"Larger carpet: 5 × 6 = 30 carpet cards, 18 in the stock." """
    state = Carpet.deal(9, {"rows": 5, "cols": 6})
    piles = state.piles()
    places = [name for name in piles if name.startswith("c")]
    assert places == [f"c{i}" for i in range(1, 31)]
    assert all(len(piles[p]) == 1 and piles[p][0][1] for p in places)
    assert len(piles["s"]) == 18
    assert state.foundation_cards() == 4
    assert get_game("carpet").deal(9, ["rows=5", "cols=6"]).key() == state.key()


def test_variant_waste_pile_deals_all_52_cards_20_to_the_carpet_32_to_the_stock() -> None:
    """"With waste pile: aces are not removed first; all 52 cards are shuffled, 20 dealt to the
    carpet, 32 to the stock." """
    state = Carpet.deal(4, {"waste": True})
    piles = state.piles()
    carpet = [c for name, cards in piles.items() if name.startswith("c") for c, _ in cards]
    assert carpet == shuffled(list(CARDS), 4, salt="teppich")[:20]
    assert len(piles["s"]) == 32 and not any(up for _, up in piles["s"])
    assert piles["w"] == []
    assert sorted(carpet + [c for c, _ in piles["s"]]) == list(CARDS)


def test_variant_waste_pile_foundations_start_empty_and_an_ace_starts_one_when_available() -> None:
    """"Foundations start empty and an ace starts a foundation when it becomes available." """
    dealt = Carpet.deal(4, {"waste": True})
    assert dealt.foundation_cards() == 0
    assert Session("teppich", 4, {"waste": True}, clock=ManualClock()).score == 0
    state = carpet_state({1: "AS", 2: "2H"}, heights=(0, 0, 0, 0), options={"waste": True})
    assert Move("c1", "f") in state.legal_moves() and Move("c2", "f") not in state.legal_moves()
    assert_refused(state, Move("c2", "f"), "cannot start a foundation: it starts with A♥")
    state.push(Move("c1", "f"))
    assert texts(state.piles()["fs"]) == ["AS"]


def test_decision_waste_pile_stock_is_turned_one_card_at_a_time_onto_the_waste() -> None:
    """"Decision: the stock is turned one card at a time onto a waste pile ..." """
    state = carpet_state({1: "9H"}, stock=["3C", "7D"], waste=["QS"], heights=(0, 0, 0, 0),
                         options={"waste": True})
    stock_before = len(state.piles()["s"])
    assert DRAW in state.legal_moves()
    state.push(DRAW)
    piles = state.piles()
    assert texts(piles["w"]) == ["QS", "7D"] and all(up for _, up in piles["w"])
    assert len(piles["s"]) == stock_before - 1 and texts(piles["s"])[-1] == "3C"


def test_decision_waste_pile_one_pass_only() -> None:
    """"Decision: ... one pass only" """
    places = {i + 1: t for i, t in enumerate(run("S", 4, 13) + run("H", 4, 13))}
    rest = [c.text for c in CARDS if c.text not in places.values()]
    state = carpet_state(places, waste=rest, heights=(0, 0, 0, 0), options={"waste": True})
    assert state.piles()["s"] == []
    assert_refused(state, DRAW, "the stock is empty")
    assert_refused(state, REDEAL, "1 time only")
    assert state.legal_moves() == []
    assert state.outcome() == Outcome.NO_MOVES


def test_decision_waste_passes_option_2_lets_the_waste_be_turned_over_once() -> None:
    """The one pass is a Decision, so an option: ``waste_passes=2`` allows a second pass."""
    places = {i + 1: t for i, t in enumerate(run("S", 4, 13) + run("H", 4, 13))}
    rest = [c.text for c in CARDS if c.text not in places.values()]
    state = carpet_state(places, waste=rest, heights=(0, 0, 0, 0),
                         options={"waste": True, "waste_passes": 2})
    assert state.legal_moves() == [REDEAL]
    state.push(REDEAL)
    assert state.counters() == {"passes": 2}
    assert state.piles()["w"] == []
    assert texts(state.piles()["s"]) == rest[::-1]  # the first card turned is on top again
    state.push(DRAW)
    assert texts(state.piles()["w"]) == [rest[0]]
    while DRAW in state.legal_moves():
        state.push(DRAW)
    assert_refused(state, REDEAL, "2 times only")


def test_decision_waste_pile_top_card_may_go_to_a_foundation() -> None:
    """"Decision: ... the waste's top card may go to a foundation" (and only the top card) """
    state = carpet_state({1: "9H"}, waste=["AH", "2S"], heights=(1, 0, 0, 0), options={"waste": True})
    moves = state.legal_moves()
    assert Move("w", "f") in moves and [m for m in moves if m.src != "s"] == [Move("w", "f")]
    events = state.push(Move("w", "f"))
    assert events == (Event(Event.FOUNDATION, CARDS[1], "waste"),)
    assert texts(state.piles()["fs"]) == ["AS", "2S"] and texts(state.piles()["w"]) == ["AH"]
    state.push(Move("w", "fh"))
    assert state.piles()["w"] == []
    assert_refused(state, Move("w", "f"), "the waste is empty")


def test_decision_waste_pile_gap_is_filled_from_the_waste_top() -> None:
    """"Decision: ... a carpet gap is filled at once from the waste's top card ..." """
    state = carpet_state({5: "AD"}, stock=["3C"], waste=["8S", "JH"], heights=(0, 0, 0, 0),
                         options={"waste": True})
    events = state.push(Move("c5", "f"))
    piles = state.piles()
    assert texts(piles["c5"]) == ["JH"]
    assert texts(piles["w"]) == ["8S"] and texts(piles["s"])[-1] == "3C"
    assert events[1] == Event(Event.FILL, CARDS[13 + 10], "w")


def test_decision_waste_pile_gap_is_filled_from_the_stock_when_the_waste_is_empty() -> None:
    """"Decision: ... or from the stock when the waste is empty." """
    state = carpet_state({5: "AD"}, stock=["3C"], heights=(0, 0, 0, 0), options={"waste": True})
    state.push(Move("c5", "f"))
    assert texts(state.piles()["c5"]) == ["3C"]
    assert state.piles()["w"] == []


def test_decision_waste_pile_gap_stays_empty_when_stock_and_waste_are_both_empty() -> None:
    """"When the stock is empty, gaps stay empty." (waste pile variant: and the waste too) """
    state = carpet_state({5: "KC"}, heights=(13, 13, 13, 12), options={"waste": True})
    state.push(Move("c5", "f"))
    assert state.piles()["c5"] == []
    assert state.outcome() == Outcome.WON


def test_decision_fill_from_stock_option_fills_a_gap_from_the_stock_first() -> None:
    """The fill order is a Decision, so an option: ``fill_from=stock`` takes the stock's top
    card first, and the waste's only when the stock is empty."""
    opts = {"waste": True, "fill_from": "stock"}
    state = carpet_state({5: "AD"}, stock=["3C"], waste=["8S", "JH"], heights=(0, 0, 0, 0),
                         options=opts)
    state.push(Move("c5", "f"))
    assert texts(state.piles()["c5"]) == ["3C"]
    assert texts(state.piles()["w"]) == ["8S", "JH"]
    empty_stock = carpet_state({5: "AD"}, waste=[c.text for c in CARDS if c.text != "AD"],
                               heights=(0, 0, 0, 0), options=opts)
    assert empty_stock.piles()["s"] == []
    empty_stock.push(Move("c5", "f"))
    assert texts(empty_stock.piles()["c5"]) == ["KC"]


# -- the options a duel sets: a clock and an undo limit ---------------------------------------------


def test_options_by_default_teppich_has_no_clock_and_any_number_of_undos() -> None:
    clock = ManualClock()
    session = Session("teppich", 5, {"waste": True}, clock=clock)
    for _ in range(6):
        session.play("draw")
    for _ in range(6):
        session.undo()
    assert session.undos_left() is None and session.undo_reason() == "there is no move to undo"
    clock.advance(86_400)
    session.tick()
    assert not session.is_over and session.time_left_ms() is None


def test_options_time_limit_ends_the_game_as_a_time_out_and_the_record_replays() -> None:
    from patience.record import replay

    clock = ManualClock()
    session = Session("teppich", 5, {"waste": True, "time_limit": 60}, clock=clock)
    clock.advance(10)
    session.play("draw")
    clock.advance(55)
    session.tick()
    assert session.outcome == Outcome.TIME_OUT and session.end_ms == 60_000
    assert session.score == session.state.foundation_cards()  # the score is what is on the foundations
    back = replay(session.record())
    assert back.outcome == Outcome.TIME_OUT and back.score == session.score


@pytest.mark.parametrize(("limit", "reason"), [(0, "this game has no undo"),
                                               (2, "at most 2 moves back: make a move first")])
def test_options_undo_limit_allows_that_many_in_a_row(limit: int, reason: str) -> None:
    session = Session("teppich", 5, {"waste": True, "undo_limit": limit}, clock=ManualClock())
    for _ in range(3):
        session.play("draw")
    for _ in range(limit):
        session.undo()
    with pytest.raises(IllegalMoveError) as refused:
        session.undo()
    assert refused.value.reason == reason
    with pytest.raises(BadInputError):
        Session("teppich", 5, {"undo_limit": -2})
