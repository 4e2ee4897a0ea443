"""Der Fächer as RULES.md §3 states it: one test per rule line and per score line.

Each test is named after its line and quotes it in its docstring. Positions are made by hand
with :func:`fan_position`; scored tests run a :class:`Session` on a :class:`ManualClock`, so
the draining pool is checked to the exact point.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from patience.cards import CARDS, parse_card
from patience.errors import BadInputError, IllegalMoveError
from patience.games import DRAW, REDEAL, Faecher, FaecherOptions, Move, Outcome
from patience.games.faecher import fan_order
from patience.options import describe_options, parse_options
from patience.session import ManualClock, Session

ORDER = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
FOUNDATIONS = {"S": "fs", "H": "fh", "D": "fd", "C": "fc"}
FAN = [f"v{i}" for i in range(1, 10)]
RESERVES = [f"r{i}" for i in range(1, 5)]
SEEDS = range(1, 21)


def fan_position(
    *,
    found: Sequence[str] = (),
    fan: Sequence[str] = (),
    reserves: Sequence[Sequence[str]] = (),
    waste: Sequence[str] = (),
    stock: Sequence[str] = (),
    rest: str = "s",
    passes: int = 1,
    options: dict[str, object] | None = None,
) -> Faecher:
    """A hand-made Der Fächer position.

    ``found`` names each foundation's top card (a suit not named holds its 2); ``fan`` fills
    v1, v2, ... (``""`` for a used place); piles are listed bottom to top. Every card not named
    goes face down under the talon (``rest="s"``) or face up under the waste (``rest="w"``).
    """
    tops = {card[-1].upper(): card[:-1].upper() for card in found}
    piles: dict[str, list[str]] = {}
    for letter, name in FOUNDATIONS.items():
        top = tops.get(letter, "2")
        piles[name] = [rank + letter for rank in ORDER[: ORDER.index(top) + 1]]
    for i, name in enumerate(FAN):
        piles[name] = [fan[i]] if i < len(fan) and fan[i] else []
    for i, name in enumerate(RESERVES):
        piles[name] = list(reserves[i]) if i < len(reserves) else []
    named = {parse_card(text) for pile in piles.values() for text in pile}
    named |= {parse_card(text) for text in (*waste, *stock)}
    left = [c.text for c in CARDS if c not in named]
    piles["s"] = [c.lower() for c in (left if rest == "s" else [])] + [c.lower() for c in stock]
    piles["w"] = (left if rest == "w" else []) + list(waste)
    return Faecher.from_position(
        {"game": "faecher", "options": options or {}, "piles": piles, "counters": {"passes": passes}}
    )


def session_at(state: Faecher, clock: ManualClock | None = None) -> Session:
    """A scored game of Der Fächer that starts from a hand-made position (with its options)."""
    session = Session("faecher", seed=1, options=state.options, clock=clock or ManualClock())
    session.state = state
    return session


def top(state: Faecher, pile: str) -> str | None:
    cards = state.piles()[pile]
    return cards[-1][0].text if cards else None


def moves(state: Faecher) -> set[str]:
    return {str(m) for m in state.legal_moves()}


def reason(state: Faecher, move: Move) -> str:
    why = state.check(move)
    assert why is not None, f"{move} should be illegal in {state}"
    return why


# -- Ranks --------------------------------------------------------------------------------


def test_ranks_run_2_to_ace_aces_high() -> None:
    """"Ranks run 2, 3, …, 10, J, Q, K, A (aces high).\""""
    assert [fan_order(parse_card(rank + "S")) for rank in ORDER] == list(range(13))
    # on a foundation the Ace follows the King, and only the King
    state = fan_position(found=["KS", "QH"], fan=["AS", "AH"])
    assert Move("v1", "f") in state.legal_moves()
    assert "K♥ comes next" in reason(state, Move("v2", "f"))
    # in a reserve pile the King goes on the Ace (down in suit), never the Ace on the 2
    state = fan_position(fan=["KD", "AC"], reserves=[["AD"], ["KC"]])
    assert Move("v1", "r1") in state.legal_moves()
    assert "down by one rank" in reason(state, Move("v2", "r2"))  # the Ace is above the King


