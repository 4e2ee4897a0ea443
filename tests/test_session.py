"""The session layer of all three games: ledger, clock, time limits, giving up, undo, records.

Every test runs on a :class:`ManualClock`, so times, time penalties and the draining pool are
exact to the millisecond.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from patience.errors import BadInputError, GameOverError, IllegalMoveError
from patience.games import Move, Outcome, State, get_game
from patience.record import replay
from patience.session import LedgerEntry, ManualClock, Session

GAMES = ("teppich", "reloaded", "faecher")
TIME_LIMIT_MS = {"teppich": None, "reloaded": 300_000, "faecher": 600_000}


def snapshot(session: Session) -> tuple[Any, ...]:
    """Everything an action could change."""
    return (session.score, list(session.ledger), list(session.log), session.state.position(),
            session.moves_made, session.outcome, session.end_ms)


def check_ledger(ledger: list[LedgerEntry], score: int) -> None:
    """Each entry says when and why; totals run on from entry to entry and end at the score."""
    total = 0
    last_t = 0
    for entry in ledger:
        assert entry.reason
        assert isinstance(entry.t_ms, int) and entry.t_ms >= last_t
        total += entry.applied
        assert entry.total == total
        last_t = entry.t_ms
    assert total == score


def first_deal(game: str, holds: Callable[[State], bool]) -> int:
    """The first seed whose deal has what a test needs: tests ask for a kind of deal, not for
    what one game number happens to deal."""
    cls = get_game(game)
    seed = next((seed for seed in range(10_000) if holds(cls.deal(seed))), None)
    assert seed is not None, f"no deal of {game} in 0..9999 has what the test needs"
    return seed


def carpet_moves(state: State) -> int:
    """How many moves a Teppich deal gives in all (the base game ends alike in any order)."""
    played = 0
    while moves := state.legal_moves():
        state.push(moves[0])
        played += 1
    return played


def aces_on_t1_and_t2(state: State) -> bool:
    """A Reloaded deal whose two shortest piles show aces: t1>f, then t2>f turns a card up."""
    piles = state.piles()
    return all(piles[name][-1][0].rank == 1 for name in ("t1", "t2"))


def play_some(session: Session, clock: ManualClock, rng: random.Random, actions: int) -> None:
    """Random legal moves (and undos where the game allows them) at random times."""
    for _ in range(actions):
        if session.is_over:
            return
        clock.advance(rng.randint(0, 4000) / 1000)
        if session.undo_reason() is None and rng.random() < 0.2:
            session.undo()
            continue
        session.tick()
        if session.is_over:
            return
        session.play(rng.choice(session.state.legal_moves()))


# -- ledger -------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", range(1, 9))
def test_the_ledger_sums_to_the_score_and_says_when_and_why(game: str, seed: int) -> None:
    clock = ManualClock()
    session = Session(game, seed, clock=clock)
    play_some(session, clock, random.Random(seed), 60)
    check_ledger(session.ledger, session.score)
    if not session.is_over:
        session.give_up()
    check_ledger(session.ledger, session.score)
    assert session.ledger[-1].t_ms <= session.end_ms  # type: ignore[operator]


def test_one_ledger_entry_per_change_at_the_time_of_the_move() -> None:
    clock = ManualClock()
    session = Session("reloaded", first_deal("reloaded", aces_on_t1_and_t2), clock=clock)
    piles = session.state.piles()
    ace_1, ace_2, below_ace_2 = piles["t1"][-1][0], piles["t2"][-1][0], piles["t2"][-2][0]
    assert not piles["t2"][-2][1]
    clock.advance(4.25)
    session.play("t1>f")
    clock.advance(3)
    session.play("t2>f")
    assert [(e.t_ms, e.kind, e.points, e.reason) for e in session.ledger] == [
        (4250, "foundation", 10, f"{ace_1.display} onto a foundation (10 × 1)"),
        (7250, "foundation", 10, f"{ace_2.display} onto a foundation (10 × 1)"),
        (7250, "reveal", 5, f"{below_ace_2.display} turned face up"),
    ]
    assert session.score == 25


def test_teppich_scores_the_cards_on_the_foundations() -> None:
    session = Session("teppich", first_deal("teppich", lambda deal: carpet_moves(deal) >= 5), clock=ManualClock())
    assert [(e.kind, e.points, e.reason) for e in session.ledger] == [
        ("start", 4, "4 aces start the foundations")]
    for _ in range(5):
        session.play(session.state.legal_moves()[0])
        assert session.score == session.state.foundation_cards()
        assert session.ledger[-1].kind == "foundation" and session.ledger[-1].points == 1
    assert len(session.ledger) == 6


def test_a_clamped_change_shows_what_it_really_changed() -> None:
    """Reloaded keeps the total at 0 or more: the entry keeps the table's points and what applied."""
    clock = ManualClock()
    session = Session("reloaded", 2, clock=clock)
    clock.advance(10)
    session.tick()
    assert [(e.points, e.applied, e.total) for e in session.ledger] == [(-2, 0, 0)]
    check_ledger(session.ledger, session.score)


