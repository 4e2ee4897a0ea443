"""What moves a rating (docs/fairplay.md, "What moves a rating"): the ladder's pure rules, and the ledger
through real matches written as the arena writes them (``finish_match``), on SQLite and PostgreSQL:
farming with a second account gives nothing, a refund landing during a match is kept, a puppet that gets
itself marked returns only what was genuinely lost, a clear after a mark is an exact undo, held changes
are released by a clear and settled by a mark, lopsided series go to the moderators, and the deal of the
day's board counts only real rated play."""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from helpers import FakeTime
from patience.duel import Format, Match, Player
from patience.errors import PatienceError
from patience.fairplay import reason_text
from patience.games import DRAW, REDEAL
from patience.ladder import DAY_CAP, NEW_GAIN, Effort, Facts, attempted, decide
from patience.server.protocol import encode
from patience.server.solo.hints import simple_hint
from patience.server.storage import fairplay as fp
from patience.server.storage import ladder as ledger
from patience.server.storage import league
from patience.server.storage.daily import day_board, start_attempt
from patience.server.storage.store import SavedGame, Store, UserRow, name_key
from patience.session import ManualClock
from test_server_duel import seeds as seeds  # the fixture: duels deal from known keys

FMT = Format("reloaded", None, 300)
DAY_MS = 86_400_000

# -- the pure rules --------------------------------------------------------------------------------------

efforts = st.builds(Effort, st.integers(0, 80), st.integers(0, 40), st.integers(0, 300_000),
                    st.sampled_from(["won", "no_moves", "time_out", "given_up"]))


@given(efforts, efforts, st.floats(1, 300), st.floats(1, 300), st.floats(-100, 100), st.floats(-100, 100),
       st.integers(0, 10))
def test_the_rules_never_make_points(a: Effort, b: Effort, gain: float, loss: float, day: float, week: float,
                                     rated: int) -> None:
    """Whatever the facts: a change is never larger than Glicko-2's nor of the other sign; without a real
    attempt on either side the winner gains nothing; the gain from one opponent stays within the day's cap."""
    f = Facts((a, b), (1.0, 0.0), (gain, -loss), taken_day=(day, -day), taken_week=(week, -week),
              rated=(5, rated))
    win, lose = decide(f)
    for change, proposed in ((win, gain), (lose, -loss)):
        assert abs(change.applied) <= abs(proposed) + 1e-9 and change.applied * proposed >= 0
        assert change.held == 0 and change.state in ("applied", "void")
    if not (attempted(a) and attempted(b)):
        assert win.applied == 0 and win.reason in ("no_attempt", "no_attempt_opp")
    else:
        assert win.applied <= max(0.0, min(DAY_CAP - day, 80 - week)) + 1e-6
        if rated < 5:
            assert win.applied <= NEW_GAIN + 1e-9
        if win.reason == "capped":  # cut symmetrically: one factor for both
            assert win.applied * loss == pytest.approx(-lose.applied * gain, abs=1e-4)


def test_each_puppet_that_steps_aside_is_no_attempt() -> None:
    five_quick = Effort(5, 5, 4_000, "given_up")
    idles = Effort(0, 0, 0, "time_out")
    stock_turner = Effort(0, 0, 0, "no_moves")  # 30 stock turns: none is a real move
    shuttle = Effort(20, 2, 90_000, "given_up")  # one card back and forth
    quick_ten = Effort(12, 12, 8_000, "given_up")
    assert not any(attempted(e) for e in (five_quick, idles, stock_turner, shuttle, quick_ten))
    assert attempted(Effort(12, 9, 45_000, "given_up")) and attempted(Effort(2, 2, 9_000, "won"))


# -- through the ledger ------------------------------------------------------------------------------------


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    s = Store(database_url)
    s.migrate()
    yield s
    s.close()


_IDS = itertools.count(1)


def user(store: Store, name: str, days_old: int = 10) -> str:
    uid = f"u{next(_IDS)}{name}"[:24]
    with store.engine.begin() as c:
        c.execute(UserRow.__table__.insert(), [{"id": uid, "login": uid.lower(), "name": uid, "name_key": name_key(uid),
                                                "password_hash": "x", "created_ms": int(time.time() * 1000)
                                                - days_old * DAY_MS}])
    return uid


def rating(store: Store, uid: str) -> float:
    return league.load_rating(store.engine, uid, "reloaded").rating