# -- Layout -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_the_four_2s_start_as_foundation_bases(seed: int) -> None:
    """"The four 2s start as foundation bases ("Familien").\""""
    piles = Faecher.deal(seed).piles()
    assert {name: [c.text for c, _ in piles[name]] for name in FOUNDATIONS.values()} == {
        "fs": ["2S"], "fh": ["2H"], "fd": ["2D"], "fc": ["2C"]}
    elsewhere = [c for name, cards in piles.items() if name not in FOUNDATIONS.values() for c, _ in cards]
    assert all(c.rank != 2 for c in elsewhere)


def test_a_position_without_the_2s_on_the_foundations_is_refused() -> None:
    """"The four 2s start as foundation bases ("Familien").\""""
    position = fan_position().position()
    position["piles"]["fs"] = []
    position["piles"]["s"].append("2s")
    with pytest.raises(BadInputError, match="2s start the foundations"):
        Faecher.from_position(position)


@pytest.mark.parametrize("seed", SEEDS)
def test_nine_cards_face_up_in_the_fan(seed: int) -> None:
    """"9 cards face up in the fan, each of them playable on its own.\""""
    piles = Faecher.deal(seed).piles()
    assert [len(piles[name]) for name in FAN] == [1] * 9
    assert all(up for name in FAN for _, up in piles[name])


def test_each_fan_card_is_playable_on_its_own() -> None:
    """"9 cards face up in the fan, each of them playable on its own.\""""
    fan = ["3S", "3H", "3D", "3C", "9S", "9H", "9D", "9C", "KS"]
    state = fan_position(fan=fan, reserves=[["10S"], ["10H"], ["10D"], ["10C"]])
    expected = {"v1>f", "v2>f", "v3>f", "v4>f", "v5>r1", "v6>r2", "v7>r3", "v8>r4"}
    assert expected <= moves(state)
    # any one of them may go first, whatever lies beside it (v9 has no place yet)
    for move in expected:
        state.push(Move(*move.split(">")))
        state.pop()
    assert not any(m.startswith("v9") for m in moves(state))


@pytest.mark.parametrize("seed", SEEDS)
def test_four_reserve_piles_with_one_face_up_card_each(seed: int) -> None:
    """"4 reserve piles ("Hilfsstapel") below the foundations, one face-up card each.\""""
    piles = Faecher.deal(seed).piles()
    assert [len(piles[name]) for name in RESERVES] == [1] * 4
    assert all(up for name in RESERVES for _, up in piles[name])


@pytest.mark.parametrize("seed", SEEDS)
def test_the_remaining_35_cards_are_the_talon_face_down(seed: int) -> None:
    """"The remaining 35 cards are the talon, face down.\""""
    state = Faecher.deal(seed)
    piles = state.piles()
    assert len(piles["s"]) == 35 and not piles["w"]
    assert not any(up for _, up in piles["s"])
    assert state.view()["piles"]["s"] == [None] * 35
    assert sum(len(cards) for cards in piles.values()) == 52


# -- Play ---------------------------------------------------------------------------------


def test_foundations_build_up_in_suit_from_2_to_ace() -> None:
    """"Foundations build up in suit from 2 to Ace. Won when all four Aces are on top.\""""
    state = fan_position(fan=["3S", "3H", "4S"])
    assert "goes only on the ♠ foundation" in reason(state, Move("v1", "fh"))
    assert "3♠ comes next" in reason(state, Move("v3", "f"))
    state.push(Move("v1", "fs"))
    state.push(Move("v3", "f"))
    state.push(Move("v2", "f"))
    assert [c.text for c, _ in state.piles()["fs"]] == ["2S", "3S", "4S"]
    assert [c.text for c, _ in state.piles()["fh"]] == ["2H", "3H"]


