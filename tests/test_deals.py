"""Golden deals: the exact shuffle and deal of a few seeds per game, pinned as position texts.

A deal is a promise: the same game, options and seed give the same cards on every machine
and Python version (RULES.md). Any change to the generator, the shuffle or the dealing order
breaks these tests on purpose: records replay by seed, so such a change would make every
stored record replay a different game.
"""

from __future__ import annotations

from typing import Any

import pytest

from patience.cards import CARDS
from patience.errors import BadInputError
from patience.games import get_game
from patience.notation import parse_position_text
from patience.rng import MAX_SEED, SplitMix64, check_seed, shuffled
from patience.session import ManualClock, Session

# (game, options, seed): the position text of the deal
GOLDEN: dict[tuple[str, tuple[str, ...], int], str] = {
    ("teppich", (), 0): (
        "teppich | fs:AS fh:AH fd:AD fc:AC c1:KD c2:4C c3:6D c4:JD c5:7H c6:2C c7:7S c8:6H c9:8S c10:QD "
        "c11:QH c12:5S c13:KH c14:7D c15:2H c16:4S c17:4D c18:QC c19:KS c20:3H "
        "s:2d,7c,2s,8c,6c,8h,9d,10c,8d,jc,3s,5c,10d,jh,9s,3c,js,10h,9c,3d,kc,4h,9h,qs,5h,5d,10s,6s"
    ),
    ("teppich", (), 1): (
        "teppich | fs:AS fh:AH fd:AD fc:AC c1:10D c2:2H c3:QH c4:10C c5:QD c6:5D c7:4H c8:7S c9:9D c10:8C"
        " c11:QC c12:3H c13:7H c14:5S c15:10H c16:KC c17:5H c18:6H c19:8H c20:3C "
        "s:3s,7d,js,8d,8s,ks,9c,6s,3d,qs,5c,2s,6c,kh,6d,7c,9h,jc,9s,jh,4c,10s,4d,kd,2c,4s,jd,2d"
    ),
    ("teppich", (), 2026): (
        "teppich | fs:AS fh:AH fd:AD fc:AC c1:3S c2:6C c3:6D c4:QC c5:7S c6:JD c7:3C c8:7D c9:7C c10:6H "
        "c11:5C c12:KC c13:7H c14:5S c15:10S c16:8D c17:10C c18:QH c19:10H c20:QS "
        "s:9c,2c,4c,ks,6s,5h,4d,9d,2h,2s,5d,kh,js,3h,4h,3d,4s,8c,jc,9h,jh,2d,8h,kd,10d,8s,9s,qd"
    ),
    ("teppich", ("rows=5", "cols=6"), 0): (
        "teppich rows=5 cols=6 | fs:AS fh:AH fd:AD fc:AC c1:KD c2:4C c3:6D c4:JD c5:7H c6:2C c7:7S c8:6H "
        "c9:8S c10:QD c11:QH c12:5S c13:KH c14:7D c15:2H c16:4S c17:4D c18:QC c19:KS c20:3H c21:6S "
        "c22:10S c23:5D c24:5H c25:QS c26:9H c27:4H c28:KC c29:3D c30:9C "
        "s:2d,7c,2s,8c,6c,8h,9d,10c,8d,jc,3s,5c,10d,jh,9s,3c,js,10h"
    ),
    ("teppich", ("rows=5", "cols=6"), 1): (
        "teppich rows=5 cols=6 | fs:AS fh:AH fd:AD fc:AC c1:10D c2:2H c3:QH c4:10C c5:QD c6:5D c7:4H "
        "c8:7S c9:9D c10:8C c11:QC c12:3H c13:7H c14:5S c15:10H c16:KC c17:5H c18:6H c19:8H c20:3C c21:2D"
        " c22:JD c23:4S c24:2C c25:KD c26:4D c27:10S c28:4C c29:JH c30:9S "
        "s:3s,7d,js,8d,8s,ks,9c,6s,3d,qs,5c,2s,6c,kh,6d,7c,9h,jc"
    ),
    ("teppich", ("rows=5", "cols=6"), 2026): (
        "teppich rows=5 cols=6 | fs:AS fh:AH fd:AD fc:AC c1:3S c2:6C c3:6D c4:QC c5:7S c6:JD c7:3C c8:7D "
        "c9:7C c10:6H c11:5C c12:KC c13:7H c14:5S c15:10S c16:8D c17:10C c18:QH c19:10H c20:QS c21:QD "
        "c22:9S c23:8S c24:10D c25:KD c26:8H c27:2D c28:JH c29:9H c30:JC "
        "s:9c,2c,4c,ks,6s,5h,4d,9d,2h,2s,5d,kh,js,3h,4h,3d,4s,8c"
    ),
    ("teppich", ("waste=yes",), 0): (
        "teppich waste=yes | fs:- fh:- fd:- fc:- c1:10C c2:KD c3:7C c4:6S c5:3D c6:9H c7:2S c8:7S c9:10H "
        "c10:AH c11:9C c12:4D c13:2H c14:AS c15:3S c16:4S c17:8C c18:5H c19:5D c20:5C s:ks,6c,8h,5s,7d,3c"
        ",6d,kc,js,ac,7h,qc,jc,9s,jh,6h,8d,2d,qh,qs,2c,10d,kh,3h,qd,9d,4h,4c,10s,jd,ad,8s w:- passes=1"
    ),
    ("teppich", ("waste=yes",), 1): (
        "teppich waste=yes | fs:- fh:- fd:- fc:- c1:9H c2:4D c3:2C c4:9S c5:6D c6:AC c7:KH c8:10S c9:5C "
        "c10:9C c11:AH c12:5H c13:3H c14:10D c15:QC c16:10H c17:QH c18:7H c19:7D c20:5D s:jc,5s,4s,8h,js,"
        "6h,8c,3c,qd,6c,6s,ks,3d,jh,10c,kd,8s,7s,jd,2d,7c,2s,ad,qs,as,3s,8d,2h,4h,kc,9d,4c w:- passes=1"
    ),
    ("teppich", ("waste=yes",), 2026): (
        "teppich waste=yes | fs:- fh:- fd:- fc:- c1:KC c2:3C c3:6S c4:5H c5:3S c6:AS c7:7D c8:5C c9:9S "
        "c10:7C c11:2C c12:3H c13:QD c14:JS c15:2D c16:10C c17:9D c18:KD c19:AH c20:7H s:6d,10h,8h,jc,ks,"
        "8d,7s,jh,9c,kh,9h,3d,4d,4s,qh,8c,ad,qc,5s,10d,2s,ac,4h,qs,2h,6c,8s,4c,6h,10s,5d,jd w:- passes=1"
    ),
    ("teppich", ("rows=5", "cols=6", "waste=yes"), 0): (
        "teppich rows=5 cols=6 waste=yes | fs:- fh:- fd:- fc:- c1:10C c2:KD c3:7C c4:6S c5:3D c6:9H c7:2S"
        " c8:7S c9:10H c10:AH c11:9C c12:4D c13:2H c14:AS c15:3S c16:4S c17:8C c18:5H c19:5D c20:5C "
        "c21:8S c22:AD c23:JD c24:10S c25:4C c26:4H c27:9D c28:QD c29:3H c30:KH "
        "s:ks,6c,8h,5s,7d,3c,6d,kc,js,ac,7h,qc,jc,9s,jh,6h,8d,2d,qh,qs,2c,10d w:- passes=1"
    ),
    ("teppich", ("rows=5", "cols=6", "waste=yes"), 1): (
        "teppich rows=5 cols=6 waste=yes | fs:- fh:- fd:- fc:- c1:9H c2:4D c3:2C c4:9S c5:6D c6:AC c7:KH "
        "c8:10S c9:5C c10:9C c11:AH c12:5H c13:3H c14:10D c15:QC c16:10H c17:QH c18:7H c19:7D c20:5D "
        "c21:4C c22:9D c23:KC c24:4H c25:2H c26:8D c27:3S c28:AS c29:QS c30:AD "
        "s:jc,5s,4s,8h,js,6h,8c,3c,qd,6c,6s,ks,3d,jh,10c,kd,8s,7s,jd,2d,7c,2s w:- passes=1"
    ),
    ("teppich", ("rows=5", "cols=6", "waste=yes"), 2026): (
        "teppich rows=5 cols=6 waste=yes | fs:- fh:- fd:- fc:- c1:KC c2:3C c3:6S c4:5H c5:3S c6:AS c7:7D "
        "c8:5C c9:9S c10:7C c11:2C c12:3H c13:QD c14:JS c15:2D c16:10C c17:9D c18:KD c19:AH c20:7H c21:JD"
        " c22:5D c23:10S c24:6H c25:4C c26:8S c27:6C c28:2H c29:QS c30:4H "
        "s:6d,10h,8h,jc,ks,8d,7s,jh,9c,kh,9h,3d,4d,4s,qh,8c,ad,qc,5s,10d,2s,ac w:- passes=1"
    ),
    ("reloaded", (), 0): (
        "reloaded | fs:- fh:- fd:- fc:- t1:8D t2:5d,8S t3:8h,js,KS t4:4d,9s,jc,AH t5:6s,10c,jd,10s,2S "
        "t6:9h,3c,3s,3h,9c,2D t7:8c,6d,5h,kc,4h,ac,AS "
        "s:kd,2c,kh,ad,qd,jh,9d,10d,7c,4c,5c,qs,qh,6h,4s,6c,5s,10h,2h,7d,7h,3d,7s,qc w:- passes=1"
    ),
    ("reloaded", (), 1): (
        "reloaded | fs:- fh:- fd:- fc:- t1:5C t2:as,6D t3:4d,jh,4H t4:10h,8d,kc,6S t5:8c,3s,2c,qs,10D "
        "t6:qh,2d,3d,ks,js,3C t7:kh,7s,9h,7d,qd,9d,8S "
        "s:ac,jd,kd,8h,4c,9c,2h,9s,7c,6h,ad,qc,10c,7h,10s,2s,5h,jc,6c,5d,5s,ah,3h,4s w:- passes=1"
    ),
    ("reloaded", (), 2026): (
        "reloaded | fs:- fh:- fd:- fc:- t1:QD t2:2c,9D t3:3s,8c,5C t4:5s,4s,qc,7S t5:jc,kd,2d,qh,3C "
        "t6:js,jd,ac,4d,9c,JH t7:5h,7h,10c,4h,10h,8d,2S "
        "s:6d,9h,6h,6s,3d,ah,2h,8s,3h,10d,10s,kh,ad,ks,7c,8h,6c,5d,7d,9s,as,qs,kc,4c w:- passes=1"
    ),
    ("faecher", (), 0): (
        "faecher | fs:2S fh:2H fd:2D fc:2C v1:3D v2:10H v3:5D v4:5H v5:7D v6:9C v7:5S v8:QC v9:KD r1:4D "
        "r2:4C r3:QS r4:JH s:kh,6s,8h,ac,as,9h,3s,qd,ah,6h,4s,6d,7h,4h,3c,qh,jc,js,ad,9s,8c,ks,8d,5c,3h,7"
        "c,6c,8s,kc,jd,9d,10c,10s,10d,7s w:- passes=1"
    ),
    ("faecher", (), 1): (
        "faecher | fs:2S fh:2H fd:2D fc:2C v1:10D v2:AD v3:8D v4:8S v5:10H v6:4S v7:5S v8:AC v9:4C r1:JS "
        "r2:7H r3:3D r4:6S s:6d,7d,qd,3s,4h,kd,10s,as,5d,qh,kh,ah,jc,jd,3c,7s,5h,6c,qs,9s,8c,9h,6h,jh,8h,"
        "3h,10c,9c,ks,4d,9d,kc,5c,qc,7c w:- passes=1"
    ),
    ("faecher", (), 2026): (
        "faecher | fs:2S fh:2H fd:2D fc:2C v1:3S v2:AS v3:4H v4:3H v5:5S v6:JD v7:6H v8:7D v9:7H r1:9S "
        "r2:QH r3:10D r4:KS s:js,4s,3c,4d,5c,4c,ad,8h,8s,5h,qc,9h,9d,5d,kd,6c,10h,6d,6s,qd,7s,8d,jh,10c,k"
        "h,ah,qs,kc,jc,10s,3d,7c,9c,8c,ac w:- passes=1"
    ),
}