def _play(match: Match, clock: ManualClock, side: int, moves: int, every_s: float, rng: random.Random, *,
          stock: bool = False) -> None:
    """``moves`` actions of one side: stock turns only (``stock``), else real moves of the hint's or another."""
    session = match.sessions[side]
    played: set[str] = set()
    for _ in range(moves):
        if session.is_over:
            return
        clock.advance(every_s)
        if stock:
            with contextlib.suppress(PatienceError):  # the stock's passes may run out
                match.act(side, "draw")
            continue
        real = [m for m in session.state.useful_moves() if m not in (DRAW, REDEAL)]
        fresh = [m for m in real if str(m) not in played]
        hint = simple_hint(session.state)
        if hint is not None and hint not in (DRAW, REDEAL) and str(hint) not in played:
            move = hint
        else:
            move = rng.choice(fresh or real) if real else DRAW
        played.add(str(move))
        match.act(side, str(move))


_WINNING: dict[str, int] = {}


def match_between(store: Store, winner: str, loser: str, loser_does: str = "quit", *, start: bool = True) -> Match:
    """A match ``winner`` wins against ``loser``, with its start written as the arena writes it;
    ``loser_does``: ``quit`` (gives up at once), ``five`` (5 quick moves, then gives up), ``idle`` (to the
    time-out), ``stock`` (turns the stock 30 times), ``play`` (a real attempt: 24 actions over 72 s)."""
    known = _WINNING.get(loser_does)
    for seed in ([known] if known is not None else range(1, 60)):
        rng = random.Random(seed)
        clock = ManualClock()
        players = (Player(winner, winner, league.load_rating(store.engine, winner, "reloaded")),
                   Player(loser, loser, league.load_rating(store.engine, loser, "reloaded")))
        match = Match(f"m{next(_IDS)}", FMT, seed, "n", clock=clock, players=players)
        if loser_does == "five":
            _play(match, clock, 1, 5, 0.5, rng)
        elif loser_does == "stock":
            _play(match, clock, 1, 30, 0.5, rng, stock=True)
        elif loser_does == "play":
            _play(match, clock, 1, 24, 3.0, rng)
        if loser_does in ("quit", "five", "play"):
            match.act(1, "giveup")
        _play(match, clock, 0, 40, 2.0, rng)
        if loser_does in ("idle", "stock"):
            clock.advance(400)
            match.tick()
        elif not match.sessions[0].is_over:
            match.act(0, "giveup")
        if not match.is_over:
            clock.advance(400)
            match.tick()
        if match.result().winner == 0:
            _WINNING[loser_does] = seed  # the play does not depend on the players: the next match deals it again
            if start:
                with store.engine.begin() as c:
                    league.insert_match(c, match)
            return match
    raise AssertionError("no deal found that the winner wins")


def finish(store: Store, match: Match) -> None:
    result, after = match.finish()
    with store.engine.begin() as c:
        league.finish_match(c, match, result, after)


def play(store: Store, winner: str, loser: str, loser_does: str = "quit") -> Match:
    match = match_between(store, winner, loser, loser_does)
    finish(store, match)
    return match


def state(store: Store, uid: str) -> str | None:
    with store.engine.connect() as c:
        row = fp._standing(c, uid)
    return None if row is None else row.state


def put_in_review(store: Store, uid: str) -> None:
    with store.engine.begin() as c:
        fp._set(c, uid, "review", None, None, "flagged for review by the detection", None)


def test_a_second_accounts_give_ups_earn_nothing(store: Store) -> None:
    """The issue's farm: 8 matches in which the puppet makes no real attempt, each way of stepping aside."""
    farmer = user(store, "farmer")
    puppets = [user(store, f"p{i}") for i in range(2)]
    for n, does in enumerate(["quit", "five", "idle", "stock"] * 2):
        play(store, farmer, puppets[n % 2], does)  # two puppets taking turns
    assert rating(store, farmer) - 1500 < 100
    assert rating(store, farmer) == 1500  # precisely: no attempt, no rating
    profile = league.profile(store.engine, farmer)
    assert profile is not None and profile["recent"][0]["change"]["reason"] == "no_attempt_opp"
    # from the fourth give-up in a day on, the quitter's own loss counts (no escape by giving up at once)
    assert rating(store, puppets[0]) < 1500 and rating(store, puppets[1]) < 1500
    assert state(store, farmer) == "review"  # three losses with no attempt to one account: the moderators look


