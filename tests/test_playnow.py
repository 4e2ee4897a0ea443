"""Play now on one process (SQLite): a host plays a secret deal, a challenger plays the same deal later,
and the match completes once, rated, with both games replayable; the choice of the match to take
(never one's own, nor one from the same address or browser, nor the last opponent's); one taker per
match; expiry; and nothing of the key, the other score or a hidden card before the end."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from helpers import FakeTime, at_a_scripts_pace, mentioned_cards
from patience.duel import PENDING_DAYS, Format, Pending, take_pending, verify_commitment, verify_match
from patience.rng import is_deal_key
from patience.server.arena.apart import PENDING_MOST
from patience.server.storage import apart as db
from patience.server.storage.roles import closed_name
from patience.server.storage.store import SavedGame
from patience.session import ManualClock, Session
from test_server_app import reply_to, send
from test_server_duel import PASSWORD, csrf, make_app, post, running

FORMAT = "reloaded/standard/300"


@pytest.fixture
def app(tmp_path: Path, fake_time: FakeTime) -> Any:
    with running(make_app(tmp_path, fake_time)) as application:
        at_a_scripts_pace(application)
        yield application


def player(app: Any, login: str, address: str) -> TestClient:
    """A browser of its own at ``address`` with an account of its own, signed in."""
    client = TestClient(app, client=(address, 50000))
    client.portal = app.state.test_portal
    answer = post(client, "/account/signup", login=login, name=login.title(), password=PASSWORD)
    assert answer.status_code == 200, answer.text
    return client


def play_now(client: TestClient, fmt: str = FORMAT) -> Any:
    return client.post(f"/api/playnow/{fmt}", data={"csrf": csrf(client)}, headers={"accept": "application/json"})


def join(ws: Any, game_id: str, cid: str = "page") -> dict[str, Any]:
    send(ws, "join", {"id": game_id, "v": 0, "cid": cid})
    msg = ws.receive_json()
    assert msg["t"] == "game", msg
    return msg["d"]  # type: ignore[no-any-return]


def play_and_give_up(client: TestClient, game_id: str, draws: int = 3) -> tuple[dict[str, Any], list[Any]]:
    """Join the game, draw a few cards, give up; the first table and every message received."""
    seen: list[Any] = []
    with client.websocket_connect("/ws") as ws:
        first = join(ws, game_id)
        seen.append(first)
        for ack in range(1, draws + 1):
            send(ws, "stock", {"ack": ack})
            seen.append(reply_to(ws, ack))
        send(ws, "giveup", {"ack": draws + 1})
        seen.append(reply_to(ws, draws + 1))
    return first, seen


def settle(app: Any) -> None:
    """Run Play now's sweep once on the app's loop (what every process does every few seconds)."""
    app.state.test_portal.call(app.state.arena.playnow.sweep)


def test_a_host_and_a_later_challenger_play_one_deal_and_the_match_completes_once(app: Any) -> None:
    ada, bob = player(app, "ada", "10.0.0.1"), player(app, "bob", "10.0.0.2")
    hosted = play_now(ada)
    assert hosted.status_code == 200, hosted.text
    host = hosted.json()
    assert host["role"] == "host" and host["opponent"] is None and host["format"] == FORMAT
    assert app.state.store.load_game(host["game_id"]) is not None  # written before any card is shown
    ada_first, ada_seen = play_and_give_up(ada, host["game_id"])
    assert ada_first["seed"] == f"now:{host['id']}" and ada_first["options"]["time_limit"] == 300

    taken = play_now(bob)
    assert taken.status_code == 200, taken.text
    challenger = taken.json()
    assert challenger["role"] == "challenger" and challenger["id"] == host["id"]
    assert challenger["commitment"] == host["commitment"]
    assert challenger["opponent"] == {"id": ada.get("/api/me").json()["user"]["id"], "name": "Ada", "rating": 1500}
    with bob.websocket_connect("/ws") as ws:  # the same first table as the host's, not the host's figures
        first = join(ws, challenger["game_id"])
        assert first["table"] == ada_first["table"] and first["status"]["moves"] == 0
        send(ws, "hint", {})
        refused = ws.receive_json()
        assert refused["t"] == "err" and refused["d"]["msg"] == "hints are off in Play now"
    mine = bob.get("/api/playnow").json()["games"][0]
    assert mine["state"] == "taken" and mine["theirs"] is None and mine["result"] is None and "seed" not in mine
    _, bob_seen = play_and_give_up(bob, challenger["game_id"], draws=5)
    settle(app)

    for client in (ada, bob):
        shown = client.get("/api/playnow").json()
        (game,) = shown["games"]
        assert game["state"] == "done" and shown["unseen"] == 1
        assert game["result"]["winner"] in ("you", "them", None)
        assert (game["mine"]["outcome"], game["theirs"]["outcome"]) == ("given_up", "given_up")
        assert verify_commitment(game["commitment"], "reloaded", Format.from_key(FORMAT).options(), game["seed"], "")
        seen = client.post("/api/playnow/seen", data={"csrf": csrf(client)}, headers={"accept": "application/json"})
        assert seen.status_code == 200 and client.get("/api/playnow").json()["unseen"] == 0
    match = ada.get(f"/api/matches/{host['id']}").json()
    assert match["state"] == "over" and match["record"]["apart"] is True
    verify_match(match["record"])
    assert [len(g["actions"]) for g in match["record"]["games"]] == [4, 6]
    profile = ada.get(f"/api/profile/{match['players'][0]['id']}").json()
    assert profile["duels"]["reloaded"]["played"] == 1 and profile["ratings"]["reloaded"]["matches"] == 1
    assert profile["duels"]["reloaded"]["apart"] == 1 and profile["recent"][0]["apart"] is True
    assert ada.get("/api/matches").json()["matches"][0]["apart"] is True
    assert app.state.test_portal.call(app.state.arena.playnow.complete, host["id"]) is False  # once only

    # before the end, nothing either player was sent holds the key
    for message in ada_seen + bob_seen:
        assert match["record"]["seed"] not in json.dumps(message)


def test_play_now_never_deals_ones_own_nor_a_neighbours_nor_the_last_opponents_match(app: Any) -> None:
    ada = player(app, "ada", "10.0.0.1")
    first = play_now(ada).json()
    play_and_give_up(ada, first["game_id"], draws=0)
    second = play_now(ada).json()
    assert second["role"] == "host"  # not her own
    play_and_give_up(ada, second["game_id"], draws=0)
    # another account that signed in from Ada's browser (at another address)
    shared = TestClient(app, client=("10.0.0.9", 50000), cookies=ada.cookies)
    shared.portal = app.state.test_portal
    assert post(shared, "/account/signout").status_code == 200
    assert post(shared, "/account/signup", login="kin", name="Kin", password=PASSWORD).status_code == 200
    kin = play_now(shared).json()
    assert kin["role"] == "host"
    play_and_give_up(shared, kin["game_id"], draws=0)
    twin = player(app, "twin", "10.0.0.1")  # another browser at Ada's address: takes Kin's, never Ada's
    taken = play_now(twin).json()
    assert (taken["role"], taken["id"]) == ("challenger", kin["id"])
    play_and_give_up(twin, taken["game_id"], draws=0)
    settle(app)
    # Bob takes one of Ada's; then not her other one: she was his last opponent
    bob = player(app, "bob", "10.0.0.2")
    met = play_now(bob).json()
    assert met["role"] == "challenger" and met["id"] in (first["id"], second["id"])
    play_and_give_up(bob, met["game_id"], draws=0)
    assert play_now(bob).json()["role"] == "host"
    carl = player(app, "carl", "10.0.0.3")  # Ada's other match is there for anyone else
    other = ({first["id"], second["id"]} - {met["id"]}).pop()
    carl_id = carl.get("/api/me").json()["user"]["id"]
    offered = db.open_games(app.state.store.engine, FORMAT, 1500, carl_id, db.net_of("10.0.0.3"), "carl's", 0)
    assert other in [p.id for p in offered]


def test_a_player_hosts_a_few_matches_of_a_pool_at_most_and_one_game_at_a_time(app: Any) -> None:
    ada = player(app, "ada", "10.0.0.1")
    first = play_now(ada).json()
    again = play_now(ada).json()  # a reload: the game begun goes on, no second one
    assert (again["game_id"], again["again"]) == (first["game_id"], True)
    elsewhere = TestClient(app, client=("10.0.0.1", 50000))
    elsewhere.portal = app.state.test_portal
    assert post(elsewhere, "/account/signin", login="ada", password=PASSWORD).status_code == 200
    refused = play_now(elsewhere)
    assert refused.status_code == 409 and refused.json()["error"] == "elsewhere"
    play_and_give_up(ada, first["game_id"], draws=0)
    for _ in range(PENDING_MOST - 1):
        play_and_give_up(ada, play_now(ada).json()["game_id"], draws=0)
    too_many = play_now(ada)
    assert too_many.status_code == 409 and too_many.json()["error"] == "too_many"
    assert play_now(ada, "reloaded/standard/600").json()["role"] == "host"  # another pool is another count


def test_bad_requests_change_nothing(app: Any) -> None:
    visitor = TestClient(app, client=("10.0.0.5", 50000))
    visitor.portal = app.state.test_portal
    assert play_now(visitor).status_code == 401
    assert visitor.get("/api/playnow").status_code == 401
    ada = player(app, "ada", "10.0.0.1")
    assert play_now(ada, "reloaded/standard/301").status_code == 400
    assert play_now(ada, "chess/standard/300").status_code == 400
    stale = ada.post(f"/api/playnow/{FORMAT}", data={"csrf": "x"}, headers={"accept": "application/json"})
    assert stale.status_code == 403
    assert ada.get("/api/playnow").json() == {"games": [], "unseen": 0}


def test_two_challengers_at_one_instant_take_one_match_once(app: Any) -> None:
    ada = player(app, "ada", "10.0.0.1")
    hosted = play_now(ada).json()
    play_and_give_up(ada, hosted["game_id"], draws=0)
    takers = [player(app, f"taker{n}", f"10.0.1.{n}") for n in range(4)]
    answers: list[Any] = []
    threads = [threading.Thread(target=lambda c=c: answers.append(play_now(c).json())) for c in takers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # ada's match is taken by exactly one of them; the others host matches of their own, and one of
    # those may already be taken by a taker who came a moment later (a match is open once written)
    taken = [a["id"] for a in answers if a["role"] == "challenger"]
    hosted_now = [a["id"] for a in answers if a["role"] == "host"]
    assert taken.count(hosted["id"]) == 1, answers
    assert len(set(taken)) == len(taken) and set(taken) - {hosted["id"]} <= set(hosted_now), answers
    assert len(set(hosted_now)) == len(hosted_now) == 4 - len(taken), answers
    # and in the database: a second take of a taken match writes nothing, not even the game
    store = app.state.store
    session = Session("reloaded", "0" * 64, Format.from_key(FORMAT).options(), clock=ManualClock())
    extra = SavedGame("extra-game", "b" * 20, "reloaded", "standard", "now:x", session.record(), 0, 0, 0, None)
    assert db.take(store.engine, hosted["id"], takers[0].get("/api/me").json()["user"]["id"], extra, 1) is False
    assert store.load_game("extra-game") is None


def test_a_match_nobody_takes_expires_after_seven_days_without_a_rating_change(app: Any, fake_time: FakeTime) -> None:
    ada = player(app, "ada", "10.0.0.1")
    hosted = play_now(ada).json()
    play_and_give_up(ada, hosted["game_id"], draws=1)
    fake_time.t += PENDING_DAYS * 86400 - 60
    settle(app)
    assert ada.get("/api/playnow").json()["games"][0]["state"] == "open"
    fake_time.t += 120
    settle(app)
    shown = ada.get("/api/playnow").json()
    (game,) = shown["games"]
    assert game["state"] == "expired" and is_deal_key(game["seed"]) and shown["unseen"] == 1
    assert verify_commitment(game["commitment"], "reloaded", Format.from_key(FORMAT).options(), game["seed"], "")
    bob = player(app, "bob", "10.0.0.2")
    assert play_now(bob).json()["role"] == "host"  # an expired match is not dealt again
    profile = ada.get(f"/api/profile/{ada.get('/api/me').json()['user']['id']}").json()
    assert profile["ratings"] == {} and profile["duels"] == {}


def test_a_game_left_standing_runs_to_its_time_limit_and_the_match_completes(app: Any, fake_time: FakeTime) -> None:
    ada, bob = player(app, "ada", "10.0.0.1"), player(app, "bob", "10.0.0.2")
    hosted = play_now(ada).json()
    play_and_give_up(ada, hosted["game_id"], draws=2)
    taken = play_now(bob).json()
    with bob.websocket_connect("/ws") as ws:  # Bob draws once and leaves; then his process "stops"
        join(ws, taken["game_id"])
        send(ws, "stock", {"ack": 1})
        reply_to(ws, 1)
    hub = app.state.hub
    app.state.test_portal.call(hub.save)
    app.state.test_portal.call(hub._let_go, taken["game_id"], "stopped")  # as if its process went away
    assert taken["game_id"] not in hub.games
    fake_time.t += 300 + 130  # past the time limit and the grace: the sweep brings the game back
    settle(app)
    assert taken["game_id"] in hub.games
    fake_time.t += 301  # its clock runs on from where it stood, to the limit
    app.state.test_portal.call(hub.tick)
    app.state.test_portal.call(hub.save)
    settle(app)
    (game,) = bob.get("/api/playnow").json()["games"]
    assert game["state"] == "done" and game["mine"]["outcome"] == "time_out"


def test_der_faecher_apart_counts_the_pool_at_the_time_limit(app: Any) -> None:
    fmt = "faecher/standard/300"
    ada, bob = player(app, "ada", "10.0.0.1"), player(app, "bob", "10.0.0.2")
    hosted = play_now(ada, fmt).json()
    play_and_give_up(ada, hosted["game_id"], draws=0)
    taken = play_now(bob, fmt).json()
    assert taken["role"] == "challenger"
    play_and_give_up(bob, taken["game_id"], draws=0)
    settle(app)
    match = ada.get(f"/api/matches/{hosted['id']}").json()
    assert match["state"] == "over"
    result = verify_match(match["record"])
    assert all(g["end"]["match_t"] == 300_000 for g in match["record"]["games"])
    shown = {g["id"]: g for g in ada.get("/api/playnow").json()["games"]}[hosted["id"]]
    assert (shown["mine"]["score"], shown["theirs"]["score"]) == result.scores


def test_nothing_a_player_or_visitor_reads_before_the_end_tells_the_deal_or_the_other_score(app: Any) -> None:
    ada, bob = player(app, "ada", "10.0.0.1"), player(app, "bob", "10.0.0.2")
    hosted = play_now(ada).json()
    _, ada_seen = play_and_give_up(ada, hosted["game_id"], draws=8)
    taken = play_now(bob).json()
    store = app.state.store
    key = db.find_apart(store.engine, hosted["id"]).deal
    ada_game = store.load_game(hosted["game_id"])
    with bob.websocket_connect("/ws") as ws:
        first = join(ws, taken["game_id"])
        read = [json.dumps(taken), json.dumps(first), bob.get("/api/playnow").text, ada.get("/api/playnow").text,
                bob.get(f"/api/matches/{hosted['id']}").text, TestClient(app).get("/api/matches").text,
                bob.get(f"/api/profile/{ada.get('/api/me').json()['user']['id']}").text]
    for text in read:
        assert key not in text
    assert json.loads(read[6])["solo"] == {}  # the host's game is no solo game in her figures
    bob_list = json.loads(read[2])["games"][0]
    assert bob_list["theirs"] is None and str(ada_game.score) not in json.dumps(bob_list["mine"])
    # the challenger's first table shows the face-up cards only: none of the host's later draws
    shown_cards = mentioned_cards(first["table"])
    drawn_by_host = mentioned_cards([m for m in ada_seen[1:]])
    assert drawn_by_host - shown_cards, "the host's draws show cards the challenger's table does not"


def test_take_pending_is_the_closest_in_reach_and_never_an_excluded_or_old_one() -> None:
    day = 86400.0
    waiting = [Pending("old", "h1", 1500, 0), Pending("near", "h2", 1520, 7 * day - 100),
               Pending("far", "h3", 2500, 7 * day - 10), Pending("mine", "me", 1500, 7 * day - 5)]
    assert [p.id for p in take_pending(1500, waiting, 7 * day, exclude={"me"})] == ["near"]


def test_your_games_name_a_closed_opponent_by_the_mark_the_page_writes_in_its_language(app: Any) -> None:
    ada, leaver = player(app, "ada", "10.0.0.1"), player(app, "quitterwho", "10.0.0.2")
    host = play_now(ada).json()
    play_and_give_up(ada, host["game_id"])
    taken = play_now(leaver).json()
    assert taken["id"] == host["id"]
    play_and_give_up(leaver, taken["game_id"])
    settle(app)
    leaver_id = leaver.get("/api/me").json()["user"]["id"]
    assert post(leaver, "/account/close", password=PASSWORD).status_code == 200
    answer = ada.get("/api/playnow")
    (game,) = answer.json()["games"]
    assert game["state"] == "done" and game["opponent"] == {"id": leaver_id, "name": closed_name(leaver_id)}
    assert "Closed account" not in answer.text and "quitterwho" not in answer.text.lower()  # nor its login
