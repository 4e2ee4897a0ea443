"""Duels without a server: formats, the seed commitment, two games on one clock, the result and
its bonus, ratings, the match record that anyone can check, and pairing by rating."""

from __future__ import annotations

import contextlib
import copy
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patience.duel import (
    AGAIN_AFTER_S,
    DUEL_UNDO_LIMIT,
    FORMATS,
    LIMITS,
    Format,
    Match,
    Player,
    Seeker,
    closest,
    commitment,
    pairs,
    rate,
    reach,
    result_of,
    verify_commitment,
    verify_match,
)
from patience.errors import BadInputError, IllegalMoveError, PatienceError, RecordError
from patience.games import get_game
from patience.games.reloaded import ReloadedOptions
from patience.ratings import Rating
from patience.record import replay
from patience.session import ManualClock, Session

NONCE = "5e" * 16


def play_useful(match: Match, side: int, count: int, clock: ManualClock, rng: random.Random) -> None:
    """Play ``count`` useful moves (foundation moves first) on one side, a second apart."""
    session = match.sessions[side]
    for _ in range(count):
        if session.is_over:
            return
        moves = session.state.useful_moves()
        up = [m for m in moves if m.dst == "f"]
        clock.advance(1)
        match.act(side, str(up[0] if up else rng.choice(moves)))


# -- formats -------------------------------------------------------------------------------------


def test_formats_set_the_time_limit_where_the_game_has_one() -> None:
    assert Format("reloaded", None, 600).options() == {"time_limit": 600}
    assert Format("reloaded", None, 300).options() == {}  # the default: 5 minutes
    assert Format("faecher", "with-undo", 300).options() == {"time_limit": 300, "undo_limit": 3,
                                                             "pool_until": "match"}
    # Teppich has no clock and no undo limit of its own: a duel sets both
    assert Format("teppich", "waste", 300).options() == {"waste": True, "time_limit": 300, "undo_limit": 3}
    assert Format("faecher", None, 600).key == "faecher/standard/600"
    assert Format("teppich", None, 300).variant_name == "waste"  # never the base carpet
    assert Format.from_key("teppich/5x6-waste/300") == Format("teppich", "5x6-waste", 300)


@pytest.mark.parametrize(("game", "variant", "limit"), [
    ("teppich", "4x5", 300),  # the base carpet: no play can change its result
    ("teppich", "5x6", 300),
    ("chess", None, 300),
    ("reloaded", "untimed", 300),
    ("reloaded", None, 17),
])
def test_formats_that_are_no_duel_are_refused(game: str, variant: str | None, limit: int) -> None:
    with pytest.raises(BadInputError):
        Format(game, variant, limit)


# -- the commitment ------------------------------------------------------------------------------


def test_a_first_version_commitment_binds_game_options_seed_and_nonce() -> None:
    digest = commitment("reloaded", {"time_limit": 600}, 123456789, NONCE)
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert verify_commitment(digest, "reloaded", {"time_limit": 600}, 123456789, NONCE)
    for other in [("faecher", {"time_limit": 600}, 123456789, NONCE),
                  ("reloaded", {"time_limit": 300}, 123456789, NONCE),
                  ("reloaded", {"time_limit": 600}, 123456788, NONCE),
                  ("reloaded", {"time_limit": 600}, 123456789, "5f" * 16)]:
        assert not verify_commitment(digest, *other)


# -- two games on one clock ----------------------------------------------------------------------


def test_both_players_get_the_same_deal_and_their_own_game() -> None:
    clock = ManualClock()
    match = Match("m-same", Format("reloaded", None, 300), 99, NONCE, clock)
    a, b = match.sessions
    assert a.state.position() == b.state.position()
    play_useful(match, 0, 5, clock, random.Random(1))
    assert a.moves_made == 5 and b.moves_made == 0
    assert a.state.position() != b.state.position()
    assert a.elapsed_ms() == b.elapsed_ms() == 5000  # one clock for both