def test_a_puppet_that_plays_a_little_is_bounded_per_opponent_and_when_new(store: Store) -> None:
    farmer, puppet = user(store, "farmer"), user(store, "puppet")
    for _ in range(4):
        play(store, farmer, puppet, "play")
    assert 0 < rating(store, farmer) - 1500 <= DAY_CAP + 1e-6  # a new farmer against a new puppet: 40 a day
    rotated = user(store, "rotator")
    for _ in range(8):  # a fresh puppet every match: a win over a new account gives at most 10
        play(store, rotated, user(store, "fresh"), "play")
    assert rating(store, rotated) - 1500 <= 8 * NEW_GAIN + 1e-6


def test_a_refund_landing_during_a_match_is_kept(store: Store) -> None:
    victim, bot, other = user(store, "victim"), user(store, "bot"), user(store, "other")
    play(store, bot, victim, "play")
    lost = 1500 - rating(store, victim)
    assert lost > 0
    running = match_between(store, victim, other, "play")  # started: its players' ratings read now
    fp.act(store.engine, bot, "mark_bot", "a bot", "mod")  # the refund lands meanwhile
    assert rating(store, victim) == pytest.approx(1500)
    finish(store, running)
    with store.engine.connect() as c:
        won = ledger.changes_of(c, victim, [running.id])[running.id]["applied"]
    assert won > 0 and rating(store, victim) == pytest.approx(1500 + won, abs=0.06)


def test_a_puppet_that_marks_itself_returns_only_what_was_genuinely_lost(store: Store) -> None:
    main, puppet = user(store, "main"), user(store, "puppet")
    play(store, main, puppet, "play")
    play(store, main, puppet, "play")
    play(store, puppet, main, "play")  # one real loss of main to the puppet
    before = rating(store, main)
    fp.act(store.engine, puppet, "mark_bot", "a bot", "mod")
    assert rating(store, main) == pytest.approx(before)  # main is ahead against it: nothing to give back
    assert fp.fairplay_of(store.engine, main)["refunds"] == []


def test_clear_after_mark_is_an_exact_undo(store: Store) -> None:
    bot, one, two = user(store, "bot"), user(store, "one"), user(store, "two")
    play(store, bot, one, "play")
    play(store, bot, one, "play")
    play(store, bot, two, "play")
    play(store, one, bot, "play")
    before = {u: rating(store, u) for u in (bot, one, two)}
    assert before[one] < 1500 and before[two] < 1500
    fp.act(store.engine, bot, "mark_bot", "a bot", "mod")
    assert rating(store, two) == pytest.approx(1500) and rating(store, one) == pytest.approx(1500)
    fp.act(store.engine, bot, "clear", "a person after all", "mod")
    after = {u: rating(store, u) for u in (bot, one, two)}
    assert after == pytest.approx(before, abs=1e-9)
    view = fp.account_view(store.engine, two)
    assert view is not None and [a["action"] for a in view["audit"]][:2] == ["unrefund", "refund"]
    # the server's notes: English text, and by key with their figures for the moderators' page's language
    unrefund, refund = view["audit"][:2]
    points, match_id = refund["why"]["p"]["points"], refund["why"]["p"]["match"]
    assert refund["why"] == {"k": "note_refund", "p": {"points": points, "match": match_id}} and points > 0
    assert unrefund["why"] == {"k": "note_unrefund", "p": {"points": points, "match": match_id}}
    assert refund["note"] == f"{points:.1f} points of match {match_id} given back"
    assert unrefund["note"] == (f"{points:.1f} points of match {match_id} taken back: the account that took them "
                                "was cleared")
    marked = fp.account_view(store.engine, bot)
    assert marked is not None and [(a["action"], a["note"], a["why"]) for a in marked["audit"]][:2] == [
        ("clear", "a person after all", None), ("mark_bot", "a bot", None)]  # a moderator's: their text


def test_held_changes_are_released_by_a_clear(store: Store) -> None:
    suspect, opponent = user(store, "suspect"), user(store, "opponent")
    put_in_review(store, suspect)
    play(store, suspect, opponent, "play")
    assert rating(store, suspect) == 1500 and rating(store, opponent) == 1500
    profile = league.profile(store.engine, suspect)
    assert profile is not None and profile["ratings"]["reloaded"]["held"] > 0
    assert profile["recent"][0]["change"]["state"] == "held"
    fp.act(store.engine, suspect, "clear", "fine", "mod")
    assert rating(store, suspect) > 1500 > rating(store, opponent)
    profile = league.profile(store.engine, suspect)
    assert profile is not None and "held" not in profile["ratings"]["reloaded"]


