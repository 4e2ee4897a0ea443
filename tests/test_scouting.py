"""Scout-then-main on the deal of the day (issue 33, docs/fairplay.md *Scouted deals of the day*): an account
plays the day's deal to see its cards, another wins it along the solver's line. A win of a deal seen first by
a scout waits for a moderator unless its hits where only the hidden cards decide are at chance; a win after a
linked account's attempt waits in any case."""

from __future__ import annotations

import itertools
import random
import time
from typing import Any

import pytest
from sqlalchemy import select

import patience.server.storage.fairplay as fp
import patience.server.storage.ladder as ledger
from helpers import establish, opponents_for_the_board, run_async
from patience.fairplay import AT_CHANCE_P, Step, account_score, game_figures, tail_at_least, verdict
from patience.games import get_game
from patience.server.solo.fairplay import FairPlay
from patience.server.storage.daily import day_board, scouting, start_attempt
from patience.server.storage.store import SavedGame, Store
from patience.session import ManualClock, Session
from patience.solve import Budget, Status, solve
from test_ladder import DAY, analyse, on_board, play, user, won_attempt
from test_ladder import store as store  # the fixture: a migrated store on SQLite and on PostgreSQL

_GAMES = itertools.count(1)


def figures(chances: list[float], hits: int, scouted: str = "") -> Any:
    import dataclasses

    rng = random.Random(1)  # a person's heavy-tailed think times
    return dataclasses.replace(game_figures([Step(i, int(rng.lognormvariate(7, 0.8))) for i in range(40)], 0, 0,
                                            hidden=chances, hidden_hits=hits), scouted=scouted)


def test_a_scouted_win_is_held_when_the_hidden_cards_decided_anything() -> None:
    line = figures([0.5, 0.4, 0.5], 3)  # the solver's line: every decision the hidden cards decide, right
    assert verdict(line).kind == "clear"  # a day nobody scouted: three decisions prove nothing
    assert verdict(figures([0.5, 0.4, 0.5], 3, "day")).kind == "scouted"
    # a player who sees only the table, at chance: held too on a scouted day (rare now: the scout was an
    # established account at machine pace, or marked; a new account is dealt a practice deal)
    at_chance = figures([0.5, 0.4, 0.5], 1, "day")
    assert tail_at_least(at_chance.hidden, 1) >= AT_CHANCE_P and verdict(at_chance).kind == "scouted"
    assert verdict(figures([0.5], 0, "day")).kind == "scouted"  # one decision the hidden cards decided
    assert verdict(figures([], 0, "day")).kind == "clear"  # the hidden cards decided nothing: nothing bought
    assert verdict(figures([], 0, "linked")).kind == "scouted"  # a linked account's attempt came first
    score = account_score([figures([0.5, 0.4, 0.5], 3, "day")])
    assert score.score >= 50 and "scout" in str(score.reasons[0])  # in the moderators' queue with its reason


def attempt(store: Store, uid: str, outcome: str | None = "given_up") -> str:
    gid = f"s{next(_GAMES)}"
    saved = SavedGame(gid, f"br{gid}", "reloaded", "reloaded/standard", "1", {"game": "reloaded"}, 40_000, 60,
                      300, outcome)
    assert start_attempt(store.engine, DAY, "reloaded", uid, saved) == gid
    time.sleep(0.002)
    return gid


def established(store: Store, name: str, opponents: list[str]) -> str:
    return establish(store, user(store, name), opponents)


@pytest.fixture
def opponents(store: Store) -> list[str]:
    return opponents_for_the_board(store)  # they play each other first: established, not new


def test_which_earlier_attempts_scout_the_day(store: Store, opponents: list[str]) -> None:
    main = established(store, "main", opponents)
    honest = established(store, "honest", opponents)
    attempt(store, honest)  # an established account that tried and lost: no scout
    gid = won_attempt(store, main)
    assert scouting(store.engine, gid) == ""
    before = int(time.time() * 1000)
    late = user(store, "late", days_old=0)
    attempt(store, late)  # a new account's attempt after the main's game was over: it told the main nothing
    assert scouting(store.engine, gid, before) == ""
    # ... but begun while the main's attempt, begun first, waited for it: the main's win is scouted
    assert scouting(store.engine, gid) == "day"
    later = won_attempt(store, established(store, "later", opponents))
    assert scouting(store.engine, later) == "day"  # a new account (no place on the board) saw the deal first
    with store.engine.begin() as c:  # a marked established account's attempt scouts too
        fp._set(c, honest, "marked", "bot", None, "marked", None)
    assert scouting(store.engine, gid, before) == "day"