def test_progress_tells_figures_and_no_card() -> None:
    clock = ManualClock()
    match = Match("m-prog", Format("faecher", None, 600), 5, NONCE, clock)
    play_useful(match, 1, 6, clock, random.Random(2))
    progress = match.progress(1)
    assert set(progress) == {"score", "foundation_cards", "moves", "ms", "left_ms", "outcome", "pool"}
    assert all(isinstance(v, int) or v is None for v in progress.values())
    assert progress["moves"] == 6 and progress["left_ms"] == 600_000 - 6000
    assert progress["pool"] == 1500 * (600_000 - 6000) // 600_000  # not in the score until the match ends


def test_time_ends_both_games_at_the_limit_exactly() -> None:
    clock = ManualClock()
    match = Match("m-time", Format("reloaded", None, 300), 8, NONCE, clock)
    play_useful(match, 0, 3, clock, random.Random(3))
    clock.advance(1000)
    assert match.tick() == [0, 1]
    assert match.is_over
    assert [s.outcome.value for s in match.sessions] == ["time_out", "time_out"]  # type: ignore[union-attr]
    assert [s.end_ms for s in match.sessions] == [300_000, 300_000]


def test_a_carpet_duel_ends_at_the_limit_as_a_time_out_and_its_record_replays() -> None:
    clock = ManualClock(50.0)
    match = Match("m-carpet", Format("teppich", "waste", 300), 31, NONCE, clock)
    play_useful(match, 0, 4, clock, random.Random(4))
    clock.advance(900)
    assert match.tick() == [0, 1]
    assert match.is_over
    for session in match.sessions:
        assert session.end_ms == 300_000 and session.outcome is not None and session.outcome.value == "time_out"
        record = session.record()
        assert record["end"] == {"t": 300_000, "outcome": "time_out"}
        assert all(action["m"] != "giveup" for action in record["actions"])  # nobody gave up
        back = replay(record)
        assert back.score == session.score and back.end_ms == 300_000 and back.outcome == session.outcome
    result, _ = match.finish()
    assert result.outcomes == ("time_out", "time_out")
    assert match.record()["result"]["outcomes"] == ["time_out", "time_out"]
    assert verify_match(match.record()) == result


FORMAT_KEYS = [(game, variant, limit) for game, variants in FORMATS.items() for variant in variants
               for limit in LIMITS]


@pytest.mark.parametrize(("game", "variant", "limit"), FORMAT_KEYS)
def test_every_duel_game_runs_out_of_time_as_a_time_out(game: str, variant: str, limit: int) -> None:
    clock = ManualClock()
    match = Match("m-limit", Format(game, variant, limit), 5, NONCE, clock)
    assert [s.table.time_limit_ms for s in match.sessions] == [limit * 1000] * 2
    play_useful(match, 0, 2, clock, random.Random(9))
    match.act(1, "giveup")
    clock.advance(limit - 3)
    match.tick()
    assert not match.sessions[0].is_over
    clock.advance(10)
    match.tick()
    assert match.result().outcomes == ("time_out", "given_up")
    assert match.sessions[0].end_ms == limit * 1000
    assert verify_match(match.record()).outcomes == ("time_out", "given_up")


@pytest.mark.parametrize(("game", "variant", "limit"), FORMAT_KEYS)
def test_every_duel_format_limits_undo_to_at_most_three_or_none(game: str, variant: str, limit: int) -> None:
    match = Match("m-undo", Format(game, variant, limit), 8, NONCE, ManualClock())
    limits = {s.table.undo_limit for s in match.sessions}
    assert len(limits) == 1
    (undo_limit,) = limits
    assert undo_limit is not None and 0 <= undo_limit <= DUEL_UNDO_LIMIT  # never an unlimited undo


def test_draw_look_and_undo_is_refused_past_three_in_a_carpet_duel() -> None:
    clock = ManualClock()
    match = Match("m-peek", Format("teppich", "waste", 300), 12, NONCE, clock)
    session = match.sessions[0]
    for _ in range(4):
        clock.advance(1)
        match.act(0, "draw")
    stock = len(session.state.stock)
    for _ in range(3):
        match.act(0, "undo")
    with pytest.raises(IllegalMoveError) as refused:
        match.act(0, "undo")  # a fourth card back would show how deep the player may look
    assert refused.value.reason == "at most 3 moves back: make a move first"
    assert len(session.state.stock) == stock + 3 and len(session.state.waste) == 1
    match.act(0, "draw")  # a new move adds one undo
    match.act(0, "undo")