def test_held_changes_are_settled_by_a_mark(store: Store) -> None:
    suspect, victim, winner = user(store, "suspect"), user(store, "victim"), user(store, "winner")
    put_in_review(store, suspect)
    play(store, suspect, victim, "play")  # held: the victim's loss is not final
    play(store, winner, suspect, "play")  # held: the winner's gain waits
    fp.act(store.engine, suspect, "mark_bot", "a bot", "mod")
    assert rating(store, victim) == 1500  # the held loss is void
    assert rating(store, winner) > 1500  # the held gain is applied
    assert rating(store, suspect) == 1500
    running = match_between(store, suspect, victim, "play")  # running at the mark: the end sees it marked
    finish(store, running)
    assert rating(store, victim) == 1500


def test_a_lopsided_series_goes_to_the_moderators_and_friends_do_not(store: Store) -> None:
    main, puppet = user(store, "main"), user(store, "puppet")
    for _ in range(6):
        play(store, main, puppet, "play")
    assert state(store, main) == "review"
    view = fp.account_view(store.engine, main)
    assert view is not None and "6 matches with one opponent" in reason_text(json.loads(_reasons(store, main)))
    held = play(store, main, puppet, "play")  # in review now: its gains are held
    with store.engine.connect() as c:
        assert ledger.changes_of(c, main, [held.id])[held.id]["state"] == "held"
    one, two = user(store, "one"), user(store, "two")
    for _ in range(4):
        play(store, one, two, "play")
        play(store, two, one, "play")
    assert state(store, one) is None and state(store, two) is None


def _reasons(store: Store, uid: str) -> str:
    with store.engine.connect() as c:
        return str(fp._standing(c, uid).reasons)


def test_linked_accounts_move_no_rating(store: Store) -> None:
    a, b = user(store, "a"), user(store, "b")
    now = int(time.time() * 1000)
    with store.engine.begin() as c:
        ledger.add_traces(c, a, [("net", "n1"), ("browser", "b1")], now)
        ledger.add_traces(c, b, [("net", "n2"), ("browser", "b1")], now)
        assert ledger.linked(c, a, b, now) and not ledger.linked(c, a, b, now + 31 * DAY_MS)
    linked_match = play(store, a, b, "play")
    assert rating(store, a) == rating(store, b) == 1500
    view = league.match_view(store.engine, linked_match.id)  # its record says what was applied: nothing
    assert view is not None and [r["rating"] for r in view["record"]["ratings_after"]] == [1500, 1500]
    # a loss to an account linked later (a shared browser seen after the match) is never given back
    c_, d = user(store, "c"), user(store, "d")
    play(store, d, c_, "play")
    lost = rating(store, c_)
    with store.engine.begin() as c:
        ledger.add_traces(c, c_, [("browser", "b9")], now)
        ledger.add_traces(c, d, [("browser", "b9")], now)
    fp.act(store.engine, d, "mark_bot", "a bot", "mod")
    assert lost < 1500 and rating(store, c_) == lost


# -- the deal of the day's board -----------------------------------------------------------------------------

DAY = "2026-11-28"


def won_attempt(store: Store, uid: str) -> str:
    gid = f"g{next(_IDS)}"
    saved = SavedGame(gid, f"br{gid}", "reloaded", "reloaded/standard", "1", {"game": "reloaded"}, 60_000, 90,
                      5000, "won")
    assert start_attempt(store.engine, DAY, "reloaded", uid, saved) == gid
    with store.engine.begin() as c:
        fp.write_evidence(c, [fp.Evidence(f"g:{gid}", uid, "daily", "reloaded", None, gid, 1500.0, [], {})])
    return gid


def analyse(store: Store, gid: str, verdict: str) -> None:
    from patience.fairplay import game_figures

    fp.analysed(store.engine, f"g:{gid}", game_figures([], 0, 0), verdict)


def on_board(store: Store, uid: str) -> bool:
    return uid in {e["user"] for e in day_board(store.engine, DAY, "reloaded")}