def test_cards_never_leave_the_foundations() -> None:
    """"Foundations build up in suit from 2 to Ace.\" (a foundation is only built on)"""
    state = fan_position(found=["5S"], reserves=[[]])
    assert "never leave the foundations" in reason(state, Move("fs", "r1"))


def test_won_when_all_four_aces_are_on_top() -> None:
    """"Foundations build up in suit from 2 to Ace. Won when all four Aces are on top.\""""
    state = fan_position(found=["KS", "AH", "AD", "AC"], fan=["AS"])
    assert not state.is_won() and state.outcome() is None
    state.push(Move("v1", "f"))
    assert state.is_won()
    assert state.outcome() == Outcome.WON
    assert [cards[-1][0].text for name, cards in state.piles().items() if name in FOUNDATIONS.values()] == [
        "AS", "AH", "AD", "AC"]


def test_reserve_piles_build_down_in_suit_so_a_king_may_go_on_an_ace() -> None:
    """"Reserve piles build down in suit (so a King may go on an Ace).\""""
    state = fan_position(fan=["QS", "QH", "JS", "KH", "AS"], reserves=[["KS"], ["AH"], ["5C"], ["7C"]])
    assert Move("v1", "r1") in state.legal_moves()
    assert "build in suit" in reason(state, Move("v2", "r1"))
    assert "down by one rank" in reason(state, Move("v3", "r1"))
    assert Move("v4", "r2") in state.legal_moves()  # K♥ on A♥
    assert "down by one rank" in reason(state, Move("v5", "r1"))  # never up
    state.push(Move("v4", "r2"))
    assert [c.text for c, _ in state.piles()["r2"]] == ["AH", "KH"]
    with pytest.raises(BadInputError, match="build down in suit"):
        fan_position(reserves=[["KS", "JS"]])


def test_only_a_reserve_piles_top_card_moves_to_a_foundation_or_another_reserve() -> None:
    """"Only a pile's top card moves (to a foundation or onto another reserve pile)\""""
    state = fan_position(found=["10H"], reserves=[["KH", "QH", "JH"], ["AH"], ["KS"], ["5C"]],
                         fan=["QS"])
    assert {str(m) for m in state.legal_moves() if m.src == "r1"} == {"r1>f", "r1>f:3"}
    state.push(Move("r1", "f"))
    assert top(state, "r1") == "QH" and top(state, "fh") == "JH"
    assert "only a reserve pile's top card" in reason(state, Move("r1", "r2", 2))
    assert "never go back to the fan" in reason(state, Move("r1", "v2"))
    assert "talon or the waste" in reason(state, Move("r1", "w"))
    # K♥ under Q♥ cannot move on its own, though the A♥ would take it
    assert Move("r1", "r2") not in state.legal_moves()
    assert "Q♥ cannot go on A♥" in reason(state, Move("r1", "r2"))
    state.push(Move("r1", "f"))
    state.push(Move("r1", "f"))
    assert state.piles()["r1"] == []


def test_a_pile_whose_run_fits_a_foundation_goes_there_in_one_action() -> None:
    """"a pile whose cards form a run that fits a foundation may be sent there in one action.\""""
    state = fan_position(found=["4S"], reserves=[["8S", "7S", "6S", "5S"], ["9D", "8D"]])
    whole = Move("r1", "f", 4)
    assert whole in state.legal_moves()
    assert state.parse_move("r1>f:4") == whole
    assert state.parse_move("r1") == whole  # a pile named alone goes whole when it can
    assert state.parse_move("r1>f") == Move("r1", "f")  # r1>f is the top card
    before = state.position()
    events = state.push(whole)
    assert [e.card.text for e in events if e.card is not None] == ["5S", "6S", "7S", "8S"]
    assert top(state, "fs") == "8S" and state.piles()["r1"] == []
    state.pop()
    assert state.position() == before
    assert "whole (4 cards) or by its top card" in reason(state, Move("r1", "f", 2))
    assert "8♦ cannot go on the foundation" in reason(state, Move("r2", "f", 2))  # the run must fit
    assert Move("r2", "f", 2) not in state.legal_moves()