def test_a_rejected_move_is_free_where_the_game_does_not_charge_it() -> None:
    for game, move in (("teppich", "c1>c2"), ("reloaded", "t1>s")):
        session = Session(game, 3, clock=ManualClock())
        before = snapshot(session)
        with pytest.raises(IllegalMoveError):
            session.play(move)
        assert snapshot(session) == before


def test_text_that_is_no_move_changes_nothing() -> None:
    for game in GAMES:
        session = Session(game, 3, clock=ManualClock())
        before = snapshot(session)
        with pytest.raises(BadInputError):
            session.play("fly away")
        assert snapshot(session) == before


# -- the clock ----------------------------------------------------------------------------


@pytest.mark.parametrize("ms", [0, 1, 999, 1001, 4350, 12_345, 299_999, 599_999, 3_600_001])
def test_a_manual_clock_gives_exact_milliseconds(ms: int) -> None:
    clock = ManualClock()
    session = Session("reloaded", 3, clock=clock)
    clock.set_ms(ms)
    assert session.elapsed_ms() == ms
    later = ManualClock(start=12_345.678)
    session = Session("reloaded", 3, clock=later)
    later.advance(ms / 1000)
    assert session.elapsed_ms() == ms


def test_a_manual_clock_never_goes_back() -> None:
    with pytest.raises(ValueError, match="does not go back"):
        ManualClock().advance(-0.001)


def test_time_penalties_come_at_full_periods_only_recorded_at_their_period() -> None:
    clock = ManualClock()
    session = Session("reloaded", first_deal("reloaded", aces_on_t1_and_t2), options={"clamp": "end"}, clock=clock)
    clock.set_ms(9_999)
    session.tick()
    assert session.ledger == []
    clock.set_ms(10_000)
    session.tick()
    assert [(e.t_ms, e.kind, e.points, e.reason) for e in session.ledger] == [(10_000, "time", -2, "10 s of play")]
    clock.set_ms(35_500)
    session.play("t1>f")  # the periods passed before the move are charged first, at their own time
    assert [(e.t_ms, e.kind, e.points) for e in session.ledger] == [
        (10_000, "time", -2), (20_000, "time", -2), (30_000, "time", -2), (35_500, "foundation", 10)]
    session.tick()
    assert len(session.ledger) == 4
    assert session.score == 4


class Readings:
    """A clock that gives its readings (seconds) one after the other, then the last one again:
    it shows how often a session reads the clock, and what happens between two readings."""

    def __init__(self, *seconds: float) -> None:
        self.seconds = list(seconds)

    def __call__(self) -> float:
        return self.seconds.pop(0) if len(self.seconds) > 1 else self.seconds[0]


