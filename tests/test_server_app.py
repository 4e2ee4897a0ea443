"""The web app through Starlette's test client: pages, the HTTP API and play over the websocket.

The server is the only authority: these tests send intents the way the browser does and check
the answers against the engine, including, over every message of whole games, that no card
the player has not seen ever leaves the server. Tests of what is stored (statistics, a restart)
run on SQLite and on PostgreSQL (``stored_client``, ``database_url``).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from starlette.websockets import WebSocketDisconnect

from helpers import FakeTime, TestClient, at_a_scripts_pace, mentioned_cards
from patience.games import DRAW, REDEAL, get_game
from patience.server import create_app
from patience.server.identity import COOKIE
from patience.server.live import OUTBOX_LIMIT, Connection
from patience.server.solo.hub import Hub, LiveGame
from patience.server.web.pages import WEB_DIR
from patience.solve import winnable


@pytest.fixture
def client(tmp_path: Path, fake_time: FakeTime) -> Iterator[TestClient]:
    app = create_app(tmp_path, now=fake_time, tick_seconds=0.02, save_seconds=0.05)
    with TestClient(app) as c:
        c.get("/")  # the browser's cookie, as a page load would set it
        yield c


@pytest.fixture
def stored_client(database_url: str, fake_time: FakeTime) -> Iterator[TestClient]:
    """A client of an app storing in a fresh database of each backend."""
    app = create_app(database_url=database_url, now=fake_time, tick_seconds=0.02, save_seconds=0.05)
    with TestClient(app) as c:
        c.get("/")
        yield c


def hub_of(client: TestClient) -> Hub:
    return client.app.state.hub  # type: ignore[attr-defined,no-any-return]


def send(ws: Any, t: str, d: dict[str, Any] | None = None) -> None:
    ws.send_text(json.dumps({"t": t, "d": d or {}}))


def recv(ws: Any) -> dict[str, Any]:
    return ws.receive_json()  # type: ignore[no-any-return]


def new_game(ws: Any, game: str = "reloaded", **data: Any) -> dict[str, Any]:
    send(ws, "new", {"game": game, "cid": "page1", **data})
    msg = recv(ws)
    assert msg["t"] == "game", msg
    return msg["d"]  # type: ignore[no-any-return]


def reply_to(ws: Any, ack: int) -> dict[str, Any]:
    """Read until the answer to intent ``ack`` (events of the clock may come first)."""
    for _ in range(100):
        msg = recv(ws)
        if msg["d"].get("ack") == ack:
            return msg
    raise AssertionError(f"no answer to ack {ack}")


def live(client: TestClient, game_id: str) -> LiveGame:
    return hub_of(client).games[game_id]


# -- pages and the HTTP API ------------------------------------------------------------------------


def test_pages_set_a_private_cookie_once(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as c:
        first = c.get("/")
        assert first.status_code == 200 and first.headers["content-type"].startswith("text/html")
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
        assert "default-src 'self'" in first.headers["content-security-policy"]
        again = c.get("/play?game=reloaded")
        assert again.status_code == 200 and "set-cookie" not in again.headers
        assert '<main id="board"' in again.text


@pytest.mark.parametrize(("path", "title", "script", "hero"), [
    ("/duel", "Duel", "duel", False), ("/match?id=x", "Match", "replay", False),
    ("/account", "Account", "account", True), ("/profile", "Player", "profile", True),
    ("/leaderboard", "Leaderboard", "leaderboard", True), ("/matches", "Matches", "matches", True),
])
def test_the_arena_pages_share_one_head_and_header(client: TestClient, path: str, title: str, script: str,
                                                   hero: bool) -> None:
    page = client.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    text = page.text
    assert text.startswith("<!doctype html>") and text.rstrip().endswith("</html>")
    assert text.count("<head>") == 1 and text.count("<body") == 1 and text.count("</body>") == 1
    assert re.search(f'<title data-t-doc="[a-z.]+">{title} · Patience Arena</title>', text)  # the script translates
    assert f'<script type="module" src="/static/js/{script}.js"></script>' in text
    assert client.get(f"/static/js/{script}.js").status_code == 200
    assert ('<header class="hero">' in text) == hero and text.count('id="nav"') == 1
    name = path[1:].split("?")[0]
    if name != "matches":  # the page's own part only: the head and the big header are written once, in pages.py
        own = (WEB_DIR / f"{name}.html").read_text(encoding="utf-8")
        assert "<head>" not in own and "<html" not in own and 'class="hero"' not in own and own.strip() in text


def test_the_client_files_are_served_by_the_package(client: TestClient) -> None:
    for path, kind in [("/static/js/play.js", "javascript"), ("/static/css/app.css", "text/css"),
                       ("/static/js/cards.js", "javascript"), ("/static/favicon.svg", "image/svg+xml")]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert kind in response.headers["content-type"]
        assert response.headers["x-content-type-options"] == "nosniff"
    page = client.get("/play?game=teppich").text
    assert "http://" not in page and "https://" not in page  # nothing from elsewhere: it works offline


def test_the_games_api_lists_games_variants_and_options(client: TestClient) -> None:
    games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert set(games) == {"teppich", "reloaded", "faecher"}
    assert games["teppich"]["names"]["it"] == "Tappeto"
    assert games["teppich"]["variants"]["5x6"] == {"rows": 5, "cols": 6}
    assert any(o["name"] == "time_limit" for o in games["reloaded"]["options"])


def test_statistics_start_empty(stored_client: TestClient) -> None:
    body = stored_client.get("/api/stats").json()
    assert body["stats"]["faecher"] == {"played": 0, "won": 0, "win_percent": 0.0, "best": None, "streak": 0,
                                        "best_streak": 0, "won_hinted": 0}
    assert body["unfinished"] == []


# -- playing ---------------------------------------------------------------------------------------


def test_a_game_is_dealt_as_the_engine_deals_it(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "teppich", seed="123", variant="5x6")
    state = get_game("teppich").deal(123, {"rows": 5, "cols": 6})
    assert d["table"]["piles"] == state.view()["piles"]
    assert (d["seed"], d["variant"], d["changed"]) == ("123", "5x6", {"rows": 5, "cols": 6})
    assert d["v"] == 0 and d["status"]["score"] == 4 and d["assist"] is True
    assert d["names"]["de"] == "Teppich"


def test_options_name_their_variant(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", options={"time_limit": "600"})
    assert d["variant"] == "10min" and d["status"]["clock"]["limit"] == 600_000


@pytest.mark.parametrize(("game", "data", "options"), [
    ("faecher", {}, {}), ("faecher", {"variant": "with-undo"}, {"undo_limit": 3}),
    ("teppich", {"variant": "5x6"}, {"rows": 5, "cols": 6}), ("teppich", {}, {}),
])
def test_a_winnable_deal_is_a_seed_of_the_list(client: TestClient, game: str, data: dict[str, Any],
                                               options: dict[str, Any]) -> None:
    with client.websocket_connect("/ws") as ws:
        dealt = [new_game(ws, game, winnable=True, **data) for _ in range(3)]
    listed = {str(seed) for seed in winnable.seeds(game, options)}
    assert listed and all(d["seed"] in listed for d in dealt)
    assert all(d["changed"] == options for d in dealt)  # the share link: the plain seed and options


def test_a_winnable_deal_asked_wrongly_is_refused(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        for wrong, says in [({"seed": "7", "winnable": True}, "give a seed or ask for a winnable deal, not both"),
                            ({"winnable": "yes"}, "Expected `bool`, got `str` - at `$.winnable`"),
                            ({"winnable": 1}, "Expected `bool`, got `int`"),
                            ({"winnable": None}, "Expected `bool`, got `null`")]:
            send(ws, "new", {"game": "faecher", **wrong})
            err = recv(ws)
            assert err["t"] == "err" and err["d"]["code"] == "bad_message", (wrong, err)
            assert says in err["d"]["msg"]
        assert not hub_of(client).games
        assert new_game(ws, "faecher", seed="7", winnable=False)["seed"] == "7"


def test_a_variant_without_a_list_has_no_winnable_deal(client: TestClient, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = json.loads(winnable.default_path().read_text(encoding="utf-8"))
    only_faecher = {**shipped, "lists": {"faecher": shipped["lists"]["faecher"]}}
    path = tmp_path / "winnable.json"
    path.write_text(json.dumps(only_faecher), encoding="utf-8")
    monkeypatch.setattr(winnable, "default_path", lambda: path)
    with client.websocket_connect("/ws") as ws:
        first = new_game(ws, "faecher", winnable=True)
        send(ws, "stock", {"ack": 1})
        reply_to(ws, 1)
        for data, variant in [({"game": "reloaded"}, "reloaded"),
                              ({"game": "teppich", "variant": "waste"}, "teppich waste=yes")]:
            send(ws, "new", {**data, "winnable": True, "cid": "page1"})
            err = recv(ws)
            assert err["t"] == "err" and err["d"]["code"] == "no_winnable", err
            assert variant in err["d"]["msg"]
            assert err["d"]["why"] == {"k": "no_winnable", "p": {"variant": variant}}
        # nothing changed: no game made, and the begun one was not given up
        assert list(hub_of(client).games) == [first["id"]]
        assert live(client, first["id"]).session.outcome is None
        send(ws, "stock", {"ack": 2})
        assert reply_to(ws, 2)["d"]["v"] == 2


def test_moves_undo_and_giving_up(stored_client: TestClient) -> None:
    client = stored_client
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", seed="7")
        send(ws, "stock", {"ack": 1})
        ev = reply_to(ws, 1)["d"]
        assert (ev["v"], ev["kind"], ev["move"], ev["ok"]) == (1, "move", "draw", True)
        assert ev["table"]["piles"]["w"] != [] and ev["status"]["moves"] == 1
        state = live(client, d["id"]).session.state
        legal = [m for m in state.legal_moves() if m not in (DRAW, REDEAL)]
        move = legal[0]
        send(ws, "move", {"ack": 2, "src": move.src, "dst": move.dst, "n": move.n})
        ev = reply_to(ws, 2)["d"]
        assert ev["ok"] and ev["move"] == str(move) and ev["v"] == 2
        send(ws, "undo", {"ack": 3})
        ev = reply_to(ws, 3)["d"]
        assert ev["kind"] == "undo" and ev["v"] == 3
        assert ev["status"]["undos_left"] is not None
        send(ws, "giveup", {"ack": 4})
        ev = reply_to(ws, 4)["d"]
        assert ev["status"]["outcome"] == "given_up"
        assert ev["summary"]["outcome"] == "given_up" and ev["summary"]["moves"] == 2
    stats = client.get("/api/stats").json()["stats"]["reloaded"]
    assert stats["played"] == 1 and stats["won"] == 0


def test_an_illegal_move_is_refused_with_its_reason(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", seed="7")
        state = live(client, d["id"]).session.state
        bad = next((src, dst) for src in ("t1", "t2", "t3") for dst in ("t4", "t5", "t6")
                   if state.check(state.parse_move(f"{src}>{dst}")) is not None)
        send(ws, "move", {"ack": 1, "src": bad[0], "dst": bad[1]})
        rej = reply_to(ws, 1)
        assert rej["t"] == "rej" and rej["d"]["reason"] == state.check(state.parse_move(f"{bad[0]}>{bad[1]}"))
        assert rej["d"]["why"]["k"] in {"alt_colour", "down_rank"}
        assert live(client, d["id"]).version == 0  # nothing happened


def test_a_wrong_click_in_der_faecher_costs_50_and_is_an_event(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "faecher", seed="5")
        send(ws, "move", {"ack": 1, "src": "fs", "dst": "r1"})
        ev = reply_to(ws, 1)
        assert ev["t"] == "ev" and ev["d"]["kind"] == "illegal" and not ev["d"]["ok"]
        assert ev["d"]["v"] == 1 and ev["d"]["table"] is None
        assert [line["points"] for line in ev["d"]["ledger"]] == [-50]
        assert ev["d"]["ledger"][0]["why"]["k"] == "l_illegal"
        assert ev["d"]["status"]["score"] == live(client, d["id"]).session.score == -50


def test_a_move_naming_a_pile_the_game_lacks_is_bad_input_and_free(client: TestClient) -> None:
    """As in the terminal: ``v3>r9`` in Der Fächer is no move at all, so no wrong click to charge."""
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "faecher", seed="5")
        for ack, (src, dst, lacking) in enumerate([("v3", "r9", "r9"), ("t1", "f", "t1")], 1):
            send(ws, "move", {"ack": ack, "src": src, "dst": dst})
            err = reply_to(ws, ack)
            assert err["t"] == "err" and err["d"]["code"] == "bad_move", err
            assert f"no pile '{lacking}'" in err["d"]["msg"]
        game = live(client, d["id"])
        assert game.version == 0 and game.session.score == 0 and game.session.log == []


def test_a_resent_intent_is_applied_once(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", seed="9")
        send(ws, "stock", {"ack": 1})
        first = reply_to(ws, 1)
        send(ws, "stock", {"ack": 1})
        again = reply_to(ws, 1)
        assert again == first
        assert live(client, d["id"]).version == 1 and len(live(client, d["id"]).session.state.waste) == 1
        send(ws, "stock", {"ack": 0})
        stale = reply_to(ws, 0)
        assert stale["t"] == "err" and stale["d"]["code"] == "stale_ack"
        assert live(client, d["id"]).version == 1


def test_hint_is_a_legal_move_and_targets_say_where_a_card_goes(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "teppich", seed="21")
        send(ws, "hint")
        hint = recv(ws)
        assert hint["t"] == "hint"
        state = live(client, d["id"]).session.state
        if hint["d"]["move"] is not None:
            assert state.check(state.parse_move(hint["d"]["move"])) is None
            send(ws, "targets", {"src": hint["d"]["src"]})
            targets = recv(ws)
            assert targets["d"]["dsts"] == [hint["d"]["dst"]]
        new_game(ws, "faecher", seed="21")
        send(ws, "targets", {"src": "v1"})
        assert recv(ws)["d"]["code"] == "not_here"  # in Der Fächer a wrong click costs: no free targets


def test_bad_input_gets_an_error_and_the_game_lives_on(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", seed="4")
        send(ws, "stock", {"ack": 1})
        reply_to(ws, 1)
        for raw, code in [
            ("{not json", "bad_message"),
            ('{"t": "move", "d": {"ack": "x"}}', "bad_message"),
            ('{"t": "teleport", "d": {}}', "unknown_type"),
            (json.dumps({"t": "new", "d": {"game": "teppich", "cid": "x" * 5000}}), "too_large"),
            (json.dumps({"t": "new", "d": {"game": "chess"}}), "unknown_game"),
            (json.dumps({"t": "new", "d": {"game": "teppich", "options": {"rows": 99}}}), "bad_options"),
            (json.dumps({"t": "new", "d": {"game": "teppich", "variant": "9x9"}}), "bad_options"),
            (json.dumps({"t": "new", "d": {"game": "teppich", "seed": "99999999999999999999"}}), "bad_message"),
            (json.dumps({"t": "join", "d": {"id": "no-such-game-here"}}), "no_such_game"),
        ]:
            ws.send_text(raw)
            err = recv(ws)
            assert err["t"] == "err" and err["d"]["code"] == code, (raw[:60], err)
        ws.send_bytes(b"\xff\xfe")
        assert recv(ws)["d"]["code"] == "bad_message"
        send(ws, "ping")
        assert recv(ws)["t"] == "pong"
        send(ws, "stock", {"ack": 2})
        assert reply_to(ws, 2)["d"]["v"] == 2  # the same game goes on
        assert live(client, d["id"]).session.moves_made == 2


def test_a_move_on_a_finished_game_is_an_error(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        new_game(ws, "faecher", seed="8")
        send(ws, "giveup", {"ack": 1})
        reply_to(ws, 1)
        send(ws, "move", {"ack": 2, "src": "v1", "dst": "f"})
        err = reply_to(ws, 2)
        assert err["t"] == "err" and err["d"]["code"] == "game_over"
        send(ws, "undo", {"ack": 3})
        assert reply_to(ws, 3)["d"]["code"] == "game_over"


def test_intents_need_a_game(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        send(ws, "move", {"ack": 1, "src": "t1", "dst": "f"})
        err = recv(ws)
        assert err["d"]["code"] == "no_game" and err["d"]["ack"] == 1


def test_a_page_that_comes_back_gets_what_it_missed(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", seed="12")
        for ack in (1, 2, 3):
            send(ws, "stock", {"ack": ack})
            reply_to(ws, ack)
    with client.websocket_connect("/ws") as ws:
        send(ws, "join", {"id": d["id"], "v": 1, "cid": "page1"})
        missed = [recv(ws), recv(ws)]
        assert [m["d"]["v"] for m in missed] == [2, 3] and all(m["t"] == "ev" for m in missed)
        send(ws, "stock", {"ack": 3})  # the page sends its last intent again: answered, not replayed
        assert reply_to(ws, 3)["d"]["v"] == 3
        send(ws, "join", {"id": d["id"], "v": 0, "cid": "page1"})
        snap = recv(ws)
        assert snap["t"] == "game" and snap["d"]["v"] == 3 and snap["d"]["status"]["moves"] == 3


def test_a_page_that_missed_too_much_gets_the_whole_game(client: TestClient,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("patience.server.solo.game.KEEP_EVENTS", 2)
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", seed="13")
        for ack in range(1, 6):
            send(ws, "stock", {"ack": ack})
            reply_to(ws, ack)
        send(ws, "join", {"id": d["id"], "v": 2, "cid": "page1"})
        snap = recv(ws)
        assert snap["t"] == "game" and snap["d"]["v"] == 5
        send(ws, "join", {"id": d["id"], "v": 3, "cid": "page1"})
        assert [recv(ws)["d"]["v"], recv(ws)["d"]["v"]] == [4, 5]


def test_a_page_that_does_not_read_is_let_go() -> None:
    dropped = []
    conn = Connection("browser-slow-reader-01", on_overflow=lambda: dropped.append(True))
    for _ in range(OUTBOX_LIMIT + 10):
        conn.send(b"{}")
    assert conn.dropped and dropped == [True]
    assert conn.outbox.qsize() == OUTBOX_LIMIT + 1  # the messages, then the end mark


def test_another_browser_cannot_join_a_game(client: TestClient, tmp_path: Path) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "teppich", seed="3")
    stranger = {"cookie": f"{COOKIE}=someone-else-entirely-0123"}
    with client.websocket_connect("/ws", headers=stranger) as ws:
        send(ws, "join", {"id": d["id"]})
        assert recv(ws)["d"]["code"] == "no_such_game"


def test_two_pages_of_one_game_both_see_each_move(client: TestClient) -> None:
    with client.websocket_connect("/ws") as one, client.websocket_connect("/ws") as two:
        d = new_game(one, "reloaded", seed="2")
        send(two, "join", {"id": d["id"], "cid": "page2"})
        assert recv(two)["t"] == "game"
        send(one, "stock", {"ack": 1})
        mine, theirs = reply_to(one, 1), recv(two)
        assert mine == theirs and theirs["d"]["cid"] == "page1"
        send(two, "stock", {"ack": 1})  # the same ack number from another page is its own intent
        assert reply_to(two, 1)["d"]["v"] == 2


@pytest.mark.parametrize(("game", "seed", "src", "dst"), [("faecher", "5", "v5", "f"), ("reloaded", "2", "t4", "f")])
def test_a_move_made_on_a_table_another_page_changed_is_refused_at_no_cost(stored_client: TestClient, game: str,
                                                                           seed: str, src: str, dst: str) -> None:
    """Two pages of one game: the second moves a card the first has moved already, on the table it showed
    (version 0). Refused, free, with the reason; the same move said to be made on the new table, or by a
    page that says no version (an old one), is judged by the rules as before (in Der Fächer: −50)."""
    with stored_client.websocket_connect("/ws") as one, stored_client.websocket_connect("/ws") as two:
        d = new_game(one, game, seed=seed)
        send(two, "join", {"id": d["id"], "cid": "page2"})
        assert recv(two)["t"] == "game"
        send(one, "move", {"ack": 1, "src": src, "dst": dst, "v": 0})
        assert reply_to(one, 1)["d"]["ok"] and recv(two)["d"]["v"] == 1
        game_now = live(stored_client, d["id"])
        score = game_now.session.score
        send(two, "move", {"ack": 1, "src": src, "dst": dst, "v": 0})
        rej = reply_to(two, 1)
        assert rej["t"] == "rej" and rej["d"]["why"]["k"] == "stale", rej
        assert rej["d"]["reason"].startswith("the table changed in another window")
        assert game_now.version == 1 and game_now.session.score == score  # nothing happened, nothing charged
        send(two, "move", {"ack": 1, "src": src, "dst": dst, "v": 0})
        assert reply_to(two, 1) == rej  # sent again: the same answer
        # the page's own changes since its table never count: page one moves on from version 0 again
        legal = [m for m in game_now.session.state.legal_moves() if m.src != "s" and str(m) not in ("draw", "redeal")]
        send(one, "move", {"ack": 2, "src": legal[0].src, "dst": legal[0].dst, "n": legal[0].n, "v": 0})
        assert reply_to(one, 2)["d"]["ok"]
        recv(two)
        score = game_now.session.score
        for ack, version in ((2, 2), (3, None)):  # made on the table as it is, or not said: the rules judge
            send(two, "move", {"ack": ack, "src": src, "dst": dst} | ({"v": version} if version is not None else {}))
            answer = reply_to(two, ack)
            assert answer["d"].get("why", {}).get("k") != "stale" and (answer["t"] == "rej" or not answer["d"]["ok"])
        if game == "faecher":
            assert game_now.session.score == score - 100  # two wrong clicks, each −50


def test_time_runs_out_without_any_input(client: TestClient, fake_time: FakeTime) -> None:
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", seed="6")
        fake_time.t += 10.5
        tick = recv(ws)["d"]
        assert tick["kind"] == "tick" and tick["ledger"][0]["kind"] == "time" and tick["ledger"][0]["points"] == -2
        fake_time.t += 300
        end = recv(ws)["d"]
        while end["status"]["outcome"] is None:
            end = recv(ws)["d"]
        assert end["status"]["outcome"] == "time_out" and end["summary"]["outcome"] == "time_out"
        assert not end["status"]["clock"]["running"] and end["status"]["clock"]["ms"] == 300_000
    assert live(client, d["id"]).session.is_over


def test_starting_a_new_game_gives_up_the_begun_one(stored_client: TestClient) -> None:
    client = stored_client
    with client.websocket_connect("/ws") as ws:
        first = new_game(ws, "faecher", seed="30")
        new_game(ws, "faecher", seed="31")  # not begun: nothing counts, nothing is kept
        assert first["id"] not in hub_of(client).games
        send(ws, "stock", {"ack": 1})
        reply_to(ws, 1)
        new_game(ws, "faecher", seed="32")
    assert first["id"] not in client.get("/api/stats").json()["unfinished"]
    assert client.get("/api/stats").json()["stats"]["faecher"]["played"] == 1


def test_games_survive_a_restart(database_url: str) -> None:
    with TestClient(create_app(database_url=database_url)) as c:
        c.get("/")
        cookie = c.cookies[COOKIE]
        with c.websocket_connect("/ws") as ws:
            d = new_game(ws, "faecher", seed="40")
            game = hub_of(c).games[d["id"]]
            for ack in range(1, 6):
                move = game.session.state.useful_moves()[0]
                if move in (DRAW, REDEAL):
                    send(ws, "stock", {"ack": ack})
                else:
                    send(ws, "move", {"ack": ack, "src": move.src, "dst": move.dst, "n": move.n})
                reply_to(ws, ack)
            before = game.snapshot()
    with TestClient(create_app(database_url=database_url)) as c:
        c.cookies.set(COOKIE, cookie)
        assert [g["id"] for g in c.get("/api/stats").json()["unfinished"]] == [d["id"]]
        with c.websocket_connect("/ws") as ws:
            send(ws, "join", {"id": d["id"], "cid": "again"})
            snap = recv(ws)["d"]
    assert snap["table"] == msgspec.to_builtins(before.table)
    assert snap["status"]["score"] == before.status.score and snap["status"]["moves"] == 5


def test_a_page_of_another_site_may_not_play(client: TestClient) -> None:
    with pytest.raises(WebSocketDisconnect), client.websocket_connect(
            "/ws", headers={"origin": "http://evil.example", "host": "testserver"}) as ws:
        send(ws, "ping")
        recv(ws)


# -- no hidden card ever leaves the server ---------------------------------------------------------

def check_message(msg: dict[str, Any], game: LiveGame, seen: set[str]) -> None:
    """``msg`` names only cards the player has seen face up, or the next card of a foundation
    (a fact of the rules, "4♣ comes next", that says nothing about where that card lies)."""
    state = game.session.state
    for cards in state.piles().values():
        seen.update(card.text for card, up in cards if up)
    next_ones = {need.text for need in (state.needed(suit) for suit in range(4)) if need is not None}  # type: ignore[attr-defined]
    leaked = mentioned_cards(msg) - seen - next_ones
    assert not leaked, f"{msg['t']} names cards never face up: {leaked}"
    table = msg["d"].get("table")
    if table:
        assert table["piles"] == state.view()["piles"]
        assert all(card is None for card in table["piles"]["s"])  # not even the stock's order


def play_whole_game(ws: Any, client: TestClient, game_id: str, seed: int, max_steps: int = 220) -> str:
    rng = random.Random(seed)
    d = new_game(ws, game_id, seed=str(seed))
    game = live(client, d["id"])
    seen: set[str] = set()
    check_message({"t": "game", "d": d}, game, seen)
    names = list(d["table"]["piles"])
    ack = 0
    for _ in range(max_steps):
        session = game.session
        if session.is_over:
            break
        ack += 1
        roll = rng.random()
        if roll < 0.06:
            send(ws, "undo", {"ack": ack})
        elif roll < 0.14:
            send(ws, "move", {"ack": ack, "src": rng.choice(names), "dst": rng.choice(names)})
        elif roll < 0.16:
            send(ws, "hint")
            check_message(recv(ws), game, seen)
            continue
        else:
            moves = session.state.useful_moves()
            to_foundation = [m for m in moves if m.dst == "f"]
            move = rng.choice(to_foundation if to_foundation and rng.random() < 0.7 else moves)
            if move in (DRAW, REDEAL):
                send(ws, "stock", {"ack": ack})
            else:
                send(ws, "move", {"ack": ack, "src": move.src, "dst": move.dst, "n": move.n})
        while True:
            msg = recv(ws)
            check_message(msg, game, seen)
            if msg["d"].get("ack") == ack:
                break
    if not game.session.is_over:
        ack += 1
        send(ws, "giveup", {"ack": ack})
        check_message(reply_to(ws, ack), game, seen)
    send(ws, "join", {"id": d["id"], "cid": "page1"})  # the whole game once more, as a reload gets it
    check_message(recv(ws), game, seen)
    return game.session.outcome.value  # type: ignore[union-attr]


@pytest.mark.parametrize("game_id", ["teppich", "reloaded", "faecher"])
def test_no_hidden_card_is_ever_sent(client: TestClient, game_id: str) -> None:
    at_a_scripts_pace(client.app)
    outcomes = []
    with client.websocket_connect("/ws") as ws:
        for seed in (1, 2, 3):
            outcomes.append(play_whole_game(ws, client, game_id, seed))
    assert all(outcomes)


def test_auto_move_sends_the_safe_cards_up_when_asked(client: TestClient) -> None:
    """Game 21 of Solitaire Reloaded has A♥ on t7: with auto-move the server plays it up after the
    player's move, as a move of its own; without it, nothing moves by itself."""
    with client.websocket_connect("/ws") as ws:
        d = new_game(ws, "reloaded", seed="21")
        send(ws, "move", {"ack": 1, "src": "t4", "dst": "t1"})
        assert reply_to(ws, 1)["d"]["move"] == "t4>t1"
        state = live(client, d["id"]).session.state
        assert state.height == [0, 0, 0, 0] and str(state.tableau[6][-1]) == "AH"
        send(ws, "stock", {"ack": 2, "auto": True})
        assert reply_to(ws, 2)["d"]["move"] == "draw"
        auto = recv(ws)
        assert auto["t"] == "ev" and auto["d"]["kind"] == "move" and auto["d"]["move"] == "t7>f"
        assert auto["d"]["ack"] is None and auto["d"]["table"] is not None
        assert state.height[1] >= 1  # (and any safe card that followed it)
        send(ws, "move", {"ack": 3, "src": "t1", "dst": "t2", "auto": "yes"})
        assert reply_to(ws, 3)["t"] == "err"  # a flag that is not true or false is refused