def test_in_a_faecher_duel_the_pool_drains_until_the_match_ends() -> None:
    """RULES.md §3: "In a duel, each player's pool drains until the match ends (when both games have
    ended) ... giving up or getting stuck early saves no pool" (issue 10: −50 and 75 became 1,344 and
    1,622 at the end, the one who gave up at once banking nearly the whole pool)."""
    clock = ManualClock()
    match = Match("m-pool", Format("faecher", None, 300), 41, NONCE, clock)
    early, late = match.sessions
    clock.advance(1)
    match.act(0, "giveup")
    assert early.is_over and early.score == 0 and early.waits_for_match
    assert [e.kind for e in early.ledger] == []  # the pool is not banked at the player's own end
    clock.advance(99)
    assert match.progress(0)["pool"] == match.progress(1)["pool"] == 1500 * 200 // 300  # still draining
    play_useful(match, 1, 3, clock, random.Random(8))
    clock.set_ms(200_000)
    match.act(1, "giveup")
    assert match.is_over and not early.waits_for_match and not late.waits_for_match
    assert early.ledger[-1].to_dict() == {"t": 200_000, "kind": "pool", "points": 500, "applied": 500,
                                          "total": 500, "reason": "what is left of the pool after 200 s"}
    assert late.ledger[-1].kind == "pool" and late.ledger[-1].points == 500
    assert match.pools() == (500, 500) and match.progress(0)["pool"] is None
    assert early.summary()["ms"] == 1000  # the game itself ended at 1 s
    result, _ = match.finish()
    assert result.scores == (500, late.score)
    # the records keep the match's end, so each game replays to its score, and the match checks out
    record = match.record()
    assert record["games"][0]["end"] == {"t": 1000, "outcome": "given_up", "match_t": 200_000}
    assert replay(record["games"][0]).score == 500
    assert verify_match(record) == result
    for forged in (1000, 250_000):
        bad = copy.deepcopy(record)
        bad["games"][0]["end"]["match_t"] = forged
        bad["games"][0]["result"]["score"] = 1500 * (300_000 - forged) // 300_000
        bad["result"]["scores"][0] = bad["games"][0]["result"]["score"]
        with pytest.raises(RecordError):
            verify_match(bad)


def test_a_faecher_duel_that_runs_out_of_time_adds_an_empty_pool() -> None:
    clock = ManualClock()
    match = Match("m-pool-time", Format("faecher", "with-undo", 300), 42, NONCE, clock)
    clock.advance(2)
    match.act(1, "giveup")
    clock.advance(400)
    assert match.tick() == [0, 1]
    assert match.pools() == (0, 0) and [s.score for s in match.sessions] == [0, 0]
    assert verify_match(match.record()).outcomes == ("time_out", "given_up")


@settings(max_examples=25, deadline=None)
@given(variant=st.sampled_from(sorted(FORMATS["faecher"])), limit=st.sampled_from(LIMITS),
       rnd=st.randoms(use_true_random=False))
def test_any_faecher_duel_replays_and_checks_out_with_its_pools(variant: str, limit: int,
                                                                 rnd: random.Random) -> None:
    """Whoever ends first and however the match ends, both game records replay to their scores (the pool
    counted at the match's end) and the match record checks out."""
    clock = ManualClock()
    match = Match("m-any", Format("faecher", variant, limit), rnd.randrange(1, 10**6), NONCE, clock)
    while not match.is_over:
        clock.advance(rnd.choice((0.5, 3, 9.999, 40)))
        side = rnd.randrange(2)
        session = match.sessions[side]
        if session.is_over:
            match.tick()
            continue
        moves = session.state.useful_moves()
        action = "giveup" if not moves or rnd.random() < 0.04 else str(rnd.choice(moves))
        with contextlib.suppress(PatienceError):  # the time ran out first
            match.act(side, action)
    result, _ = match.finish()
    record = match.record()
    end = max(s.end_ms or 0 for s in match.sessions)
    for side, session in enumerate(match.sessions):
        assert session.match_end_ms == end and record["games"][side]["end"]["match_t"] == end
        assert replay(record["games"][side]).score == session.score
    assert verify_match(record) == result