def test_an_action_reads_the_clock_once() -> None:
    """A move read at 9.999 s by the time rules and at 10.000 s for the log would score +5 then −2 live,
    but −2 (held at 0) then +5 in the replay: the record would not replay to its own score."""
    session = Session("reloaded", 1, clock=Readings(0, 9.999, 10.0, 10.0))
    session.play("t3>t1")  # turns a card up: +5
    session.give_up()
    again = replay(session.record())
    assert again.ledger == session.ledger and again.summary() == session.summary()
    assert [(e.t_ms, e.kind, e.applied) for e in session.ledger] == [(9_999, "reveal", 5), (10_000, "time", -2)]


def test_a_move_the_time_rules_accepted_is_no_time_out_in_the_replay() -> None:
    """With ``time_limit=10`` a move read just before the limit is played, and its record says so."""
    session = Session("reloaded", 1, {"time_limit": 10}, clock=Readings(0, 9.999, 10.0))
    session.play("t3>t1")
    assert session.log[-1].t_ms == 9_999
    session.tick()
    assert session.outcome == Outcome.TIME_OUT
    again = replay(session.record())
    assert again.summary() == session.summary() and again.outcome == Outcome.TIME_OUT


def test_time_penalty_is_an_option() -> None:
    clock = ManualClock()
    session = Session("reloaded", 3, options={"clamp": "end", "time_penalty_points": -7,
                                              "time_penalty_seconds": 4}, clock=clock)
    clock.set_ms(13_000)
    session.tick()
    assert [(e.t_ms, e.points) for e in session.ledger] == [(4000, -7), (8000, -7), (12_000, -7)]


@pytest.mark.parametrize("game", ["reloaded", "faecher"])
def test_the_time_limit_ends_the_game_at_exactly_the_limit(game: str) -> None:
    limit = TIME_LIMIT_MS[game]
    assert limit is not None
    clock = ManualClock()
    session = Session(game, 3, clock=clock)
    clock.set_ms(limit - 1)
    session.play("draw")
    assert session.outcome is None and session.time_left_ms() == 1
    clock.set_ms(limit)
    with pytest.raises(GameOverError, match="time out"):
        session.play("draw")
    assert session.outcome == Outcome.TIME_OUT
    assert session.end_ms == limit and session.elapsed_ms() == limit and session.time_left_ms() == 0
    assert session.log[-1].action == "draw" and session.moves_made == 1
    after = snapshot(session)
    clock.advance(60)
    for action in (lambda: session.play("draw"), session.undo, session.give_up):
        with pytest.raises(GameOverError):
            action()
    session.tick()
    assert snapshot(session) == after


def test_time_penalties_stop_at_the_time_limit() -> None:
    clock = ManualClock()
    session = Session("reloaded", 3, options={"clamp": "end"}, clock=clock)
    clock.advance(1000)  # far past the limit before anything looks at the clock
    session.tick()
    assert session.outcome == Outcome.TIME_OUT and session.end_ms == 300_000
    times = [e.t_ms for e in session.ledger if e.kind == "time"]
    assert times == list(range(10_000, 300_001, 10_000))
    assert session.ledger[-2].total == -2 * 30
    assert (session.ledger[-1].kind, session.ledger[-1].points) == ("floor", 60)  # clamp=end: 0 at the end
    assert session.score == 0


def test_reloaded_time_limit_0_means_no_limit() -> None:
    clock = ManualClock()
    session = Session("reloaded", 3, options={"time_limit": 0}, clock=clock)
    clock.advance(3600)
    session.play("draw")
    assert session.outcome is None and session.time_left_ms() is None


def test_teppich_has_no_time_rules() -> None:
    clock = ManualClock()
    session = Session("teppich", 2, clock=clock)
    clock.advance(10 * 3600)
    session.tick()
    assert session.outcome is None and session.time_left_ms() is None and session.pool_left() is None
    assert [e.kind for e in session.ledger] == ["start"]