def _golden_id(value: object) -> str:
    return " ".join(value) if isinstance(value, tuple) else str(value)


@pytest.mark.parametrize(("game", "options", "seed"), list(GOLDEN), ids=_golden_id)
def test_deal_is_pinned(game: str, options: tuple[str, ...], seed: int) -> None:
    state = get_game(game).deal(seed, list(options))
    assert str(state) == GOLDEN[game, options, seed]


@pytest.mark.parametrize(("game", "options", "seed"), list(GOLDEN))
def test_pinned_text_reads_back_as_the_deal(game: str, options: tuple[str, ...], seed: int) -> None:
    cls = get_game(game)
    text = GOLDEN[game, options, seed]
    assert cls.from_position(parse_position_text(text)).key() == cls.deal(seed, list(options)).key()


# -- the generator and the shuffle -----------------------------------------------------------


def test_splitmix64_matches_the_published_reference() -> None:
    """Seed 0 gives the reference outputs of Vigna's splitmix64.c."""
    rng = SplitMix64(0)
    assert [rng.next64() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_splitmix64_first_outputs_are_pinned() -> None:
    rng = SplitMix64(1)
    assert [rng.next64() for _ in range(5)] == [
        0x910A2DEC89025CC1, 0xBEEB8DA1658EEC67, 0xF893A2EEFB32555E, 0x71C18690EE42C90B, 0x71BB54D8D101B5B9,
    ]
    rng = SplitMix64(0)
    assert [rng.next64() for _ in range(5)][3:] == [0xF88BB8A8724C81EC, 0x1B39896A51A8749B]


def test_below_stays_in_range_and_uses_the_generator() -> None:
    rng = SplitMix64(2026)
    values = [rng.below(7) for _ in range(2000)]
    assert set(values) == set(range(7))
    assert SplitMix64(5).below(1) == 0


@pytest.mark.parametrize(("seed", "numbers", "letters"), [
    (0, [6, 3, 2, 9, 8, 1, 4, 7, 0, 5], "cfadegbh"),
    (1, [4, 2, 8, 1, 9, 3, 0, 6, 7, 5], "edchfgab"),
    (2026, [5, 0, 9, 2, 4, 7, 3, 6, 8, 1], "hfaebgcd"),
    (MAX_SEED, [7, 1, 2, 5, 4, 6, 3, 8, 0, 9], "agbedcfh"),
])
def test_shuffled_is_pinned(seed: int, numbers: list[int], letters: str) -> None:
    items = list(range(10))
    assert shuffled(items, seed) == numbers
    assert items == list(range(10)), "the input list is left alone"
    assert "".join(shuffled(list("abcdefgh"), seed)) == letters
    assert shuffled([], seed) == [] and shuffled(["x"], seed) == ["x"]


def test_shuffle_is_a_permutation_that_depends_on_the_seed() -> None:
    decks = {tuple(shuffled(list(CARDS), seed)) for seed in range(50)}
    assert len(decks) == 50
    assert all(sorted(deck) == list(CARDS) for deck in decks)


# -- how each game deals the shuffled deck ---------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2026, 123456789, MAX_SEED])
@pytest.mark.parametrize(("rows", "cols"), [(4, 5), (5, 6)])
def test_carpet_deals_the_shuffled_deck_in_order(seed: int, rows: int, cols: int) -> None:
    """Aces out, the carpet row by row from the front, the stock's top the next card."""
    deck = shuffled([c for c in CARDS if c.rank != 1], seed, salt="teppich")
    piles = get_game("teppich").deal(seed, {"rows": rows, "cols": cols}).piles()
    cells = rows * cols
    assert [piles[f"c{i + 1}"][0][0] for i in range(cells)] == deck[:cells]
    assert [c for c, _ in reversed(piles["s"])] == deck[cells:]
    assert [[c.text for c, _ in piles[f]] for f in ("fs", "fh", "fd", "fc")] == [["AS"], ["AH"], ["AD"], ["AC"]]


@pytest.mark.parametrize("seed", [0, 1, 2026, MAX_SEED])
def test_carpet_waste_variant_deals_all_52(seed: int) -> None:
    deck = shuffled(list(CARDS), seed, salt="teppich")
    piles = get_game("teppich").deal(seed, {"waste": True}).piles()
    assert [piles[f"c{i + 1}"][0][0] for i in range(20)] == deck[:20]
    assert [c for c, _ in reversed(piles["s"])] == deck[20:]
    assert not piles["w"] and not any(piles[f] for f in ("fs", "fh", "fd", "fc"))


@pytest.mark.parametrize("seed", [0, 1, 2026, MAX_SEED])
def test_reloaded_deals_row_by_row(seed: int) -> None:
    deck = shuffled(list(CARDS), seed, salt="reloaded")
    piles = get_game("reloaded").deal(seed).piles()
    dealt = iter(deck)
    expected: list[list[Any]] = [[] for _ in range(7)]
    for row in range(7):
        for pile in range(row, 7):
            expected[pile].append(next(dealt))
    for i in range(7):
        assert [c for c, _ in piles[f"t{i + 1}"]] == expected[i]
        assert [up for _, up in piles[f"t{i + 1}"]] == [False] * i + [True]
    assert [c for c, _ in reversed(piles["s"])] == deck[28:]


@pytest.mark.parametrize("seed", [0, 1, 2026, MAX_SEED])
def test_faecher_deals_fan_reserves_talon(seed: int) -> None:
    deck = shuffled([c for c in CARDS if c.rank != 2], seed, salt="faecher")
    piles = get_game("faecher").deal(seed).piles()
    assert [piles[f"v{i}"][0][0] for i in range(1, 10)] == deck[:9]
    assert [[c for c, _ in piles[f"r{i}"]] for i in range(1, 5)] == [[c] for c in deck[9:13]]
    assert [c for c, _ in reversed(piles["s"])] == deck[13:]
    assert [[c.text for c, _ in piles[f]] for f in ("fs", "fh", "fd", "fc")] == [["2S"], ["2H"], ["2D"], ["2C"]]


# -- the same seed under other options -------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2026, 99991])
@pytest.mark.parametrize("waste", [False, True])
def test_larger_carpet_deals_the_same_deck_further(seed: int, waste: bool) -> None:
    """5 × 6 lays out the 4 × 5 carpet and then the next 10 cards of its stock."""
    small = get_game("teppich").deal(seed, {"waste": waste}).piles()
    large = get_game("teppich").deal(seed, {"waste": waste, "rows": 5, "cols": 6}).piles()
    small_stock = [c for c, _ in small["s"]]
    assert all(large[f"c{i}"] == small[f"c{i}"] for i in range(1, 21))
    assert [large[f"c{i}"][0][0] for i in range(21, 31)] == small_stock[::-1][:10]
    assert [c for c, _ in large["s"]] == small_stock[:-10]


@pytest.mark.parametrize(("game", "options"), [
    ("teppich", {"fill_from": "stock", "waste_passes": 3}),
    ("reloaded", {"time_limit": 60, "undo_limit": 0, "reveal_points": 0, "clamp": "end"}),
    ("faecher", {"passes": 3, "time_limit": 60, "pool": 0, "undo_limit": 2}),
])
@pytest.mark.parametrize("seed", [0, 1, 2026])
def test_options_that_are_not_about_the_layout_keep_the_deal(game: str, options: dict[str, Any], seed: int) -> None:
    cls = get_game(game)
    if game == "teppich":
        plain = cls.deal(seed, {"waste": True})
        options = {**options, "waste": True}
    else:
        plain = cls.deal(seed)
    assert cls.deal(seed, options).piles() == plain.piles()


def test_the_same_seed_deals_unrelated_games() -> None:
    """Each game salts the shuffle with its id: no game's deal mirrors another's."""
    teppich = [c for c, _ in get_game("teppich").deal(7).piles()["s"]]
    waste = [c for c, _ in get_game("teppich").deal(7, {"waste": True}).piles()["s"]]
    faecher = [c for c, _ in get_game("faecher").deal(7).piles()["s"]]
    reloaded = [c for c, _ in get_game("reloaded").deal(7).piles()["s"]]
    assert shuffled(list(CARDS), 7, salt="teppich") != shuffled(list(CARDS), 7, salt="reloaded")
    assert len({tuple(teppich[-10:]), tuple(waste[-10:]), tuple(faecher[-10:]), tuple(reloaded[-10:])}) == 4


def test_the_waste_variant_is_a_different_deal() -> None:
    base = get_game("teppich").deal(0)
    waste = get_game("teppich").deal(0, {"waste": True})
    assert base.piles()["c1"] != waste.piles()["c1"]


def test_a_session_plays_the_deal_of_its_seed() -> None:
    session = Session("teppich", 2026, {"rows": 5, "cols": 6}, clock=ManualClock())
    assert str(session.state) == GOLDEN["teppich", ("rows=5", "cols=6"), 2026]


# -- what a seed is -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2026, MAX_SEED, "7", " 42 "])
def test_good_seeds(seed: object) -> None:
    value = check_seed(seed)
    assert value == int(str(seed))
    assert str(get_game("faecher").deal(seed)) == str(get_game("faecher").deal(value))  # type: ignore[arg-type]


BAD_SEEDS = [-1, MAX_SEED + 1, 2**64, -(2**63), True, False, "abc", "", "1.5", "0x10", "seven", 1.5, None, [1]]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_seeds_are_refused(seed: object) -> None:
    with pytest.raises(BadInputError) as caught:
        check_seed(seed)
    message = str(caught.value)
    assert "\n" not in message and "seed" in message
    for game in ("teppich", "reloaded", "faecher"):
        with pytest.raises(BadInputError):
            get_game(game).deal(seed)  # type: ignore[arg-type]
        with pytest.raises(BadInputError):
            Session(game, seed, clock=ManualClock())  # type: ignore[arg-type]
    with pytest.raises(BadInputError):
        shuffled([1, 2, 3], seed)  # type: ignore[arg-type]