def test_an_empty_reserve_pile_takes_any_card_from_the_waste_the_fan_or_another_reserve_top() -> None:
    """"An empty reserve pile takes any card from the talon's waste, the fan, or the top of
    another reserve pile.\""""
    state = fan_position(fan=["9H"], reserves=[["KS", "QS"], ["7D"], ["5C"], []], waste=["JD"])
    assert {"v1>r4", "w>r4", "r1>r4", "r2>r4", "r3>r4"} <= moves(state)
    assert "turned onto the waste first" in reason(state, Move("s", "r4"))
    state.push(Move("r1", "r4"))
    assert top(state, "r4") == "QS" and top(state, "r1") == "KS"


def test_a_reserve_top_sent_to_an_empty_pile_can_free_a_pile() -> None:
    """"An empty reserve pile takes any card from ... the top of another reserve pile.\"

    Splitting a pile this way lets its lower card join another pile: K♥ Q♥ beside A♥ and an
    empty pile become one pile A♥ K♥ Q♥ and two empty ones."""
    state = fan_position(reserves=[["KH", "QH"], ["AH"], [], ["3C"]])
    for move in (Move("r1", "r3"), Move("r1", "r2"), Move("r3", "r2")):
        state.push(move)
    assert [c.text for c, _ in state.piles()["r2"]] == ["AH", "KH", "QH"]
    assert state.piles()["r1"] == [] and state.piles()["r3"] == []


def test_fan_cards_go_to_a_foundation_or_a_reserve_pile_never_back_to_the_fan() -> None:
    """"Fan cards go to a foundation or a reserve pile, never back to the fan; a used fan place
    is not refilled.\""""
    state = fan_position(fan=["3S", "9H", "", "QD"], reserves=[["10H"], ["KD"], ["5C"], ["7C"]], waste=["4S"])
    assert {str(m) for m in state.legal_moves() if m.src.startswith("v")} == {"v1>f", "v2>r1", "v4>r2"}
    assert "never go back to the fan" in reason(state, Move("v2", "v3"))  # not even to a used place
    assert "never go back to the fan" in reason(state, Move("w", "v3"))
    assert "never go back to the fan" in reason(state, Move("r1", "v3"))
    assert "talon or the waste" in reason(state, Move("v2", "w"))


def test_a_used_fan_place_is_not_refilled() -> None:
    """"Fan cards go to a foundation or a reserve pile, never back to the fan; a used fan place
    is not refilled.\""""
    state = fan_position(fan=["3S", "9H"], stock=["6S", "5S", "4S"])
    state.push(Move("v1", "f"))
    assert state.piles()["v1"] == []
    for move in (DRAW, Move("w", "f"), DRAW, Move("w", "f")):
        state.push(move)
        assert state.piles()["v1"] == []
    assert "not refilled" in reason(state, Move("v1", "f"))
    assert state.view()["piles"]["v1"] == []


def test_the_talon_is_turned_one_card_at_a_time_onto_the_waste() -> None:
    """"Talon: turned one card at a time onto a waste; the waste's top card may go to a
    foundation or a reserve pile.\""""
    state = fan_position(stock=["9D", "KC", "3S"], reserves=[["10D"], ["5C"], ["7C"], ["9S"]])
    assert [str(m) for m in state.legal_moves()] == ["draw"]
    before = len(state.piles()["s"])
    state.push(DRAW)
    assert len(state.piles()["s"]) == before - 1
    assert [(c.text, up) for c, up in state.piles()["w"]] == [("3S", True)]
    assert moves(state) == {"w>f", "draw"}
    state.push(Move("w", "f"))
    state.push(DRAW)
    assert top(state, "w") == "KC"
    assert moves(state) == {"draw"}  # the K♣ fits nowhere
    state.push(DRAW)
    assert moves(state) >= {"w>r1"}
    assert "never go back to the fan" in reason(state, Move("w", "v1"))
    assert "cards move one at a time" in reason(state, Move("w", "r1", 2))