# -- the end ------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "seed"), [("teppich", 2), ("reloaded", 3)])
def test_give_up_keeps_the_score(game: str, seed: int) -> None:
    clock = ManualClock()
    session = Session(game, seed, clock=clock)
    session.play(session.state.legal_moves()[0])
    clock.advance(5)  # under one time-penalty period
    score, entries = session.score, len(session.ledger)
    session.give_up()
    assert session.outcome == Outcome.GIVEN_UP and session.end_ms == 5000
    assert session.score == score and len(session.ledger) == entries
    assert session.log[-1].action == "giveup" and session.log[-1].t_ms == 5000


def test_give_up_in_der_faecher_adds_what_is_left_of_the_pool() -> None:
    clock = ManualClock()
    session = Session("faecher", 3, clock=clock)
    clock.advance(150)
    session.give_up()
    assert session.score == 1125 and session.ledger[-1].kind == "pool"


@pytest.mark.parametrize("game", GAMES)
def test_play_after_the_end_raises_and_changes_nothing(game: str) -> None:
    clock = ManualClock()
    session = Session(game, 3, clock=clock)
    legal = session.state.legal_moves()[0]
    session.give_up()
    after = snapshot(session)
    clock.advance(30)
    with pytest.raises(GameOverError, match="given up"):
        session.play(legal)
    with pytest.raises(GameOverError):
        session.play("v1>v2" if game == "faecher" else "t1>s")  # not charged as illegal either
    with pytest.raises(GameOverError):
        session.give_up()
    with pytest.raises(GameOverError, match="the game is over"):
        session.undo()
    assert session.undo_reason() == "the game is over"
    assert snapshot(session) == after


def test_a_game_without_moves_left_ends_by_itself() -> None:
    session = Session("teppich", first_deal("teppich", lambda deal: carpet_moves(deal) == 1), clock=ManualClock())
    assert session.outcome is None
    session.play(session.state.legal_moves()[0])
    assert session.outcome == Outcome.NO_MOVES
    with pytest.raises(GameOverError, match="no moves"):
        session.play("c1")


@pytest.mark.parametrize("game", GAMES)
def test_elapsed_time_is_frozen_after_the_end(game: str) -> None:
    clock = ManualClock()
    session = Session(game, 3, clock=clock)
    clock.advance(42.5)
    session.give_up()
    pool = session.pool_left()
    clock.advance(120)
    assert session.elapsed_ms() == 42_500
    assert session.summary()["ms"] == 42_500
    assert session.pool_left() == pool
    limit = TIME_LIMIT_MS[game]
    assert session.time_left_ms() == (None if limit is None else limit - 42_500)


# -- undo ---------------------------------------------------------------------------------


def test_teppich_undo_is_unlimited_and_free() -> None:
    session = Session("teppich", first_deal("teppich", lambda deal: carpet_moves(deal) >= 9), clock=ManualClock())
    start = session.state.position()
    played = []
    for _ in range(9):
        played.append(session.play(session.state.legal_moves()[0]))
    assert session.score == 13
    for move in reversed(played):
        assert session.undos_left() is None and session.undo_reason() is None
        assert session.undo() == move
    assert session.state.position() == start
    assert session.score == 4
    assert {e.kind for e in session.ledger[10:]} == {"take_back"}  # no charge for undoing
    assert session.undo_reason() == "there is no move to undo"


def test_reloaded_undo_three_in_a_row() -> None:
    clock = ManualClock()
    session = Session("reloaded", first_deal("reloaded", aces_on_t1_and_t2), clock=clock)
    for move in ("t1>f", "t2>f", "draw", "draw"):
        session.play(move)
    assert session.score == 25 and session.undos_left() == 3
    assert session.undo() == Move("s", "w")
    assert session.undo() == Move("s", "w")
    assert session.undo() == Move("t2", "f")
    assert [(e.kind, e.points, e.reason) for e in session.ledger[3:]] == [
        ("undo", -1, "undo of draw"),
        ("undo", -1, "undo of draw"),
        ("take_back", -15, "points of t2>f taken back"),
        ("undo", -1, "undo of t2>f"),
    ]
    assert session.score == 25 - 1 - 1 - 15 - 1
    assert session.undos_left() == 0
    assert session.undo_reason() == "at most 3 moves back: make a move first"
    before = snapshot(session)
    with pytest.raises(IllegalMoveError, match="at most 3 moves back"):
        session.undo()
    assert snapshot(session) == before
    session.play("draw")  # each new move makes one more undo possible, up to 3
    assert session.undos_left() == 1


