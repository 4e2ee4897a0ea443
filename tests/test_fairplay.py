"""Fair play (docs/fairplay.md): a full-speed hint bot is marked within its first rated game and its
opponent's rating points come back; a human-paced player is not flagged; reports are rate-limited; the
moderators' API answers 404 to everyone else; one playing socket per player per match; a marked account
is refused a seek, Play now and the deal of the day; a fresh account's scouted win never reaches the
deal of the day's board."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest

from helpers import FakeTime
from patience.fairplay import Step, account_score, difficulty, game_figures, tail_at_least, verdict
from patience.games import DRAW, REDEAL
from patience.server.solo.hints import simple_hint
from patience.server.storage import fairplay as fp
from patience.server.storage import league
from patience.server.storage.roles import grant
from test_admin import store as store  # the fixture: a migrated store on each backend
from test_server_duel import (
    Page,
    csrf,
    end_of,
    make_app,
    pair,
    person,
    post,
    running,
)
from test_server_duel import seeds as seeds  # the fixture: duels deal from known keys


@pytest.fixture
def app(tmp_path: Path, fake_time: FakeTime, seeds: Any) -> Any:
    with running(make_app(tmp_path, fake_time)) as application:
        application.state.fairplay.hint = lambda session: simple_hint(session.state)  # fast and deterministic
        yield application


def settle(app: Any) -> None:
    app.state.test_portal.call(app.state.fairplay.settled)


def me(page: Page) -> str:
    return page.client.get("/api/me").json()["user"]["id"]  # type: ignore[no-any-return]


def bot_move(page: Page, live: Any, fake_time: FakeTime, think_s: float) -> None:
    session = live.match.sessions[page.side]
    move = simple_hint(session.state)
    fake_time.t += think_s
    if move is None:
        page.intent("giveup")
    elif move in (DRAW, REDEAL):
        page.intent("stock", how="click")
    else:
        page.intent("move", src=move.src, dst=move.dst, n=move.n, how="drag", ms=180, px=240)


# -- the pure figures ----------------------------------------------------------------------------------


def test_machine_speed_is_marked_and_a_human_pace_is_not() -> None:
    rng = random.Random(3)
    bot = game_figures([Step(i, 100 + rng.randrange(60), "c") for i in range(60)], 20, 20)
    assert verdict(bot).kind == "machine" and account_score([bot]).state == "mark"
    human = [game_figures([Step(i, int(rng.lognormvariate(7.6, 0.8)), "d") for i in range(60)], 20,
                          sum(rng.random() < 0.55 for _ in range(20))) for _ in range(30)]
    assert all(verdict(g).kind != "machine" for g in human)
    assert account_score(human).state == "clear"
    careful = [game_figures([Step(i, int(rng.lognormvariate(7.6, 0.8)), "d") for i in range(60)], 60, 58)
               for _ in range(3)]
    score = account_score(careful)
    assert score.state == "review" and "hint" in str(score.reasons[0])


def test_think_time_against_difficulty_and_the_hint_where_it_is_not_obvious() -> None:
    """A delay drawn without regard to the decision shows no rank association with its difficulty; a
    person's think time grows with log2 of the choices and after a new card (Hick-Hyman). Over 15 games
    a careful bot (the hint at 80 %, heavy-tailed delays at a median of 0.5 s) goes to review; people
    who slow down at harder decisions, fast or slow, strong or not, do not."""
    assert difficulty(1, False) == 0 and difficulty(4, False) == 2 and difficulty(4, True) == 3
    assert tail_at_least([0.5] * 4, 4) == pytest.approx(1 / 16) and tail_at_least([0.3, 0.6], 0) == 1
    rng = random.Random(5)

    def game(think: Any, hint_share: float, hard_share: float) -> Any:
        useful = [rng.choice((1, 2, 3, 4, 6, 8)) for _ in range(100)]
        new = [rng.random() < 0.4 for _ in range(100)]
        steps = [Step(i, think(u, n), "d") for i, (u, n) in enumerate(zip(useful, new, strict=True))]
        hardness = [difficulty(u, n) for u, n in zip(useful, new, strict=True)]
        hard = 30
        return game_figures(steps, 60, sum(rng.random() < hint_share for _ in range(60)), hardness=hardness,
                            nonobvious=hard, nonobvious_agreed=sum(rng.random() < hard_share for _ in range(hard)))

    def bot(u: int, n: bool) -> int:
        return int(max(260, rng.lognormvariate(math.log(500), 0.8)))

    def person(base: float, per_bit: float) -> Any:
        return lambda u, n: int(300 + (base + per_bit * (math.log2(u) + n)) * rng.lognormvariate(0, 0.8))

    bots = [game(bot, 0.8, 0.8) for _ in range(15)]
    assert all(verdict(g).kind == "clear" for g in bots)  # every game passes the timing rules
    before = account_score(bots[7:], 1900)  # 8 games
    score = account_score(bots, 1900)
    assert score.state == "review", score
    assert any("difficulty" in str(r) for r in score.reasons) or any("not the greedy" in str(r) for r in score.reasons)
    assert abs(score.pace_z or 0) < 3 and before.paced == 800
    for base, per_bit in ((700, 300), (250, 150), (1350, 600)):  # strong, clicker, thinker
        people = [game(person(base, per_bit), 0.7, 0.55) for _ in range(15)]
        score = account_score(people, 1800)
        assert score.state == "clear" and (score.pace_z or 0) > 4, score


def test_a_burst_is_flagged_for_review() -> None:
    steps = [Step(i, 1500, "c") for i in range(20)] + [Step(20 + i, 50, "c") for i in range(10)]
    assert verdict(game_figures(steps, 0, 0)).kind == "suspect"


# -- through the app -------------------------------------------------------------------------------------


def test_a_full_speed_bot_is_marked_in_its_first_duel_and_its_opponent_gets_the_points_back(
        app: Any, fake_time: FakeTime) -> None:
    bot, human, live = pair(app, "robo", "slowpoke")
    bot_id, human_id = me(bot), me(human)
    for _ in range(40):
        if live.match.sessions[bot.side].is_over:
            break
        bot_move(bot, live, fake_time, 0.1)
    if not live.match.sessions[bot.side].is_over:
        bot.intent("giveup")
    fake_time.t += 5
    human.intent("giveup")
    end_of(human)
    settle(app)
    engine = app.state.store.engine
    assert fp.marked_category(engine, bot_id) == "bot"
    profile = human.client.get(f"/api/profile/{human_id}").json()
    # the human gave up at once: no real attempt, so the match moved no rating (and there is nothing to give back)
    change = next(m["change"] for m in profile["recent"] if m["id"] == live.id)
    assert change["reason"] in ("no_attempt", "no_attempt_opp") and change["applied"] == 0
    assert profile["fairplay"]["refunds"] == [] and round(profile["ratings"]["reloaded"]["rating"]) == 1500
    bot_profile = human.client.get(f"/api/profile/{bot_id}").json()
    assert bot_profile["fairplay"] == {"marked": True, "category": "bot", "refunds": []}
    # what a seek reads, in one query: the rating of the game (a new player's in another) and the mark
    rating, mark = league.seekers_facts(engine, "reloaded", [human_id])[human_id]
    assert (round(rating.rating), mark) == (round(profile["ratings"]["reloaded"]["rating"]), None)
    rating, mark = league.seekers_facts(engine, "faecher", [bot_id])[bot_id]
    assert (rating.rating, rating.deviation, mark) == (1500, 350, "bot")
    assert "nobody" not in league.seekers_facts(engine, "reloaded", ["nobody"])
    many = league.seekers_facts(engine, "reloaded", [human_id, bot_id, "nobody"])  # a burst's seekers, one query
    assert set(many) == {human_id, bot_id} and many[bot_id][1] == "bot" and many[human_id][1] is None
    assert round(many[human_id][0].rating) == round(profile["ratings"]["reloaded"]["rating"])
    board = human.client.get("/api/leaderboard?game=reloaded").json()["players"]
    assert bot_id not in {p["id"] for p in board}
    # a marked account is refused a seek and Play now, and is dealt a practice deal of its own, on no board
    bot.send("seek", {"format": "reloaded/standard/300", "cid": bot.cid})
    assert bot.until(lambda m: m["t"] == "err")["d"]["code"] == "marked"
    answer = post(bot.client, "/api/playnow/reloaded/standard/300")
    assert answer.status_code == 403 and answer.json()["error"] == "marked"
    answer = post(bot.client, "/api/daily/reloaded/start")
    assert answer.status_code == 200 and answer.json()["practice"] is True


def test_a_human_paced_player_is_not_flagged(app: Any, fake_time: FakeTime) -> None:
    rng = random.Random(7)
    a, b, live = pair(app, "alice", "bert")
    for _ in range(30):
        for page in (a, b):
            if live.match.sessions[page.side].is_over:
                continue
            session = live.match.sessions[page.side]
            moves = session.state.useful_moves()
            move = simple_hint(session.state) if rng.random() < 0.55 else rng.choice(moves)
            fake_time.t += rng.lognormvariate(0.7, 0.8)
            if move in (DRAW, REDEAL):
                page.intent("stock", how="click")
            else:
                page.intent("move", src=move.src, dst=move.dst, n=move.n, how="drag", ms=300, px=200)
    for page in (a, b):
        if not live.match.sessions[page.side].is_over:
            page.intent("giveup")
    end_of(a)
    settle(app)
    engine = app.state.store.engine
    for page in (a, b):
        view = fp.account_view(engine, me(page))
        assert view is not None and view["state"] is None and view["score"]["state"] == "clear", view["score"]
        assert view["games"] and view["games"][0]["figures"]["steps"] > 10
        assert view["games"][0]["figures"]["kinds"].get("d", 0) > 0
        figures = view["games"][0]["figures"]
        assert figures["paced"] >= figures["steps"] - 1 > 10 and figures["nonobvious"] <= figures["decisions"]


def test_one_playing_socket_per_player_per_match(app: Any) -> None:
    a, _b, live = pair(app)
    second = Page(a.client, "pa2")
    second.join(live.id)
    second.until(lambda m: m["t"] == "duel")
    assert a.until(lambda m: m["t"] == "err")["d"]["code"] == "replaced"
    assert len(live.conns[a.side]) == 1
    a.send("move", {"ack": 1, "src": "w", "dst": "f"})
    assert a.until(lambda m: m["t"] == "err")["d"]["code"] == "no_game"


def test_reports_are_rate_limited_and_the_mod_api_is_for_moderators_only(app: Any) -> None:
    ada, bob = person(app, "ada"), person(app, "bob")
    bob_id = bob.get("/api/me").json()["user"]["id"]
    for n in range(10):
        answer = post(ada, "/api/report", account=bob_id, category="bot", note=f"too fast {n}")
        assert answer.status_code == 200, answer.text
    answer = post(ada, "/api/report", account=bob_id, category="bot")
    assert answer.status_code == 429 and answer.json()["error"] == "too_many_reports"
    assert post(ada, "/api/report", account=bob_id, category="spam").status_code == 400
    assert post(ada, "/api/report", account="nobody-at-all", category="bot").status_code == 404
    for client in (ada, bob):
        assert client.get("/api/mod/queue").status_code == 404
        assert client.get(f"/api/mod/account/{bob_id}").status_code == 404
        assert post(client, f"/api/mod/account/{bob_id}", action="mark_bot", note="x").status_code == 404
    grant(app.state.store, "ada", "moderator")
    queue = ada.get("/api/mod/queue").json()["accounts"]
    assert [(e["id"], e["reports"]) for e in queue] == [(bob_id, 10)]
    view = ada.get(f"/api/mod/account/{bob_id}").json()
    assert len(view["reports"]) == 10 and view["reports"][0]["category"] == "bot"
    assert post(ada, f"/api/mod/account/{bob_id}", action="mark_bot", note="").status_code == 400
    done = post(ada, f"/api/mod/account/{bob_id}", action="mark_bot", note="plays like a script")
    assert done.json() == {"id": bob_id, "state": "marked"}
    assert ada.get("/api/mod/queue").json()["accounts"] == []
    audit = ada.get(f"/api/mod/account/{bob_id}").json()["audit"]
    assert audit[0]["action"] == "mark_bot" and audit[0]["note"] == "plays like a script"
    done = post(ada, f"/api/mod/account/{bob_id}", action="clear", note="a mistake")
    assert done.json()["state"] == "cleared"
    assert bob.get(f"/api/profile/{bob_id}").json()["fairplay"]["marked"] is False
    assert csrf(ada)


@pytest.mark.slow
def test_a_fresh_accounts_scouted_daily_win_never_reaches_the_board(app: Any, fake_time: FakeTime) -> None:
    from test_daily import join, start, stocked
    from test_server_app import send

    stocked(app)
    scout = person(app, "scout")
    game_id = start(scout).json()["id"]
    hub = app.state.hub
    with scout.websocket_connect("/ws") as ws:
        join(ws, game_id)
        game = hub.games[game_id]
        # the line: the deal is known (scouted), every move as fast as it can be sent
        ack = 0
        for _ in range(400):
            if game.session.is_over:
                break
            move = simple_hint(game.session.state)
            ack += 1
            fake_time.t += 0.1
            if move is None:
                send(ws, "giveup", {"ack": ack})
            elif move in (DRAW, REDEAL):
                send(ws, "stock", {"ack": ack, "how": "click"})
            else:
                send(ws, "move", {"ack": ack, "src": move.src, "dst": move.dst, "n": move.n, "how": "click"})
            while True:
                msg = ws.receive_json()
                if msg["t"] in ("ev", "rej", "err") and msg["d"].get("ack") == ack:
                    break
        if not game.session.is_over:
            ack += 1
            send(ws, "giveup", {"ack": ack})
            ws.receive_json()
    app.state.test_portal.call(hub.save)
    # whatever the outcome: a won line of a fresh account has no place, and the machine pace marks it
    settle(app)
    board = scout.get("/api/daily/reloaded").json()["entries"]
    assert all(e["outcome"] != "won" for e in board)
    scout_id = scout.get("/api/me").json()["user"]["id"]
    assert fp.marked_category(app.state.store.engine, scout_id) == "bot"
    assert scout_id not in {e["user"] for e in scout.get("/api/daily/reloaded").json()["entries"]}



def test_a_scouted_line_is_clairvoyant_and_a_player_of_the_table_is_not() -> None:
    """Deal 107 of Solitaire Reloaded: the solver's winning line (every card known, as a scout would
    have it) is right where only the hidden cards decide, far beyond chance; the hint's game (what the
    table shows) is not, though both win and both think at a human pace."""
    from patience.server.solo.fairplay import analyse
    from patience.server.solo.hints import hint
    from patience.session import ManualClock, Session
    from patience.solve import Budget, Status, solve
    from patience.solve.unseen import unseen, visible_deals

    state = Session("reloaded", 107).state
    cards, in_stock = unseen(state)
    assert (len(cards), in_stock) == (45, 24)
    assert all(unseen(d) == (cards, in_stock) and d.key() != state.key() for d in visible_deals(state, 3))
    solution = solve(state, Budget(seconds=10))
    assert solution.status is Status.WON
    rng = random.Random(1)
    verdicts = {}
    for who in ("scout", "table"):
        clock = ManualClock()
        session = Session("reloaded", 107, clock=clock)
        for n in range(400):
            move = (solution.moves[n] if n < len(solution.moves) else None) if who == "scout" else hint(session)
            if move is None or session.is_over:
                break
            clock.advance(rng.lognormvariate(-0.3, 0.6))
            session.play(move)
        record = session.record()
        steps = [Step(i, int(rng.lognormvariate(6.6, 0.6)), "d") for i in range(len(record["actions"]))]
        figures = analyse(record, steps, hint=lambda s: simple_hint(s.state))
        assert session.outcome is not None and session.outcome.value == "won"
        verdicts[who] = verdict(figures)
        assert figures.hidden and figures.hidden_hits <= len(figures.hidden)
    assert verdicts["scout"].kind == "clairvoyant" and "hidden cards" in str(verdicts["scout"].reasons[0])
    assert verdicts["table"].kind == "clear"


def test_a_clairvoyant_game_puts_its_account_in_review_with_its_climb(store: Any) -> None:
    """On SQLite and PostgreSQL: a game analysed as clairvoyant (its code fits the verdict column) puts
    the account in review; its rating climb, far beyond the others', is added as a supporting sign."""
    from sqlalchemy import insert, select

    from patience.server.storage.store import RatingHistoryRow, UserRow
    from test_admin import sign_up

    sign_up(store, "seer", "Seer")
    sign_up(store, "plain", "Plain")
    engine = store.engine
    with engine.begin() as connection:
        ids = dict(connection.execute(select(UserRow.login, UserRow.id)).all())
        seer, other = ids["seer"], ids["plain"]
        rows = [{"user_id": user, "game": "reloaded", "match_id": f"m{user[:4]}{n}", "rating": rating,
                 "deviation": 100.0, "at_ms": n} for n in range(10)
                for user, rating in ((seer, 1540.0 + 40 * n), (other, 1500.0 + 5 * (n % 2)))]
        connection.execute(insert(RatingHistoryRow), rows)
        fp.write_evidence(connection, [fp.Evidence("g:seen", seer, "daily", "reloaded", None, "seen", 1900.0,
                                                   [[i, 900, "d", None, None] for i in range(40)], {})])
    figures = game_figures([Step(i, 900 + 37 * (i % 7) ** 2, "d") for i in range(40)], 0, 0,
                           hidden=[0.4, 0.3, 0.5, 0.2, 0.4, 0.3, 0.3, 0.3], hidden_hits=8)
    assert verdict(figures).kind == "clairvoyant"
    fp.analysed(engine, "g:seen", figures, verdict(figures).kind)
    score, state = fp.rescore(engine, seer)
    assert state == "review" and score.score == 85, score
    assert "hidden cards" in str(score.reasons[0]) and "rating up 400" in str(score.reasons[-1])
    view = fp.account_view(engine, seer)
    assert view is not None and view["games"][0]["verdict"] == "clairvoyant" and "clairvoyant" in fp.HELD_VERDICTS