def test_the_talon_may_be_gone_through_twice_in_all_one_redeal() -> None:
    """"The talon may be gone through twice in all (one redeal).\""""
    state = Faecher.deal(5)
    first_pass = []
    while state.piles()["s"]:
        state.push(DRAW)
        first_pass.append(top(state, "w"))
    assert len(first_pass) == 35
    assert "redeal to turn the waste over" in reason(state, DRAW)
    assert REDEAL in state.legal_moves()
    state.push(REDEAL)
    assert state.counters() == {"passes": 2}
    assert not state.piles()["w"]
    second_pass = []
    while state.piles()["s"]:
        state.push(DRAW)
        second_pass.append(top(state, "w"))
    assert second_pass == first_pass  # the same order again
    assert REDEAL not in state.legal_moves() and DRAW not in state.legal_moves()
    assert reason(state, REDEAL) == "the stock may be gone through 2 times only"
    assert reason(state, DRAW) == "the stock is empty"


def test_over_when_solved() -> None:
    """"Over when solved, the time runs out, or no move is left.\""""
    clock = ManualClock()
    session = session_at(fan_position(found=["KS", "AH", "AD", "AC"], fan=["AS"]), clock)
    clock.advance(10)
    session.play("v1>f")
    assert session.outcome == Outcome.WON and session.is_over


def test_over_when_the_time_runs_out() -> None:
    """"Over when solved, the time runs out, or no move is left.\""""
    clock = ManualClock()
    session = Session("faecher", seed=3, clock=clock)
    clock.advance(599.999)
    session.tick()
    assert session.outcome is None
    clock.advance(0.001)
    session.tick()
    assert session.outcome == Outcome.TIME_OUT and session.end_ms == 600_000


def no_move_position(passes: int) -> Faecher:
    """All 2s on the foundations, the 4s alone in the reserves, the 3s buried in the waste
    under the K♣, an empty talon."""
    return fan_position(reserves=[["4S"], ["4H"], ["4D"], ["4C"]], rest="w", passes=passes)


def test_over_when_no_move_is_left() -> None:
    """"Over when solved, the time runs out, or no move is left.\""""
    state = no_move_position(passes=2)
    assert top(state, "w") == "KC"
    assert state.legal_moves() == [] and state.useful_moves() == []
    assert state.outcome() == Outcome.NO_MOVES
    # with the redeal still to come the game goes on
    assert no_move_position(passes=1).outcome() is None


def test_a_game_that_runs_out_of_moves_ends_in_the_session() -> None:
    """"Over when solved, the time runs out, or no move is left.\""""
    state = fan_position(reserves=[["4S"], ["4H"], ["4D"], ["4C"]], waste=["KC"], stock=["QC"], rest="w",
                         passes=2)
    clock = ManualClock()
    session = session_at(state, clock)
    clock.advance(60)
    session.play("draw")  # the Q♣ fits nowhere either, and the talon is through twice
    assert session.outcome == Outcome.NO_MOVES
    assert session.end_ms == 60_000
    assert session.ledger[-1].kind == "pool" and session.ledger[-1].points == 1350