def test_solo_der_faecher_still_adds_the_pool_at_the_games_end() -> None:
    """``pool_until=game`` is the default: out of a duel the pool stops when the game ends."""
    clock = ManualClock()
    session = Session("faecher", 41, {"time_limit": 300}, clock=clock)
    clock.advance(1)
    session.give_up()
    assert session.score == 1500 * 299 // 300 and not session.waits_for_match
    assert get_game("faecher").make_options({}).pool_until == "game"


def test_a_record_of_a_result_without_outcomes_still_checks_out() -> None:
    record = finished_match().record()
    del record["result"]["outcomes"]  # as matches ended before results told how each game ended
    assert verify_match(record).outcomes == ("given_up", "time_out")
    record["result"]["bonus"] += 1
    with pytest.raises(RecordError):
        verify_match(record)


def test_giving_up_keeps_the_score_so_far_and_the_other_plays_on() -> None:
    clock = ManualClock()
    match = Match("m-giveup", Format("reloaded", None, 300), 21, NONCE, clock)
    play_useful(match, 0, 12, clock, random.Random(5))
    score = match.sessions[0].score
    match.act(0, "giveup")
    assert match.sessions[0].score == score and not match.is_over
    play_useful(match, 1, 3, clock, random.Random(5))
    assert match.sessions[1].moves_made == 3
    with pytest.raises(BadInputError):
        match.result()


def test_hints_are_off_in_duels() -> None:
    match = Match("m-hint", Format("reloaded", None, 300), 3, NONCE, ManualClock())
    with pytest.raises(BadInputError, match="hints are off"):
        match.act(0, "hint")


# -- result, bonus, ratings ----------------------------------------------------------------------


def test_the_winner_gets_the_bonus_of_the_rules() -> None:
    assert result_of((1200, 800), ReloadedOptions()).finals == (1320, 800)
    low = result_of((30, 250), ReloadedOptions())
    assert (low.winner, low.finals, low.bonus) == (1, (30, 350), 100)  # at least 100
    draw = result_of((50, 50), ReloadedOptions())
    assert (draw.winner, draw.finals, draw.bonus) == (None, (50, 50), 0)
    # Der Fächer's options carry no bonus rule: the Decision's default applies
    fan = result_of((2000, 1000), get_game("faecher").make_options({}))
    assert (fan.winner, fan.finals) == (0, (2200, 1000))