def test_der_faecher_has_no_undo_by_default() -> None:
    session = Session("faecher", 3, clock=ManualClock())
    session.play("draw")
    before = snapshot(session)
    assert session.undos_left() == 0
    assert session.undo_reason() == "this game has no undo"
    with pytest.raises(IllegalMoveError, match="this game has no undo"):
        session.undo()
    assert snapshot(session) == before


@pytest.mark.parametrize("game", GAMES)
def test_nothing_to_undo_at_the_start(game: str) -> None:
    session = Session(game, 3, options={"undo_limit": 2} if game == "faecher" else None, clock=ManualClock())
    assert session.undo_reason() == "there is no move to undo"
    with pytest.raises(IllegalMoveError, match="there is no move to undo"):
        session.undo()


def test_an_undo_is_logged_at_its_time() -> None:
    clock = ManualClock()
    session = Session("teppich", 2, clock=clock)
    clock.advance(2)
    move = session.play(session.state.legal_moves()[0])
    clock.advance(1.5)
    session.undo()
    assert [e.to_dict() for e in session.log] == [{"m": str(move), "t": 2000}, {"m": "undo", "t": 3500}]
    assert session.ledger[-1].t_ms == 3500


# -- summary and record -------------------------------------------------------------------


def test_summary_says_outcome_score_moves_time_and_foundation_cards() -> None:
    clock = ManualClock()
    session = Session("reloaded", first_deal("reloaded", aces_on_t1_and_t2), clock=clock)
    clock.advance(3)
    session.play("t1>f")
    session.play("t2>f")
    clock.advance(4)
    assert session.summary() == {"outcome": None, "score": 25, "moves": 2, "ms": 7000, "foundation_cards": 2}
    session.give_up()
    assert session.summary() == {"outcome": "given_up", "score": 25, "moves": 2, "ms": 7000,
                                 "foundation_cards": 2}


def test_the_record_holds_the_game_and_replays_to_its_result() -> None:
    clock = ManualClock()
    session = Session("faecher", 3, options={"undo_limit": 1, "time_limit": 300}, clock=clock)
    clock.advance(1.25)
    session.play("draw")
    clock.advance(1)
    with pytest.raises(IllegalMoveError):
        session.play("v1>v2")
    session.undo()
    running = session.record()
    assert "end" not in running and "result" not in running
    clock.advance(10)
    session.play("draw")
    session.give_up()
    record = session.record()
    assert record == {
        "format": "patience-record",
        "version": 1,
        "game": "faecher",
        "options": {"time_limit": 300, "undo_limit": 1},
        "seed": 3,
        "actions": [
            {"m": "draw", "t": 1250},
            {"m": "v1>v2", "t": 2250, "illegal": True},
            {"m": "undo", "t": 2250},
            {"m": "draw", "t": 12_250},
            {"m": "giveup", "t": 12_250},
        ],
        "end": {"t": 12_250, "outcome": "given_up"},
        "result": session.summary(),
    }
    assert record["result"]["score"] == -50 + 1500 * (300_000 - 12_250) // 300_000
    assert replay(record).summary() == session.summary()


@pytest.mark.parametrize("game", GAMES)
def test_random_games_replay_from_their_records(game: str) -> None:
    for seed in range(1, 6):
        clock = ManualClock()
        session = Session(game, seed, clock=clock)
        play_some(session, clock, random.Random(seed * 7), 80)
        if not session.is_over:
            session.give_up()
        again = replay(session.record())
        assert again.summary() == session.summary()
        assert again.ledger == session.ledger