def test_a_reserve_top_to_an_empty_reserve_is_no_move_left() -> None:
    """"Over when ... no move is left.\"

    ``useful_moves`` leaves out a reserve pile's top card going to an empty reserve pile: it
    can go back and forth forever, so it must not keep a lost game going. Leaving it out never
    ends a game early either: while a reserve pile is empty, a fan card, the waste's top or a
    draw can go there, and once fan, waste and talon are all empty every card left lies in a
    reserve pile built down in suit, so each suit's next card is a pile's top and can go to its
    foundation. :func:`test_no_move_left_means_no_legal_move_at_all` checks this on many games."""
    state = fan_position(found=["5S"], reserves=[["KH"], [], ["10S"], ["3C"]])
    assert Move("r1", "r2") in state.legal_moves()
    assert not any(m.src in RESERVES and m.dst == "r2" for m in state.useful_moves())
    before = state.key()
    state.push(Move("r1", "r2"))
    state.push(Move("r2", "r1"))
    assert state.key() == before  # the same position again: a loop, not progress
    assert Move("r1", "r2") not in state.useful_moves()
    assert DRAW in state.useful_moves()  # here the talon is still to play


def test_no_move_left_means_no_legal_move_at_all() -> None:
    """"Over when ... no move is left.\" Random games: ``useful_moves`` is empty exactly when
    ``legal_moves`` is, so the reserve shuffles it leaves out never decide the outcome."""
    rng = random.Random(2024)
    shuffles_seen = 0
    ends = 0
    for seed in range(40):
        state = Faecher.deal(seed)
        for _ in range(400):
            legal = state.legal_moves()
            useful = state.useful_moves()
            assert bool(useful) == bool(legal), str(state)
            shuffles_seen += len(legal) - len(useful)
            if not legal:
                ends += 1
                break
            # prefer foundation moves so that games get far
            to_f = [m for m in legal if m.dst == "f"]
            state.push(rng.choice(to_f or legal))
    assert shuffles_seen > 0 and ends > 0


# -- Score --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "pool"),
    [(0, 1500), (0.001, 1499), (60, 1350), (150, 1125), (300, 750), (450, 375), (599, 2), (599.999, 0)],
)
def test_start_a_pool_of_1500_drains_linearly_to_0_over_the_time_limit(seconds: float, pool: int) -> None:
    """"start | a pool of 1500 that drains over the game (**Decision**: linearly to 0 over the
    time limit, default 10 minutes); what is left at the end is added\""""
    clock = ManualClock()
    session = Session("faecher", seed=3, clock=clock)
    clock.advance(seconds)
    assert session.pool_left() == pool
    assert session.score == 0  # the pool is not in the score before the end
    session.give_up()
    assert session.score == pool
    assert session.ledger[-1].kind == "pool" and session.ledger[-1].t_ms == round(seconds * 1000)


def test_what_is_left_of_the_pool_at_the_end_is_added() -> None:
    """"start | a pool of 1500 ...; what is left at the end is added\" (given up at 150 s: 1125)"""
    clock = ManualClock()
    session = Session("faecher", seed=3, clock=clock)
    clock.advance(150)
    session.give_up()
    assert session.outcome == Outcome.GIVEN_UP
    assert session.score == 1125
    assert [(e.kind, e.points, e.t_ms) for e in session.ledger] == [("pool", 1125, 150_000)]
    clock.advance(100)
    assert session.pool_left() == 1125 and session.score == 1125  # frozen at the end


def test_the_pool_is_empty_when_the_time_runs_out() -> None:
    """"start | a pool of 1500 that drains ... linearly to 0 over the time limit\""""
    clock = ManualClock()
    session = Session("faecher", seed=3, clock=clock)
    clock.advance(3600)
    session.tick()
    assert session.outcome == Outcome.TIME_OUT
    assert session.pool_left() == 0 and session.score == 0
    assert session.ledger[-1].t_ms == 600_000


def test_a_card_onto_a_foundation_gives_150() -> None:
    """"a card onto a foundation | +150\" (from the fan and from the waste)"""
    session = session_at(fan_position(fan=["3S", "9D"], stock=["4S"]))
    session.play("v1>f")
    session.play("draw")
    session.play("w>f")
    assert [(e.kind, e.points) for e in session.ledger] == [("foundation", 150), ("foundation", 150)]
    assert session.score == 300