def test_a_whole_match_result_and_ratings() -> None:
    clock = ManualClock()
    players = (Player("u-a", "Anna", Rating(1500, 200)), Player("u-b", "Bruno", Rating(1500, 200)))
    match = Match("m-whole", Format("reloaded", None, 300), 17, NONCE, clock, players)
    play_useful(match, 0, 20, clock, random.Random(6))
    match.act(1, "giveup")
    clock.advance(400)
    match.tick()
    result, (after_a, after_b) = match.finish()
    a_score = match.sessions[0].score
    assert result.scores == (a_score, 0)
    if a_score > 0:
        assert result.winner == 0 and result.finals[0] == a_score + max(a_score // 10, 100)
        assert after_a.rating > 1500 > after_b.rating
        assert after_a.deviation < 200 and after_b.deviation < 200
    assert verify_match(match.record()) == result


def test_ratings_of_a_draw_between_equals_do_not_move() -> None:
    draw = result_of((10, 10), ReloadedOptions())
    a, b = rate(draw, (Rating(1600, 80), Rating(1600, 80)))
    assert a.rating == pytest.approx(1600) and b.rating == pytest.approx(1600)
    assert not a.provisional and Rating().provisional


# -- the record ----------------------------------------------------------------------------------


def finished_match() -> Match:
    clock = ManualClock()
    match = Match("m-record", Format("faecher", None, 300), 77, NONCE, clock)
    rng = random.Random(7)
    play_useful(match, 0, 10, clock, rng)
    play_useful(match, 1, 14, clock, rng)
    with pytest.raises(IllegalMoveError):
        match.act(1, "fs>fh")  # a wrong click: charged, and kept in the record
    match.act(0, "giveup")
    clock.advance(300)
    match.tick()
    match.finish()
    return match


def test_the_seed_stays_out_of_the_record_until_the_end() -> None:
    clock = ManualClock()
    match = Match("m-secret", Format("reloaded", None, 300), 123456789, NONCE, clock)
    live = match.record()
    assert "seed" not in live and "nonce" not in live and "result" not in live
    # the game records inside name the seed: they are for the end, never sent while playing
    assert live["commitment"] == commitment("reloaded", {}, 123456789, NONCE)


def test_a_finished_match_record_checks_out() -> None:
    match = finished_match()
    record = match.record()
    assert record["seed"] == 77 and record["nonce"] == NONCE
    assert verify_match(record) == match.result()
    assert len(record["ratings_after"]) == 2
    assert any(a.get("illegal") for a in record["games"][1]["actions"])


@pytest.mark.parametrize("tamper", ["seed", "nonce", "result", "outcome", "score", "action", "games"])
def test_a_tampered_match_record_is_refused(tamper: str) -> None:
    record = copy.deepcopy(finished_match().record())
    if tamper == "seed":
        record["seed"] = 78
        for g in record["games"]:
            g["seed"] = 78
    elif tamper == "nonce":
        record["nonce"] = "00" * 16
    elif tamper == "result":
        record["result"]["finals"][0] += 1
    elif tamper == "outcome":
        record["result"]["outcomes"] = ["won", "won"]
    elif tamper == "score":
        record["games"][0]["result"]["score"] += 10
    elif tamper == "action":
        record["games"][1]["actions"] = record["games"][1]["actions"][:-1]
    else:
        record["games"] = record["games"][:1]
    with pytest.raises(RecordError):
        verify_match(record)


# -- pairing -------------------------------------------------------------------------------------


@given(st.floats(800, 2400), st.lists(st.tuples(st.floats(800, 2400), st.floats(0, 100)), max_size=12))
def test_pairing_takes_the_closest_rating(rating: float, rows: list[tuple[float, float]]) -> None:
    waiting = [Seeker(f"u{i}", r, since) for i, (r, since) in enumerate(rows)]
    chosen = closest(rating, waiting)
    if not waiting:
        assert chosen is None
        return
    assert chosen is not None
    assert abs(chosen.rating - rating) == min(abs(s.rating - rating) for s in waiting)


def test_pairing_never_pairs_a_player_with_themselves() -> None:
    waiting = [Seeker("me", 1500, 0), Seeker("you", 2400, 5)]
    assert closest(1500, waiting, exclude="me").user == "you"  # type: ignore[union-attr]
    assert closest(1500, waiting[:1], exclude="me") is None
    equal = [Seeker("late", 1600, 9), Seeker("early", 1400, 1)]
    assert closest(1500, equal).user == "early"  # type: ignore[union-attr]  # the one waiting longest


def test_the_commitment_is_the_documented_sha256() -> None:
    import hashlib

    text = 'patience-duel-v1|faecher|{"time_limit":300,"undo_limit":3}|2|' + NONCE  # docs/protocol.md
    assert commitment("faecher", {"undo_limit": 3, "time_limit": 300}, 2, NONCE) == hashlib.sha256(
        text.encode()).hexdigest()


def _pairs_by_hand(waiting: list[Seeker], now: float, last: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """The wave's rule written the slow way: longest waiting first, the closest left (longest waiting
    among equals) but never the one they met last, within the reach of the one who has waited longer;
    then those left who waited AGAIN_AFTER_S, whoever they met."""
    left = sorted(waiting, key=lambda s: s.since)
    made = []
    paired = set()
    while left:
        first = left.pop(0)
        others = [s for s in left if not last or last.get(first.user) != s.user]
        if not others:
            continue
        other = min(others, key=lambda s: (abs(s.rating - first.rating), s.since, s.rating))
        if abs(other.rating - first.rating) <= reach(now - first.since):
            left.remove(other)
            made.append((first.user, other.user))
            paired |= {first.user, other.user}
    if last:
        made += _pairs_by_hand([s for s in waiting if s.user not in paired and now - s.since >= AGAIN_AFTER_S], now)
    return made


@given(st.lists(st.tuples(st.sampled_from([1000, 1100, 1150, 1200, 1500, 1700, 1900, 2500]), st.integers(0, 30)),
                max_size=40))
def test_a_wave_pairs_as_the_rule_says(players: list[tuple[int, int]]) -> None:
    waiting = [Seeker(f"p{i}", rating * 1.0, since * 1.0) for i, (rating, since) in enumerate(players)]
    assert [(a.user, b.user) for a, b in pairs(waiting, 31.0)] == _pairs_by_hand(waiting, 31.0)


@given(st.lists(st.tuples(st.sampled_from([1000, 1100, 1150, 1200, 1500, 1700, 1900, 2500]), st.integers(0, 30)),
                max_size=40), st.randoms(use_true_random=False))
def test_a_wave_does_not_pair_two_who_met_last_while_another_is_in_reach(players: list[tuple[int, int]],
                                                                        rng: random.Random) -> None:
    waiting = [Seeker(f"p{i}", rating * 1.0, since * 1.0) for i, (rating, since) in enumerate(players)]
    users = [s.user for s in waiting]
    rng.shuffle(users)
    last = {}
    for a, b in zip(users[::2], users[1::2], strict=False):  # who met whom last: pairs of players
        last[a], last[b] = b, a
    assert [(a.user, b.user) for a, b in pairs(waiting, 31.0, last)] == _pairs_by_hand(waiting, 31.0, last)


def test_a_match_played_apart_counts_each_pool_at_the_time_limit() -> None:
    """Play now: each player plays the deal at a time of their own, on a clock of their own; Der Fächer's
    pool is counted at the limit for both, so giving up early banks nothing, and the record checks out."""
    host_clock, guest_clock = ManualClock(), ManualClock()
    match = Match("m-apart", Format("faecher", None, 300), 41, NONCE, clocks=(host_clock, guest_clock))
    host, guest = match.sessions
    host_clock.advance(2)
    match.act(0, "giveup")
    assert host.is_over and not host.waits_for_match  # settled at once: at the limit, the pool is empty
    assert host.score == 0 and host.ledger[-1].kind == "pool" and host.ledger[-1].points == 0
    assert guest.elapsed_ms() == 0 and not match.is_over  # the guest's clock has not started
    guest_clock.advance(50)  # a day later, on the guest's own clock: 50 s of their game
    play_useful(match, 1, 3, guest_clock, random.Random(5))
    match.act(1, "giveup")
    assert match.is_over and guest.match_end_ms == 300_000 and guest.ledger[-1].points == 0
    result, _ = match.finish()
    record = match.record()
    assert record["apart"] is True and verify_match(record) == result
    for side in (0, 1):
        assert replay(record["games"][side]).score == match.sessions[side].score
    together = copy.deepcopy(record)
    del together["apart"]  # the same games read as played at once: the pool would count at the later end
    with pytest.raises(RecordError):
        verify_match(together)


@settings(max_examples=25, deadline=None)
@given(game=st.sampled_from(sorted(FORMATS)), rnd=st.randoms(use_true_random=False))
def test_any_match_played_apart_replays_and_checks_out(game: str, rnd: random.Random) -> None:
    variant = rnd.choice(sorted(FORMATS[game]))
    clocks = (ManualClock(), ManualClock())
    match = Match("m-apart-any", Format(game, variant, 300), rnd.randrange(1, 10**6), NONCE, clocks=clocks)
    for side in (0, 1):  # one after the other, each on their own clock
        session = match.sessions[side]
        while not session.is_over:
            clocks[side].advance(rnd.choice((0.5, 3, 9.999, 40)))
            match.tick()
            if session.is_over:
                break
            moves = session.state.useful_moves()
            action = "giveup" if not moves or rnd.random() < 0.04 else str(rnd.choice(moves))
            with contextlib.suppress(PatienceError):
                match.act(side, action)
    result, _ = match.finish()
    assert verify_match(match.record()) == result
