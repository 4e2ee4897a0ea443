"""Arena tournaments: the scoring and pairing rules (with hypothesis), and the tables on SQLite and
PostgreSQL: a scheduled slot made once, a pair claimed once when processes race, a player free again
when their duel is over, and the standings read from the duels' results."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Literal

import pytest
from argon2 import PasswordHasher
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import event, insert

import test_server_duel
from helpers import TestClient
from patience.duel import Format, Match, Player
from patience.errors import BadInputError, IllegalMoveError
from patience.games import DRAW, REDEAL
from patience.rng import new_deal_key
from patience.server.arena.tournaments import check_password, hourly, new_tournament
from patience.server.storage import apart as apart_storage
from patience.server.storage import fairplay as fairplay_storage
from patience.server.storage.fairplay import act
from patience.server.storage.league import finish_match, insert_match, load_rating
from patience.server.storage.store import Store, UserRow, name_key
from patience.server.storage.tournaments import (
    CLAIM_LAPSE_MS,
    Tournament,
    claim_pair,
    find_tournament,
    free_players,
    insert_duel,
    join_tournament,
    list_tournaments,
    make_tournament,
    pause_tournament,
    player_tournaments,
    players_of,
    running_tournaments,
    standings,
)
from patience.session import ManualClock
from patience.tournament import Entrant, Standing, check_minutes, duel_points, on_fire, pair_free, rank
from test_server_duel import PASSWORD, Page, person, post

app, seeds = test_server_duel.app, test_server_duel.seeds  # the fixtures of the duel tests

results = st.lists(st.sampled_from("wdl"), max_size=30)


def test_points_win_draw_loss_and_the_fire() -> None:
    assert duel_points(["w", "d", "l"]) == [2, 1, 0]
    assert duel_points(["w", "w", "w", "w", "l", "w", "w", "w"]) == [2, 2, 4, 4, 0, 2, 2, 4]
    assert duel_points(["w", "d", "w", "w", "d", "w"]) == [2, 1, 2, 2, 1, 4]  # a draw keeps the fire
    with pytest.raises(BadInputError):
        duel_points(["x"])
    assert check_minutes(15) == 15 and check_minutes(120) == 120
    for minutes in (14, 121):
        with pytest.raises(BadInputError):
            check_minutes(minutes)


@given(results)
def test_a_win_scores_double_exactly_after_two_wins_in_a_row_since_the_last_loss(played: list[str]) -> None:
    points = duel_points(played)
    for n, (result, got) in enumerate(zip(played, points, strict=True)):
        before = "".join(played[:n])
        since_loss = before.rsplit("l", 1)[-1]
        lit = "ww" in since_loss
        assert got == {"w": 4 if lit else 2, "d": 1, "l": 0}[result]
    # the next win scores double exactly when the player is on fire
    assert duel_points([*played, "w"])[-1] == (4 if on_fire(played) else 2)


entrants = st.lists(st.tuples(st.integers(0, 20), st.integers(1000, 2000), st.integers(0, 9) | st.none()),
                    max_size=10)


@given(entrants)
def test_pairs_are_of_free_players_never_last_opponents_and_made_when_possible(raw: list[tuple[int, int, int | None]]
                                                                              ) -> None:
    free = [Entrant(f"p{n}", points, rating, None if last is None else f"p{last}")
            for n, (points, rating, last) in enumerate(raw)]
    made = pair_free(free)
    paired = [user for pair in made for user in pair]
    assert len(paired) == len(set(paired)) and set(paired) <= {e.user for e in free}
    last = {e.user: e.last for e in free}
    for a, b in made:
        assert last[a] != b and last[b] != a
    possible = any(x.user != y.user and x.last != y.user and y.last != x.user for x in free for y in free)
    assert bool(made) == possible


def test_the_closest_by_points_then_rating() -> None:
    free = [Entrant("top", 10, 1500), Entrant("near", 8, 1900), Entrant("far", 2, 1500), Entrant("low", 0, 1200)]
    assert pair_free(free) == [("top", "near"), ("far", "low")]
    # the top player's last opponent is the closest: the next one is taken instead
    free = [Entrant("top", 10, 1500, "near"), Entrant("near", 8, 1900, "top"), Entrant("far", 2, 1500)]
    assert pair_free(free) == [("top", "far")]
    with pytest.raises(BadInputError):
        pair_free([Entrant("a", 0, 1500), Entrant("a", 0, 1500)])


# -- the tables ----------------------------------------------------------------------------------


def add_users(store: Store, *names: str) -> None:
    with store.engine.begin() as connection:
        connection.execute(insert(UserRow), [{"id": name, "login": name, "name": name.title(), "password_hash": "-",
                                              "created_ms": 0, "name_key": name_key(name)} for name in names])


def _attempted(match_id: str, a: str, b: str, sides: tuple[int, ...] = (0, 1)) -> Match:
    """A match of Der Fächer in which ``sides`` make the same real attempt (12 moves over 36 s and more:
    docs/fairplay.md's rule of no attempt), no game over yet."""
    for _ in range(40):
        clock = ManualClock()
        match = Match(match_id, Format("faecher", None, 300), new_deal_key(), clock=clock,
                      players=(Player(a, a.title()), Player(b, b.title())))
        if not sides:
            return match
        played: set[str] = set()
        for _ in range(80):
            state = match.sessions[sides[0]].state
            if len(played) >= 12 or match.sessions[sides[0]].is_over:
                break
            clock.advance(3.0)
            fresh = [m for m in state.useful_moves() if m not in (DRAW, REDEAL) and str(m) not in played]
            move = fresh[0] if fresh else DRAW if state.check(DRAW) is None else REDEAL if state.check(REDEAL) is None \
                else None
            if move is None:
                break
            if fresh:
                played.add(str(move))
            for side in sides:
                match.act(side, str(move))
        if len(played) >= 12 and not any(s.is_over for s in match.sessions):
            return match
    raise AssertionError("no deal found with 12 different moves")  # pragma: no cover


def play(store: Store, tournament: str, match_id: str, a: str, b: str, winner: int | None, *,
         tried: tuple[bool, bool] = (True, True)) -> None:
    """A duel of the tournament from its claim to its end; ``winner`` 0 (a), 1 (b) or None (a draw); ``tried``:
    whether each side makes a real attempt first (else it gives up at once)."""
    now = int(time.time() * 1000)
    free_players(store.engine, tournament, now)  # as the pairing does: the last duels' claims go
    assert claim_pair(store.engine, tournament, a, b, match_id, now)
    match = _attempted(match_id, a, b, tuple(side for side in (0, 1) if tried[side]))
    with store.engine.begin() as connection:
        insert_match(connection, match)
        insert_duel(connection, tournament, match_id, a, b)
    if winner is not None:
        with pytest.raises(IllegalMoveError):  # an illegal move costs the loser points in Der Fächer
            match.act(1 - winner, "fs>v1")
    match.act(0, "giveup")
    match.act(1, "giveup")
    result, ratings = match.finish()
    assert result.winner == winner
    with store.engine.begin() as connection:
        finish_match(connection, match, result, ratings)


@pytest.fixture
def store(database_url: str) -> Store:
    made = Store(database_url)
    made.migrate()
    yield made  # type: ignore[misc]
    made.close()


def test_a_scheduled_slot_is_made_once_when_processes_race(store: Store) -> None:
    made: list[str] = []
    barrier = threading.Barrier(6)

    def make(n: int) -> None:
        barrier.wait()
        made.append(make_tournament(store.engine, Tournament(f"hourly{n:04d}", "", "reloaded/standard/300", 0, 60_000,
                                                             slot="hourly/2026-11-24T03/reloaded")).id)

    threads = [threading.Thread(target=make, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 6 and len(set(made)) == 1


def test_a_pair_is_claimed_once_and_freed_when_its_duel_ends(store: Store) -> None:
    add_users(store, "anna", "bruno", "carla")
    make_tournament(store.engine, Tournament("tour0001", "Test", "faecher/standard/300", 0, 10**13))
    for user in ("anna", "bruno", "carla"):
        join_tournament(store.engine, "tour0001", user)
    now = int(time.time() * 1000)
    wins: list[bool] = []
    barrier = threading.Barrier(2)

    def claim(a: str, b: str, match_id: str) -> None:
        barrier.wait()
        wins.append(claim_pair(store.engine, "tour0001", a, b, match_id, now))

    threads = [threading.Thread(target=claim, args=args) for args in (("anna", "bruno", "m-one"),
                                                                       ("bruno", "carla", "m-two"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wins) == [False, True]  # bruno is in one pair only; the other claim changed nothing
    free = {user for user, _ in free_players(store.engine, "tour0001", now)}
    assert len(free) == 1 and free <= {"anna", "carla"}
    # a claim whose match never came is let go once it has lapsed
    assert {u for u, _ in free_players(store.engine, "tour0001", now + CLAIM_LAPSE_MS + 1)} == {"anna", "bruno",
                                                                                               "carla"}
    assert not pause_tournament(store.engine, "tour0001", "nobody")


def test_standings_from_the_duels_with_the_fire_and_a_pause(store: Store) -> None:
    add_users(store, "anna", "bruno", "carla")
    tour = make_tournament(store.engine, Tournament("tour0002", "Test", "faecher/standard/300", 0, 10**13,
                                                    password="$argon2id$kept-as-given"))
    assert tour.password == "$argon2id$kept-as-given"
    for user in ("anna", "bruno", "carla"):
        join_tournament(store.engine, "tour0002", user)
    play(store, "tour0002", "match-0001", "anna", "bruno", 0)
    play(store, "tour0002", "match-0002", "carla", "anna", 1)
    play(store, "tour0002", "match-0003", "bruno", "anna", 1)  # anna's third win in a row: 4 points
    play(store, "tour0002", "match-0004", "bruno", "carla", None)
    pause_tournament(store.engine, "tour0002", "carla")
    now = int(time.time() * 1000)
    assert {u for u, _ in free_players(store.engine, "tour0002", now)} == {"anna", "bruno"}  # carla paused
    table = standings(store.engine, tour)
    assert (table[0]["rank"], table[0]["name"], table[0]["points"]) == (1, "Anna", 8)
    # equal points and wins: the rating in the game decides (bruno lost two real duels, carla one)
    assert [(row["rank"], row["name"], row["points"]) for row in table[1:]] == [(2, "Carla", 1), (3, "Bruno", 1)]
    assert table[1]["rating"] > table[2]["rating"]
    assert [r for r, _ in rank([Standing("x", 1500, ("d",)), Standing("y", 1500, ("d",))])] == [1, 1]  # all equal
    anna = table[0]
    assert [d["points"] for d in anna["duels"]] == [2, 2, 4] and anna["fire"]
    assert [d["double"] for d in anna["duels"]] == [False, False, True]  # the third: a win on fire
    assert [d["opponent"] for d in anna["duels"]] == ["Bruno", "Carla", "Bruno"]
    assert all(row["playing"] is None for row in table)
    carla = next(row for row in table if row["name"] == "Carla")
    assert carla["paused"] and [d["result"] for d in carla["duels"]] == ["l", "d"]
    # the rating of the game, as the duels left it
    assert anna["rating"] == round(load_rating(store.engine, "anna", "faecher").rating) > 1500
    # a mark takes bruno's line and his duels out (recomputed: anna's win over carla alone), a clear brings them back
    act(store.engine, "bruno", "mark_bot", "a bot", "carla")
    marked = standings(store.engine, tour)
    assert [(row["name"], row["points"]) for row in marked] == [("Anna", 2), ("Carla", 0)]
    act(store.engine, "bruno", "clear", "a person after all", "carla")
    assert standings(store.engine, tour) == table
    join_tournament(store.engine, "tour0002", "carla")  # back from the pause
    assert "carla" in {u for u, _ in free_players(store.engine, "tour0002", now)}
    # on a player's profile: their place and points; a tournament not begun yet is not there
    make_tournament(store.engine, Tournament("tour0003", "Later", "faecher/standard/300", 10**13, 10**13 + 1))
    join_tournament(store.engine, "tour0003", "carla")
    assert [(t["id"], t["state"], t["rank"], t["players"], t["points"])
            for t in player_tournaments(store.engine, "carla", now)] == [("tour0002", "on", 2, 3, 1)]


def test_a_duel_without_a_real_attempt_buys_no_points(store: Store) -> None:
    """The rating's rule of no attempt holds for the points: a farm of give-ups scores nothing, a winner
    keeps its fire through a duel its opponent threw, and a player on fire who gives up a deal at once
    loses the fire as by a loss (docs/protocol.md, "Points")."""
    add_users(store, "anna", "bruno", "carla")
    tour = make_tournament(store.engine, Tournament("tour0009", "Test", "faecher/standard/300", 0, 10**13))
    for user in ("anna", "bruno", "carla"):
        join_tournament(store.engine, "tour0009", user)
    play(store, "tour0009", "farm-0001", "anna", "bruno", 0, tried=(True, False))  # bruno gives up at once
    play(store, "tour0009", "farm-0002", "bruno", "anna", 1, tried=(False, True))
    lines = {row["name"]: row for row in standings(store.engine, tour)}
    assert lines["Anna"]["points"] == 0 and lines["Bruno"]["points"] == 0
    assert [d["result"] for d in lines["Anna"]["duels"]] == ["v", "v"]
    assert [d["result"] for d in lines["Bruno"]["duels"]] == ["l", "l"]
    play(store, "tour0009", "real-0001", "anna", "carla", 0)
    play(store, "tour0009", "real-0002", "carla", "anna", 1)  # anna's second real win: on fire
    play(store, "tour0009", "farm-0003", "anna", "bruno", 0, tried=(True, False))  # void: the fire stays
    play(store, "tour0009", "real-0003", "anna", "carla", 0)  # a win on fire: 4
    lines = {row["name"]: row for row in standings(store.engine, tour)}
    assert [d["points"] for d in lines["Anna"]["duels"]] == [0, 0, 2, 2, 0, 4] and lines["Anna"]["fire"]
    play(store, "tour0009", "quit-0001", "anna", "carla", 1, tried=(False, True))  # anna gives up at once
    lines = {row["name"]: row for row in standings(store.engine, tour)}
    assert lines["Anna"]["duels"][-1]["result"] == "l" and not lines["Anna"]["fire"]
    assert lines["Carla"]["duels"][-1]["result"] == "v" and lines["Carla"]["points"] == 0
    # bruno gives up before carla had the time to make an attempt of her own: her win is void, not a loss
    play(store, "tour0009", "both-0001", "carla", "bruno", 0, tried=(False, False))
    lines = {row["name"]: row for row in standings(store.engine, tour)}
    assert lines["Carla"]["duels"][-1]["result"] == "v" and lines["Bruno"]["duels"][-1]["result"] == "l"


def test_a_players_tournament_is_checked_before_it_is_made() -> None:
    now = 1_800_000_000_000
    made = new_tournament("  Evening   cup ", "faecher/standard/300", 15, 0, now, "anna")
    assert (made.name, made.starts_ms, made.ends_ms, made.slot) == ("Evening cup", now, now + 15 * 60_000, None)
    assert check_password("sesame") == "sesame" and check_password("") == ""
    with pytest.raises(BadInputError):
        check_password("x" * 101)
    assert new_tournament("Cup", "reloaded/standard/600", 120, now + 3_600_000, now, "anna").password is None
    for name, fmt, minutes, start in (("Cup", "reloaded/standard/300", 14, 0), ("Cup", "reloaded/standard/300", 121, 0),
                                      ("Cu", "reloaded/standard/300", 30, 0), ("Cup", "nope/standard/300", 30, 0),
                                      ("Cup", "reloaded/standard/301", 30, 0),
                                      ("Cup", "reloaded/standard/300", 30, now + 8 * 86_400_000)):
        with pytest.raises(BadInputError):
            new_tournament(name, fmt, minutes, start, now, "anna")
    hours = hourly(now // 3_600_000 * 3_600_000)
    assert {t.format for t in hours} == {"reloaded/standard/300", "faecher/standard/300", "teppich/waste/300"}
    assert all(t.slot and t.ends_ms - t.starts_ms == 57 * 60_000 for t in hours)


def test_the_list_shows_what_is_to_come_and_what_ended_with_players(store: Store) -> None:
    add_users(store, "anna")
    hour = 3_600_000
    for n, (start, end) in enumerate([(0, hour), (hour, 2 * hour), (3 * hour, 4 * hour), (5 * hour, 6 * hour)]):
        make_tournament(store.engine, Tournament(f"list{n:04d}", f"T{n}", "reloaded/standard/300", start, end))
    join_tournament(store.engine, "list0001", "anna")
    listed = list_tournaments(store.engine, 3 * hour + 1)
    # going on and to come, soonest first; of those ended, the one anyone joined (the first had nobody)
    assert [(t["id"], t["state"], t["players"]) for t in listed] == [
        ("list0002", "on", 0), ("list0003", "soon", 0), ("list0001", "over", 1)]
    assert all("joined" not in t for t in listed)  # signed out: nobody's
    # for a signed-in player: the ones they joined
    assert [(t["id"], t["joined"]) for t in list_tournaments(store.engine, 3 * hour + 1, user_id="anna")] == [
        ("list0002", False), ("list0003", False), ("list0001", True)]


def test_a_password_is_kept_as_an_argon2_hash_and_asked_for_at_joining(app: Any) -> None:
    """Through the real app: the form makes the tournament, its password is hashed by the accounts'
    bounded hashing (argon2id, never the password itself); a wrong one is refused with the reason and
    joins nobody, the right one joins."""
    anna = person(app, "anna")
    made = post(anna, "/api/tournaments", name="Friends' cup", format="faecher/standard/300", minutes="30",
                start_ms="0", password="sesame")
    assert made.status_code == 200, made.text
    tour_id = made.json()["id"]
    engine = app.state.store.engine
    kept = find_tournament(engine, tour_id)
    assert kept is not None and kept.password is not None
    assert kept.password.startswith("$argon2id$") and "sesame" not in kept.password
    too_long = post(anna, "/api/tournaments", name="Cup", format="faecher/standard/300", minutes="30",
                    start_ms="0", password="x" * 101)
    assert too_long.status_code == 400 and too_long.json()["error"] == "long_password"

    page = Page(person(app, "bruno"), "tp")
    page.send("tour", {"id": tour_id})
    assert page.until(lambda m: m["t"] == "tour")["d"]["joined"] is False
    page.send("tjoin", {"id": tour_id, "password": "Sesame"})
    # the answer is an error (standings the page is sent meanwhile must not show it joined)
    refused = page.until(lambda m: m["t"] == "err" or (m["t"] == "tour" and m["d"]["joined"]))
    assert refused["t"] == "err" and refused["d"]["code"] == "bad_password"
    assert players_of(engine, tour_id) == {}
    page.send("tjoin", {"id": tour_id, "password": "sesame"})
    assert page.until(lambda m: m["t"] == "err" or (m["t"] == "tour" and m["d"]["joined"]))["t"] == "tour"
    assert len(players_of(engine, tour_id)) == 1
    page.close()
    # the list marks the tournaments the asker joined: Bruno's, not Anna's (who made it but is not in it)
    for who, joined in ((page.client, True), (anna, False)):
        listed = who.get("/api/tournaments").json()["tournaments"]
        assert next(t for t in listed if t["id"] == tour_id)["joined"] is joined


# -- hostile load: the list, making tournaments, guessing passwords -------------------------------------


def test_the_sites_tournaments_come_first_in_the_list(store: Store) -> None:
    """60 tournaments of players that start sooner do not push the site's hourly ones off the list."""
    add_users(store, "spam")
    hour = 3_600_000
    now = 10 * hour + 60_000
    for tournament in [*hourly(10 * hour), *hourly(11 * hour)]:
        make_tournament(store.engine, tournament)
    for n in range(60):
        make_tournament(store.engine, Tournament(f"spam{n:04d}", f"Spam {n}", "reloaded/standard/300", now - 1000 + n,
                                                 now + hour, created_by="spam"))
    listed = list_tournaments(store.engine, now)
    assert len(listed) == 50
    assert [t["scheduled"] for t in listed[:6]] == [True] * 6  # all six of the site's, first, soonest first
    assert [t["starts_ms"] for t in listed[:6]] == [10 * hour] * 3 + [11 * hour] * 3
    assert not any(t["scheduled"] for t in listed[6:])


def make_form(who: Any, name: str = "Cup", **fields: str) -> Any:
    form = {"name": name, "format": "faecher/standard/300", "minutes": "15", "start_ms": "0", **fields}
    return post(who, "/api/tournaments", **form)


def test_each_mistake_of_the_form_has_its_own_answer(app: Any) -> None:
    """Not one message for every mistake ("the length and the start are whole numbers"): each its code,
    which the page says in its language, and a sentence."""
    anna = person(app, "anna")
    cases = {"bad_name": {"name": "C"}, "bad_format": {"format": "nope/standard/300"},
             "bad_minutes": {"minutes": "500"}, "bad_start": {"start_ms": str(10**15)},
             "long_password": {"password": "x" * 101}}
    for code, fields in cases.items():
        answer = make_form(anna, **fields)
        assert answer.status_code == 400 and answer.json()["error"] == code, (code, answer.text)
        assert "whole numbers" not in answer.json()["msg"]
    for fields in ({"minutes": "half an hour"}, {"minutes": ""}):
        answer = make_form(anna, **fields)
        assert answer.status_code == 400 and answer.json()["error"] == "bad_minutes", answer.text
    answer = make_form(anna, start_ms="tomorrow")
    assert answer.status_code == 400 and answer.json()["error"] == "bad_start", answer.text
    assert make_form(anna).status_code == 200


TOUR_ERRORS = ("bad_name", "bad_format", "bad_minutes", "bad_start", "long_password", "too_many_open",
               "too_many_tournaments", "too_many_guesses", "busy")


def test_the_page_says_each_mistake_in_three_languages() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "src/patience/web/js/tour-text.js").read_text(encoding="utf-8")
    english, rest = text.split("\n  de: {")
    german, italian = rest.split("\n  it: {")
    for block in (english, german, italian):
        errors = block.split("err: {")[1].split("},")[0]
        for code in TOUR_ERRORS:
            assert f"{code}:" in errors, code


def test_making_tournaments_is_limited_per_account_and_per_address(app: Any, fake_time: Any) -> None:
    """At most 3 open tournaments (to come or going on) per account, at most 10 made a day per account
    and 20 per address."""
    anna = person(app, "anna", "127.0.0.7")
    answers = [make_form(anna, f"Cup {n}").status_code for n in range(4)]
    assert answers == [200, 200, 200, 429]
    assert make_form(anna, "Cup 4").json()["error"] == "too_many_open"
    made = 3
    while made < 10:
        fake_time.t += 16 * 60  # her tournaments are over
        for _ in range(min(3, 10 - made)):
            assert make_form(anna, f"Cup {made}").status_code == 200
            made += 1
    fake_time.t += 16 * 60
    refused = make_form(anna, "Cup 11")
    assert refused.status_code == 429 and refused.json()["error"] == "too_many_tournaments"
    assert int(refused.headers["retry-after"]) > 0
    # other accounts of the same address: 20 a day from it in all
    for n, login in enumerate(("bruno", "carla", "dario", "elsa")):
        who = person(app, login, "127.0.0.7")
        for _ in range(3):
            answer = make_form(who, f"{login} cup")
            if made < 20:
                assert answer.status_code == 200, (n, answer.text)
                made += 1
            else:
                assert answer.status_code == 429 and answer.json()["error"] == "too_many_tournaments"
        fake_time.t += 16 * 60
    # from elsewhere: free to make one
    far = TestClient(app, client=("203.0.113.9", 40000))
    far.portal = app.state.test_portal
    assert post(far, "/account/signup", login="faraway", name="Far", password=PASSWORD).status_code == 200
    assert make_form(far, "Far cup").status_code == 200


def guess(page: Page, tournament_id: str, password: str) -> str:
    """Join with ``password``: ``joined``, or the error's code."""
    page.send("tjoin", {"id": tournament_id, "password": password})
    got = page.until(lambda m: m["t"] == "err" or (m["t"] == "tour" and m["d"]["id"] == tournament_id
                                                    and m["d"]["joined"]))
    return "joined" if got["t"] == "tour" else str(got["d"]["code"])


@pytest.mark.slow
def test_password_guesses_are_limited_per_account_and_per_tournament(app: Any) -> None:
    """An account tries a tournament's password at most 5 times in 10 minutes, and 10 times over every
    tournament; the tries after an account's first at one tournament are 30 in 10 minutes for all
    accounts together. Nobody's first try is refused for another's guesses: the right password joins."""
    anna = person(app, "anna")
    tours = [make_form(anna, f"Locked {n}", password="sesame").json()["id"] for n in range(3)]
    bruno = person(app, "bruno")
    tours += [make_form(bruno, f"Locked {n}", password="sesame").json()["id"] for n in range(3, 6)]
    carla = person(app, "carla")
    tours += [make_form(carla, f"Locked {n}", password="sesame").json()["id"] for n in range(6, 8)]
    mallory = Page(person(app, "mallory"), "pm")
    first = [guess(mallory, tours[0], f"guess{n}") for n in range(7)]
    assert first == ["bad_password"] * 5 + ["too_many_guesses"] * 2
    others = [guess(mallory, tour, "guess") for tour in tours[1:7]]
    assert others == ["bad_password"] * 5 + ["too_many_guesses"]  # 10 in all
    # the owner's friend, with the password, is not held back by mallory's guesses
    friend = Page(person(app, "friend"), "pf")
    assert guess(friend, tours[0], "sesame") == "joined"
    # eight accounts guess at one tournament: their tries after the first share 30
    answers = []
    for n in range(8):
        page = Page(person(app, f"guesser{n}"), f"pg{n}")
        answers += [guess(page, tours[7], f"guess{n}-{k}") for k in range(5)]
        page.close()
    assert answers.count("bad_password") == 8 + 30 and answers.count("too_many_guesses") == 2
    assert guess(Page(person(app, "dario"), "pd"), tours[7], "sesame") == "joined"  # a first try: in


@pytest.mark.slow
def test_password_guesses_are_limited_per_address_before_any_hash(app: Any) -> None:
    """The accounts of one address try tournament passwords 20 times in 10 minutes together (each hashed);
    every further try, whichever account or tournament, is refused before any hash is queued; a player
    from another address joins with the password."""
    owner = person(app, "owner")
    tours = [make_form(owner, f"Locked {n}", password="sesame").json()["id"] for n in range(3)]
    hashing = app.state.arena.hashing
    hashed: list[str] = []

    class Counted(PasswordHasher):  # the same argon2id, counting the passwords it checks
        def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
            hashed.append(str(password))
            return super().verify(hash, password)

    real = hashing.hasher
    hashing.hasher = Counted.from_parameters(real._parameters)
    try:
        answers = []
        for n in range(5):  # five accounts of one address, each within its own budgets
            page = Page(person(app, f"guesser{n}", "127.0.9.9"), f"pg{n}")
            answers += [guess(page, tours[k % 3], f"guess{n}-{k}") for k in range(5)]
            page.close()
        assert answers == ["bad_password"] * 20 + ["too_many_guesses"] * 5
        assert len(hashed) == 20  # the refused tries cost no hash
        assert guess(Page(person(app, "friend"), "pf"), tours[0], "sesame") == "joined"
    finally:
        hashing.hasher = real


@pytest.mark.slow
def test_a_refused_guessers_next_tries_cost_no_database_read(app: Any) -> None:
    """Once refused, an account's next tries at the tournament are answered from the process's memory:
    not a statement reaches the database (not even the look for a fair-play mark), nor a hash."""
    owner = person(app, "owner")
    tour = make_form(owner, "Locked", password="sesame").json()["id"]
    mallory = Page(person(app, "mallory"), "pm")
    assert [guess(mallory, tour, f"g{n}") for n in range(6)] == ["bad_password"] * 5 + ["too_many_guesses"]
    statements: list[str] = []
    # the process's own clock reads the database whoever asks, several times a second (a loaded machine makes
    # the guesses take long enough to meet it): the pairing, the fair-play queue, Play now's sweeps, the
    # log's checkpoint. A statement made by one of them is not the guesses'.
    clock = {f.__code__ for f in (free_players, running_tournaments, fairplay_storage.pending, apart_storage.expire,
                                  apart_storage.ready, apart_storage.stale_games, Store.checkpoint)}

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        frame = sys._getframe()
        while frame is not None and frame.f_code not in clock:
            frame = frame.f_back
        if frame is None:
            statements.append(statement)

    engine = app.state.store.engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        assert [guess(mallory, tour, f"h{n}") for n in range(20)] == ["too_many_guesses"] * 20
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert statements == []