def test_a_card_from_a_reserve_pile_onto_a_foundation_gives_75() -> None:
    """"a card onto a foundation | +150 (**Decision**: a card coming from a reserve pile gives
    +75 instead)\""""
    session = session_at(fan_position(reserves=[["3S"], ["5H", "4H", "3H"]], fan=["9D"]))
    session.play("r1>f")
    assert session.score == 75
    session.play("r2>f:3")  # the whole pile: +75 for every card
    assert [(e.kind, e.points) for e in session.ledger] == [("foundation", 75)] * 4
    assert session.score == 300
    assert [e.reason for e in session.ledger[1:]] == [
        f"{card} onto a foundation from a reserve pile" for card in ("3♥", "4♥", "5♥")]


def test_an_attempted_illegal_move_costs_50() -> None:
    """"an attempted illegal move ("wrong click") | −50\""""
    clock = ManualClock()
    session = Session("faecher", seed=3, clock=clock)
    before = session.state.position()
    clock.advance(7)
    with pytest.raises(IllegalMoveError) as error:
        session.play("v1>v2")
    assert error.value.reason == "cards never go back to the fan"
    assert session.state.position() == before
    assert session.moves_made == 0
    assert [(e.kind, e.points, e.t_ms) for e in session.ledger] == [("illegal", -50, 7000)]
    assert "cards never go back to the fan" in session.ledger[0].reason
    assert session.score == -50
    with pytest.raises(IllegalMoveError):
        session.play(Move("r1", "f", 3))  # a Move given as data is charged the same way
    assert session.score == -100
    assert [entry.to_dict() for entry in session.log] == [
        {"m": "v1>v2", "t": 7000, "illegal": True}, {"m": "r1>f:3", "t": 7000, "illegal": True}]


@pytest.mark.parametrize("text", ["xyz", "v3>r9", "v1>f:0", "7Q>f"])
def test_malformed_move_text_costs_nothing(text: str) -> None:
    """"an attempted illegal move ("wrong click") | −50\" — text that names no move is no click."""
    session = Session("faecher", seed=3, clock=ManualClock())
    with pytest.raises(BadInputError):
        session.play(text)
    assert session.ledger == [] and session.log == [] and session.score == 0


def test_the_fan_emptied_gives_300() -> None:
    """"the fan emptied | +300\""""
    session = session_at(fan_position(fan=["3S", "", "9D"], reserves=[["10D"]]))
    session.play("v1>f")
    assert [e.kind for e in session.ledger] == ["foundation"]
    session.play("v3>r1")  # the last fan card: to a reserve pile counts too
    assert [(e.kind, e.points, e.reason) for e in session.ledger[1:]] == [
        ("fan_emptied", 300, "the fan emptied")]
    assert session.score == 450


def test_game_solved_gives_500() -> None:
    """"game solved | +500\" (with the foundation, the fan and what is left of the pool)"""
    clock = ManualClock()
    session = session_at(fan_position(found=["KS", "AH", "AD", "AC"], fan=["AS"]), clock)
    clock.advance(150)
    session.play("v1>f")
    assert session.outcome == Outcome.WON
    assert [(e.kind, e.points) for e in session.ledger] == [
        ("foundation", 150), ("fan_emptied", 300), ("solved", 500), ("pool", 1125)]
    assert session.score == 150 + 300 + 500 + 1125


# -- Decisions are options ------------------------------------------------------------------