def test_an_attempt_by_a_linked_account_or_a_machine_scouts(store: Store, opponents: list[str]) -> None:
    main = established(store, "main", opponents)
    mate = established(store, "mate", opponents)
    now = int(time.time() * 1000)
    with store.engine.begin() as c:  # the two signed in from one browser
        ledger.add_traces(c, main, [("browser", "d" * 64)], now)
        ledger.add_traces(c, mate, [("browser", "d" * 64)], now)
    attempt(store, mate)
    assert scouting(store.engine, won_attempt(store, main)) == "linked"
    other = established(store, "other", opponents)
    fast = established(store, "fast", opponents)
    gid = attempt(store, fast)
    second = won_attempt(store, other)
    assert scouting(store.engine, second) == ""
    with store.engine.begin() as c:
        fp.write_evidence(c, [fp.Evidence(f"g:{gid}", fast, "daily", "reloaded", None, gid, 1500.0, [], {})])
    analyse(store, gid, "machine")  # its attempt at machine speed: it scouted the deal
    assert scouting(store.engine, second) == "day"
    with store.engine.begin() as c:
        c.execute(fp.EvidenceRow.__table__.delete().where(fp.EvidenceRow.key == f"g:{gid}"))
    assert scouting(store.engine, second) == ""
    third = established(store, "third", opponents)
    puppet = user(store, "puppet")
    play(store, third, puppet, "quit")  # a puppet that gave up to it at once: linked by the ledger
    attempt(store, puppet)
    assert scouting(store.engine, won_attempt(store, third)) == "linked"
    assert scouting(store.engine, won_attempt(store, established(store, "fourth", opponents))) == "day"


def test_the_board_holds_a_scouted_win_until_a_moderator_clears_it(store: Store, opponents: list[str]) -> None:
    main = established(store, "main", opponents)
    gid = won_attempt(store, main)
    analyse(store, gid, "scouted")
    assert not on_board(store, main)
    fp.act(store.engine, main, "clear", "played it honestly", "mod")
    assert on_board(store, main)


def won_line(seed: int) -> dict[str, Any]:
    """The record of a deal of the day won along the solver's line (every card known: a scout's)."""
    clock = ManualClock()
    session = Session("reloaded", seed, clock=clock)
    solution = solve(get_game("reloaded").deal(seed), Budget(seconds=10, memory_mb=64))
    assert solution.status is Status.WON
    for n, move in enumerate(solution.moves, start=1):
        clock.set_ms(n * 800)
        session.play(str(move))
    assert session.outcome == "won"
    return session.record()


def test_the_analysis_marks_a_win_after_a_linked_scout_and_the_board_waits(store: Store,
                                                                            opponents: list[str]) -> None:
    """Through the server's analysis (:class:`patience.server.solo.fairplay.FairPlay`): a brand-new account
    signed up from the main's browser plays the day's deal and gives up; the main wins it along the solver's
    line at a human pace. Its verdict is ``scouted``, it has no place on the board and the account is in the
    moderators' queue; a moderator's clear gives it its place."""
    main = established(store, "main", opponents)
    scout = user(store, "scout", days_old=0)
    now = int(time.time() * 1000)
    with store.engine.begin() as c:
        ledger.add_traces(c, main, [("browser", "e" * 64)], now)
        ledger.add_traces(c, scout, [("browser", "e" * 64)], now)
    attempt(store, scout)
    record = won_line(1001)
    gid = f"m{next(_GAMES)}"
    saved = SavedGame(gid, f"br{gid}", "reloaded", "reloaded/standard", f"day:{DAY}", record, 200_000,
                      len(record["actions"]), 5000, "won")
    assert start_attempt(store.engine, DAY, "reloaded", main, saved) == gid
    rng = random.Random(2)
    steps = [[i, int(rng.lognormvariate(6.6, 0.7)), "d", None, None] for i in range(len(record["actions"]))]
    fair = FairPlay(store)
    fair.game_over(fp.Evidence(f"g:{gid}", "", "daily", "reloaded", None, gid, 1500.0, steps, record))
    run_async(fair.work)  # a loop of its own: a browser test before it may hold the main thread's
    with store.engine.connect() as c:
        kind, user_id = c.execute(select(fp.EvidenceRow.verdict, fp.EvidenceRow.user_id)
                                  .where(fp.EvidenceRow.key == f"g:{gid}")).one()
    assert (kind, user_id) == ("scouted", main)
    assert main not in {e["user"] for e in day_board(store.engine, DAY, "reloaded")}
    assert main in {a["id"] for a in fp.queue(store.engine)}
    fp.act(store.engine, main, "clear", "a person", "mod")
    assert on_board(store, main)