def test_the_board_counts_only_real_rated_play_and_analysed_wins(store: Store) -> None:
    farmed, real = user(store, "farmed"), user(store, "real")
    for n in range(5):  # five wins over puppets that gave up at once: no history
        play(store, farmed, user(store, f"q{n}"), "quit")
    opponents = [user(store, f"o{n}") for n in range(4)]
    for one, two in itertools.combinations(opponents, 2):  # they play each other first: established, not new
        play(store, one, two, "play")
        play(store, two, one, "play")
    for n in range(6):  # real matches against three opponents
        play(store, real, opponents[n % 3], "play")
    time.sleep(0.002)
    for uid in (farmed, real):
        gid = won_attempt(store, uid)
        analyse(store, gid, "clear")
    assert not on_board(store, farmed)
    assert on_board(store, real)
    # an unanalysed win waits; a suspect or machine one (or clairvoyant, see fairplay.HELD_VERDICTS) has no place;
    # in review: none either
    later = user(store, "later")
    for n in range(6):
        play(store, later, opponents[n % 3], "play")
    time.sleep(0.002)
    gid = won_attempt(store, later)
    assert not on_board(store, later)
    analyse(store, gid, "suspect")
    assert not on_board(store, later)
    fp.act(store.engine, later, "clear", "a person", "mod")  # a moderator cleared it after the attempt
    assert on_board(store, later)
    put_in_review(store, real)
    assert not on_board(store, real)


def test_sign_up_and_sign_in_leave_traces_that_link_accounts(tmp_path: Path, fake_time: FakeTime) -> None:
    """Two people on addresses of their own are not linked; a second account signed in from the first
    one's browser is; the traces keep digests, never an address."""
    from test_server_duel import PASSWORD, make_app, person, post, running

    with running(make_app(tmp_path, fake_time)) as app:
        ann, ben, cat = person(app, "ann"), person(app, "ben"), person(app, "cat")
        ids = [c.get("/api/me").json()["user"]["id"] for c in (ann, ben, cat)]
        engine = app.state.store.engine
        now = int(time.time() * 1000)
        with engine.connect() as c:
            assert not ledger.linked(c, ids[0], ids[1], now) and not ledger.linked(c, ids[1], ids[2], now)
        assert post(ann, "/account/signin", login="ben", password=PASSWORD).status_code == 200
        with engine.connect() as c:
            assert ledger.linked(c, ids[0], ids[1], now) and not ledger.linked(c, ids[0], ids[2], now)
            digests = [d for (d,) in c.execute(select(ledger.TraceRow.digest)).all()]
        assert len(digests) >= 6 and not any("127." in d for d in digests)


def test_a_farm_through_the_arena_moves_nothing_and_the_end_says_so(tmp_path: Path, fake_time: FakeTime,
                                                                      seeds: Any) -> None:
    """The issue's farm through real duels: the puppet gives up as soon as the clocks start, the farmer
    plays ordinary moves, both ask for a rematch. No rating moves, the end of each match says so (the
    ratings at the start), and the third give-up puts the farmer before the moderators."""
    from test_fairplay import bot_move
    from test_server_duel import arena_of, end_of, let_start, make_app, pair, running

    with running(make_app(tmp_path, fake_time)) as app:
        farmer, puppet, live = pair(app, "farmer", "puppet")
        farmer_id = farmer.client.get("/api/me").json()["user"]["id"]
        for n in range(3):
            puppet.intent("giveup")
            for _ in range(30):
                if live.match.sessions[farmer.side].is_over:
                    break
                bot_move(farmer, live, fake_time, 2.0)
            if not live.match.sessions[farmer.side].is_over:
                farmer.intent("giveup")
            end = end_of(farmer)["end"]
            assert [r["rating"] for r in end["ratings"]] == [1500, 1500], end  # shown as it is: nothing moved
            if n == 2:
                break
            farmer.send("rematch", {"id": live.id})
            puppet.until(lambda m, old=live.id: m["t"] == "rematch" and m["d"]["state"] == "offered")
            puppet.send("rematch", {"id": live.id})
            new = farmer.until(lambda m, old=live.id: m["t"] == "duel" and m["d"]["id"] != old)["d"]
            puppet.until(lambda m, new=new: m["t"] == "duel" and m["d"]["id"] == new["id"])
            live = arena_of(app).matches[new["id"]]
            let_start(app)
        profile = farmer.client.get(f"/api/profile/{farmer_id}").json()
        assert profile["ratings"]["reloaded"]["rating"] == 1500 and profile["ratings"]["reloaded"]["matches"] == 3
        reasons = [m["change"]["reason"] for m in profile["recent"]]  # no_attempt too if the hint stalled early
        assert "no_attempt_opp" in reasons and set(reasons) <= {"no_attempt", "no_attempt_opp"}
        with app.state.store.engine.connect() as c:
            assert fp._standing(c, farmer_id).state == "review"