def test_every_decision_is_a_documented_option_with_its_default() -> None:
    """"Where a source is vague or silent, the decision taken here is marked **Decision** and
    must also be a documented, configurable option of the game, with the default given here.\""""
    defaults = {name: default for name, default, _ in describe_options(FaecherOptions)}
    assert defaults["time_limit"] == 600
    assert defaults["pool"] == 1500
    assert defaults["pool_drain"] == "linear"
    assert defaults["from_reserve_points"] == 75
    assert defaults["passes"] == 2
    assert defaults["undo_limit"] == 0
    assert all(doc for _, _, doc in describe_options(FaecherOptions))
    opts = parse_options(FaecherOptions, ["pool_drain=none", "from_reserve_points=150", "time_limit=300",
                                          "passes=1", "undo_limit=2"])
    assert (opts.pool_drain, opts.from_reserve_points, opts.time_limit, opts.passes, opts.undo_limit) == (
        "none", 150, 300, 1, 2)
    with pytest.raises(BadInputError):
        parse_options(FaecherOptions, ["pool_drain=quadratic"])


def test_option_pool_drain_none_keeps_the_whole_pool() -> None:
    """Decision as option: ``pool_drain=none`` (the pool does not drain)."""
    clock = ManualClock()
    session = Session("faecher", seed=3, options={"pool_drain": "none"}, clock=clock)
    clock.advance(150)
    assert session.pool_left() == 1500
    session.give_up()
    assert session.score == 1500


def test_option_time_limit_sets_how_fast_the_pool_drains_and_when_time_runs_out() -> None:
    """Decision as option: ``time_limit`` (default 600 s)."""
    clock = ManualClock()
    session = Session("faecher", seed=3, options={"time_limit": 300}, clock=clock)
    clock.advance(150)
    assert session.pool_left() == 750
    clock.advance(150)
    session.tick()
    assert session.outcome == Outcome.TIME_OUT and session.end_ms == 300_000 and session.score == 0


def test_option_from_reserve_points() -> None:
    """Decision as option: ``from_reserve_points`` (default 75)."""
    session = session_at(fan_position(reserves=[["4S", "3S"]], options={"from_reserve_points": 150}))
    session.play("r1>f:2")
    assert session.score == 300


def test_option_passes_1_allows_no_redeal() -> None:
    """Option ``passes`` (default 2: one redeal): with 1 the talon is gone through once."""
    state = Faecher.deal(5, {"passes": 1})
    while state.piles()["s"]:
        state.push(DRAW)
    assert REDEAL not in state.legal_moves()
    assert reason(state, REDEAL) == "the stock may be gone through 1 time only"


def test_undo_is_refused_by_default() -> None:
    """Option ``undo_limit`` (default 0: the source game has no undo)."""
    session = Session("faecher", seed=3, clock=ManualClock())
    session.play("draw")
    assert session.undos_left() == 0
    assert session.undo_reason() == "this game has no undo"
    with pytest.raises(IllegalMoveError, match="this game has no undo"):
        session.undo()
    assert session.state.ply == 1 and session.ledger == []


def test_option_undo_limit_enables_undo() -> None:
    """Option ``undo_limit`` > 0: up to that many moves back, the undone move's points taken back."""
    session = session_at(fan_position(fan=["3S", "4S", "5S"], options={"undo_limit": 2}))
    for move in ("v1>f", "v2>f", "v3>f"):
        session.play(move)
    assert session.score == 150 * 3 + 300
    assert session.undo() == Move("v3", "f")
    assert session.undo() == Move("v2", "f")
    assert session.score == 150
    assert [(e.kind, e.points) for e in session.ledger[4:]] == [("take_back", -450), ("take_back", -150)]
    assert session.undos_left() == 0
    assert session.undo_reason() == "at most 2 moves back: make a move first"
    with pytest.raises(IllegalMoveError, match="at most 2 moves back"):
        session.undo()
    session.play("v2>f")  # each new move makes one more undo possible
    assert session.undos_left() == 1


def test_option_illegal_points() -> None:
    """Option ``illegal_points`` (default −50), like every line of the score table."""
    session = Session("faecher", seed=3, options={"illegal_points": 0}, clock=ManualClock())
    with pytest.raises(IllegalMoveError):
        session.play("v1>v2")
    assert session.ledger == [] and session.log == []

