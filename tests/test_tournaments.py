"""Arena tournaments: the scoring and pairing rules (with hypothesis), and the tables on SQLite and
PostgreSQL: a scheduled slot made once, a pair claimed once when processes race, a player free again
when their duel is over, and the standings read from the duels' results."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import insert

import test_server_duel
from patience.duel import Format, Match, Player
from patience.errors import BadInputError, IllegalMoveError
from patience.rng import new_deal_key
from patience.server.arena.tournaments import check_password, hourly, new_tournament
from patience.server.storage.league import finish_match, insert_match
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
    standings,
)
from patience.session import ManualClock
from patience.tournament import Entrant, check_minutes, duel_points, on_fire, pair_free
from test_server_duel import Page, person, post

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


def play(store: Store, tournament: str, match_id: str, a: str, b: str, winner: int | None) -> None:
    """A duel of the tournament from its claim to its end; ``winner`` 0 (a), 1 (b) or None (a draw)."""
    now = int(time.time() * 1000)
    free_players(store.engine, tournament, now)  # as the pairing does: the last duels' claims go
    assert claim_pair(store.engine, tournament, a, b, match_id, now)
    clock = ManualClock()
    match = Match(match_id, Format("faecher", None, 300), new_deal_key(), clock=clock,
                  players=(Player(a, a.title()), Player(b, b.title())))
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
    # equal points, wins and rating (their last duel, a draw, started from 1500 each): one rank
    assert [(row["rank"], row["points"], row["rating"]) for row in table[1:]] == [(2, 1, 1500), (2, 1, 1500)]
    anna = table[0]
    assert [d["points"] for d in anna["duels"]] == [2, 2, 4] and anna["fire"]
    assert [d["double"] for d in anna["duels"]] == [False, False, True]  # the third: a win on fire
    assert [d["opponent"] for d in anna["duels"]] == ["Bruno", "Carla", "Bruno"]
    assert all(row["playing"] is None for row in table)
    carla = next(row for row in table if row["name"] == "Carla")
    assert carla["paused"] and [d["result"] for d in carla["duels"]] == ["l", "d"]
    assert anna["rating"] > 1500  # the rating of the game, as the duels left it
    join_tournament(store.engine, "tour0002", "carla")  # back from the pause
    assert "carla" in {u for u, _ in free_players(store.engine, "tour0002", now)}
    # on a player's profile: their place and points; a tournament not begun yet is not there
    make_tournament(store.engine, Tournament("tour0003", "Later", "faecher/standard/300", 10**13, 10**13 + 1))
    join_tournament(store.engine, "tour0003", "carla")
    assert [(t["id"], t["state"], t["rank"], t["players"], t["points"])
            for t in player_tournaments(store.engine, "carla", now)] == [("tour0002", "on", 2, 3, 1)]


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
    assert too_long.status_code == 400 and too_long.json()["error"] == "bad_tournament"

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