def test_two_ends_of_one_pair_at_one_moment_keep_within_the_day_cap(postgres_url: str) -> None:
    """Two matches of one pair end at the same moment on two processes (two connections of PostgreSQL,
    each in its own transaction): the second decides after the first's commit, so both together take no
    more than the day's cap. (SQLite writes one transaction at a time: a server's ends never overlap.)"""
    store = Store(postgres_url)
    store.migrate()
    try:
        farmer, puppet = user(store, "farmer"), user(store, "puppet")
        for _ in range(3):  # a new puppet: 10 a match, 30 taken of the day's 40
            play(store, farmer, puppet, "play")
        taken = rating(store, farmer) - 1500
        assert DAY_CAP - NEW_GAIN - 1e-6 <= taken < DAY_CAP
        both = [match_between(store, farmer, puppet, "play") for _ in range(2)]  # both under way at once
        first_written = threading.Event()

        def end(match: Match, first: bool) -> None:
            if not first:
                first_written.wait(10)
            result, after = match.finish()
            with store.engine.begin() as c:
                league.finish_match(c, match, result, after)
                if first:  # written, not committed yet: the other end runs now
                    first_written.set()
                    time.sleep(1.0)

        threads = [threading.Thread(target=end, args=(m, n == 0)) for n, m in enumerate(both)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert rating(store, farmer) - 1500 <= DAY_CAP + 1e-6
        with store.engine.connect() as c:
            applied = [ledger.changes_of(c, farmer, [m.id])[m.id] for m in both]
        assert sorted(round(a["applied"], 1) for a in applied)[0] <= DAY_CAP - taken + 0.05
        assert {a["reason"] for a in applied} <= {"capped", "new"} and any(a["reason"] == "capped" for a in applied)
    finally:
        store.close()


def _try(page: Any, live: Any, fake_time: FakeTime, played: set[str]) -> None:
    """One action of a player who tries: a real move not made before (a stock turn when there is none)."""
    state = live.match.sessions[page.side].state
    fresh = [m for m in state.useful_moves() if m not in (DRAW, REDEAL) and str(m) not in played]
    fake_time.t += 1.5
    move = fresh[0] if fresh else simple_hint(state)
    if move in (DRAW, REDEAL):
        page.intent("stock")
    elif move is not None:
        played.add(str(move))
        page.intent("move", src=move.src, dst=move.dst, n=move.n)


def test_the_end_tells_both_pages_what_the_ladder_applied_and_why(database_url: str, fake_time: FakeTime,
                                                                   seeds: Any) -> None:
    """Both try: the end each page is told (the event of the last give-up, the answer to it, a page that
    comes back) has the ratings as the ledger left them and each change's reason: two new accounts move 10
    (``new``), not Glicko-2's 160; with a player in review nothing moves (``held``)."""
    from test_server_duel import arena_of, end_of, make_app, pair, running

    with running(make_app(database_url, fake_time)) as app:
        for one, two, review in (("anna", "bruno", False), ("carla", "dora", True)):
            a, b, live = pair(app, one, two)
            ids = [p.id for p in live.match.players]
            if review:
                with app.state.store.engine.begin() as c:
                    fp._set(c, ids[0], "review", None, None, "flagged for review by the detection", None)
            played: tuple[set[str], set[str]] = (set(), set())
            for _ in range(60):
                if all(len(p) >= 12 for p in played) or any(s.is_over for s in live.match.sessions):
                    break
                for page in (a, b):
                    _try(page, live, fake_time, played[page.side])
            assert all(len(p) >= 10 for p in played), (played, [s.outcome for s in live.match.sessions])
            a.intent("giveup")
            answer = b.intent("giveup")["d"]["end"]
            with app.state.store.engine.connect() as c:
                written = [ledger.changes_of(c, u, [live.id])[live.id] for u in ids]
            ratings = [round(league.load_rating(app.state.store.engine, u, "reloaded").rating) for u in ids]
            for end in (end_of(a)["end"], end_of(b)["end"], answer,
                        json.loads(encode(arena_of(app).matches[live.id].snapshot(0)))["d"]["end"]):
                assert [r["rating"] for r in end["ratings"]] == ratings, end
                assert [(c["applied"], c["held"], c["reason"]) for c in end["changes"]] == [
                    (w["applied"], w["held"], w["reason"]) for w in written]
            reasons = {w["reason"] for w in written}
            if review:
                assert reasons == {"held"} and ratings == [1500, 1500]
            elif end_of(a)["end"]["winner"] is not None:
                assert reasons == {"new"} and sorted(ratings) == [1490, 1510]
            a.close()
            b.close()
