"""Move text as people type it: a source alone, a card for its place, and the canonical form."""

from __future__ import annotations

import pytest

from patience.cards import CARDS
from patience.errors import BadInputError
from patience.games import Faecher, Move, Reloaded, get_game


def test_a_source_alone_goes_to_its_foundation_or_its_one_legal_move() -> None:
    carpet = get_game("teppich").deal(1)
    move = carpet.legal_moves()[0]
    number = move.src[1:]
    card = carpet.piles()[move.src][0][0]
    assert carpet.parse_move(number) == carpet.parse_move(move.src) == carpet.parse_move(card.text) == move
    # nothing legal from there: the foundation move, so that the refusal says why
    stuck = next(name for name, cards in carpet.piles().items()
                 if name.startswith("c") and Move(name, "f") not in carpet.legal_moves())
    assert carpet.parse_move(stuck) == Move(stuck, "f")
    assert "comes next" in (carpet.check(Move(stuck, "f")) or "")


def test_a_source_alone_with_several_targets_asks_where() -> None:
    # J♠ in v1 fits neither its foundation (at 2♠) nor a reserve top (Q♦ is not its suit): only
    # the two empty reserve piles r1 and r2 take it
    piles: dict[str, list[str]] = {
        "fs": ["2S"], "fh": ["2H"], "fd": ["2D"], "fc": ["2C"],
        "v1": ["JS"], **{f"v{i}": [] for i in range(2, 10)},
        "r1": [], "r2": [], "r3": ["5C"], "r4": ["QD"], "w": [],
    }
    placed = {card for cards in piles.values() for card in cards}
    piles["s"] = [card.text.lower() for card in CARDS if card.text not in placed]
    state = Faecher.from_position({"game": "faecher", "piles": piles, "counters": {"passes": 1}})
    assert {m.dst for m in state.legal_moves() if m.src == "v1"} == {"r1", "r2"}
    with pytest.raises(BadInputError, match=r"'v1' can go to several places: say where, e\.g\. v1>r1 or v1>r2"):
        state.parse_move("v1")
    assert state.parse_move("v1>r2") == Move("v1", "r2")


def test_a_whole_reserve_pile_goes_to_the_foundation_by_its_name_alone() -> None:
    position = Faecher.deal(1).position()
    piles = position["piles"]
    # move 3♥ 4♥ aside into the talon, put a 4♥ 3♥ run on r1 (3♥ on top)
    for name in piles:
        piles[name] = [c for c in piles[name] if c.upper() not in ("3H", "4H")]
    piles["s"], piles["r1"] = [*piles["s"], *[c.lower() for c in piles["r1"]]], ["4H", "3H"]
    state = Faecher.from_position(position)
    assert state.parse_move("r1") == Move("r1", "f", 2)
    assert state.parse_move("r1>f") == Move("r1", "f", 1)
    assert state.parse_move("4H>f") == Move("r1", "f", 2)


def test_the_canonical_text_of_every_legal_move_reads_back_as_that_move() -> None:
    for cls in (Reloaded, Faecher, get_game("teppich")):
        for seed in range(30):
            state = cls.deal(seed)
            for _ in range(60):
                moves = state.legal_moves()
                if not moves:
                    break
                for move in moves:
                    assert state.parse_move(str(move)) == move
                state.push(moves[seed % len(moves)])
