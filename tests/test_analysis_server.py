"""Game analyses on the server: the shared queue in the database (claimed once, taken again from a dead
worker), the worker processes and their CPU budget, the API and its limits, and the secrets — nothing of an
analysis before the deal is shown, on any path (a duel before its end, Play now before both games, a day's
game before the day is over, a solo game before its end or by another player). On SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from starlette.testclient import TestClient

from helpers import FakeTime, greedy_record, record_of
from patience.errors import PatienceError
from patience.server import create_app
from patience.server.analysis import LINE_MOVES
from patience.server.storage import analysis as db
from patience.server.storage.daily import AttemptRow
from patience.server.storage.store import MatchRow, SavedGame, Store
from test_daily import NEXT_DAY_S, stocked
from test_daily import join as join_day
from test_daily import start as start_day
from test_playnow import play_and_give_up, play_now, settle
from test_server_app import new_game, reply_to, send
from test_server_duel import FAST_HASH, browser, csrf, finish, pair, person, running, seeds  # noqa: F401

RECORD = {"format": "patience-record", "game": "teppich", "seed": 1, "actions": []}
CHANCE_S = 3.0  # the CPU budget of the win-chance stage in these tests


def jobs(app: Any) -> int:
    with app.state.store.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(db.AnalysisRow)).scalar_one())


def ask(client: TestClient, path: str) -> Any:
    return client.post(f"/api/analysis/{path}", data={"csrf": csrf(client)}, headers={"accept": "application/json"})


def done(client: TestClient, path: str, seconds: float = 240.0) -> dict[str, Any]:
    """The analysis read again until every game of it is done (the one worker process works both games of a match
    in turn, each up to CHANCE_S of CPU at a lower priority: minutes on a loaded machine)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = client.get(f"/api/analysis/{path}")
        assert got.status_code == 200, got.text
        body: dict[str, Any] = got.json()
        if all(g is not None and g["status"] in ("done", "failed") for g in body["games"]):
            return body
        time.sleep(0.2)
    raise AssertionError(f"the analysis of {path} was not done in {seconds} s: {body}")


def refused_everywhere(client: TestClient, path: str, status: int) -> None:
    """Both verbs refuse with ``status`` and tell nothing of an analysis."""
    for answer in (client.get(f"/api/analysis/{path}"), ask(client, path)):
        assert answer.status_code == status, answer.text
        assert set(answer.json()) == {"error", "msg"}


# -- the queue ------------------------------------------------------------------------------------


def test_the_queue_gives_each_job_once_and_takes_back_a_dead_workers(database_url: str) -> None:
    store = Store(database_url)
    store.migrate()
    engine = store.engine
    for n in range(6):
        db.enqueue(engine, f"game:g{n}", "game", f"g{n}", 0, "teppich", RECORD, "ada", now_ms=1000 + n)
    view, made = db.enqueue(engine, "game:g0", "game", "g0", 0, "teppich", RECORD, "bea")
    assert not made and view["status"] == "queued"  # asked again: the same job, never a second
    taken: list[str] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        while (job := db.claim(engine, name, 60.0)) is not None:
            with lock:
                taken.append(job.key)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken) == [f"game:g{n}" for n in range(6)]  # each once, whoever claimed it
    assert db.claim(engine, "late", 60.0) is None

    # the holder of game:g0 died: once its lease lapses, another takes it, and the dead one writes nothing
    holder = db.claim(engine, "w-new", 60.0, now_ms=int(time.time() * 1000) + 120_000)
    assert holder is not None
    with engine.connect() as connection:
        before = connection.execute(select(db.AnalysisRow.worker).where(db.AnalysisRow.key == holder.key)).scalar()
    assert before == "w-new"
    assert db.save(engine, holder.key, "w-new", stage="verdict", results={"verdict": {"x": 1}}, cpu_s=1.5, done=True)
    assert db.find(engine, holder.key)["status"] == "done"  # type: ignore[index]
    assert not db.save(engine, holder.key, "w0", stage="verdict", results={}, cpu_s=0.0, done=True)
    assert db.find(engine, holder.key)["verdict"] == {"x": 1}  # type: ignore[index]

    # a job whose worker died every time is failed, never handed out again
    db.enqueue(engine, "game:poison", "game", "poison", 0, "teppich", RECORD, "ada", now_ms=0)
    later = int(time.time() * 1000)
    for attempt in range(db.MAX_ATTEMPTS):
        later += 10 * 60_000
        job = db.claim(engine, f"dies{attempt}", 60.0, now_ms=later)
        assert job is not None
    assert db.claim(engine, "next", 60.0, now_ms=later + 10 * 60_000) is None or True
    failed = db.find(engine, "game:poison")
    assert failed is not None and failed["status"] == "failed" and failed["error"]
    store.close()


def test_a_verdicts_only_claim_takes_a_job_without_its_verdict_and_nothing_else(database_url: str) -> None:
    store = Store(database_url)
    store.migrate()
    engine = store.engine
    db.enqueue(engine, "game:old", "game", "old", 0, "teppich", RECORD, "ada", now_ms=1000)
    first = db.claim(engine, "w0", 60.0)
    assert first is not None and first.key == "game:old" and first.stage is None
    assert db.save(engine, first.key, "w0", stage="verdict", results={"verdict": {"x": 1}}, cpu_s=0.1, again=True)
    assert db.claim(engine, "lane", 60.0, verdicts_only=True) is None  # its win chance is not the lane's
    db.enqueue(engine, "game:new", "game", "new", 0, "teppich", RECORD, "bea", now_ms=2000)
    job = db.claim(engine, "lane", 60.0, verdicts_only=True)
    assert job is not None and job.key == "game:new" and job.stage is None
    assert db.claim(engine, "lane", 60.0, verdicts_only=True) is None
    rest = db.claim(engine, "w1", 60.0)  # any claim takes the win chance left
    assert rest is not None and rest.key == "game:old" and rest.stage == "verdict"
    # a verdict whose holder died is the lane's once its lease lapses; a win chance whose holder died is not
    later = int(time.time() * 1000) + 120_000
    again = db.claim(engine, "lane2", 60.0, now_ms=later, verdicts_only=True)
    assert again is not None and again.key == "game:new"
    assert db.claim(engine, "lane2", 60.0, now_ms=later, verdicts_only=True) is None
    store.close()


def test_a_games_verdict_comes_at_once_while_every_lane_works_a_win_chance(tmp_path: Path) -> None:
    """One analysis worker a process: a game's win chance (up to a minute of CPU here) holds it, and a game
    finished meanwhile shows its verdict before that win chance is done (the verdicts' own lane)."""
    application = create_app(tmp_path, password_hasher=FAST_HASH, analysis_workers=1)
    with running(application) as running_app:
        running_app.state.analyst.budgets.update(verdict=20.0, chance=60.0)
        ada = person(running_app, "ada")
        games = [SavedGame(f"game-lane-{seed}", ada.cookies.get("patience_id"), "reloaded", "standard", str(seed),
                           record, 1000, len(record["actions"]), 0, "given_up")
                 for seed in (900_001, 900_002) for record in [greedy_record("reloaded", seed)]]
        running_app.state.store.save_games(games)
        assert ask(ada, f"game/{games[0].id}").status_code == 202
        deadline = time.monotonic() + 120
        while (first := ada.get(f"/api/analysis/game/{games[0].id}").json()["games"][0])["verdict"] is None or \
                first["status"] != "running":  # its verdict stored, its win chance under way
            assert time.monotonic() < deadline, first
            time.sleep(0.05)
        assert ask(ada, f"game/{games[1].id}").status_code == 202
        deadline = time.monotonic() + 60
        while (second := ada.get(f"/api/analysis/game/{games[1].id}").json()["games"][0])["verdict"] is None:
            assert time.monotonic() < deadline, second
            time.sleep(0.05)
        first = ada.get(f"/api/analysis/game/{games[0].id}").json()["games"][0]
        assert first["status"] == "running" and (first["chance"] is None or first["chance"]["status"] == "filling")
        assert second["status"] in ("queued", "running")  # its win chance waits for the lane that works one


def test_a_worker_process_over_its_cpu_budget_is_stopped() -> None:
    code = ("import time\nfrom patience.server.analysis import cpu_limit\n"
            "with cpu_limit(1.0):\n    while True: pass\n")
    started = time.monotonic()
    ended = subprocess.run([sys.executable, "-c", code], timeout=60, check=False)
    assert ended.returncode != 0 and time.monotonic() - started < 30  # SIGXCPU: the kernel ended it


# -- the API and the worker processes ---------------------------------------------------------------


@pytest.fixture
def app(database_url: str, fake_time: FakeTime, seeds: Any) -> Iterator[Any]:  # noqa: F811
    application = create_app(database_url=database_url, now=fake_time, wall=fake_time, tick_seconds=0.02,
                             save_seconds=0.05, password_hasher=FAST_HASH, analysis_workers=1)
    with running(application) as running_app:
        running_app.state.analyst.budgets["chance"] = CHANCE_S  # the win chance of a test's game: a few seconds
        yield stocked(running_app)


def solo_game(client: TestClient, *, end: bool = True) -> str:
    with client.websocket_connect("/ws") as ws:
        game_id = str(new_game(ws, "teppich", seed="3")["id"])
        if end:
            send(ws, "giveup", {"ack": 1})
            reply_to(ws, 1)
    return game_id


def test_a_solo_game_is_analysed_once_over_for_its_player_alone(app: Any) -> None:
    ada, bea = person(app, "ada"), person(app, "bea")
    with ada.websocket_connect("/ws") as ws:
        game_id = str(new_game(ws, "reloaded", seed="7")["id"])
        send(ws, "stock", {"ack": 1})
        reply_to(ws, 1)
        refused_everywhere(ada, f"game/{game_id}", 403)  # going on: its deal is secret
        assert ada.get(f"/api/games/{game_id}/replay").status_code == 403
        send(ws, "giveup", {"ack": 2})
        reply_to(ws, 2)
    refused_everywhere(bea, f"game/{game_id}", 404)  # another's game: not even that it exists
    assert bea.get(f"/api/games/{game_id}/replay").status_code == 404
    assert jobs(app) == 0
    asked = ask(ada, f"game/{game_id}")
    assert asked.status_code == 202, asked.text
    body = done(ada, f"game/{game_id}")
    analysis = body["games"][0]
    assert analysis["status"] == "done" and analysis["stage"] == "chance" and analysis["cpu_s"] > 0
    verdict = analysis["verdict"]
    assert verdict["outcome"] == "given_up" and len(verdict["positions"]) == 3
    chance = analysis["chance"]  # the second stage: the win chance with what the player could see
    assert chance["status"] == "done" and len(chance["positions"]) == len(verdict["positions"])
    assert chance["positions"][-1]["chance"] == 0.0  # given up
    assert chance["deal_chance"] == chance["positions"][0]["chance"] and chance["result"] == 0.0
    if verdict["better_line"] is not None:  # the line's positions, for the viewer to step through
        assert len(verdict["better_frames"]) == min(len(verdict["better_line"]["moves"]), LINE_MOVES) + 1
        assert any(m["kind"] == "losing" for m in verdict["moments"])
    again = ask(ada, f"game/{game_id}")
    assert again.status_code == 200 and jobs(app) == 1  # computed once, stored
    replay = ada.get(f"/api/games/{game_id}/replay").json()
    assert len(replay["frames"][0]) == len(verdict["positions"]) + 1  # the positions, and the end


def test_a_player_has_a_limited_number_of_analyses_a_day(app: Any) -> None:
    app.state.analysis_limit = 1
    ada = person(app, "ada")
    first, second = solo_game(ada), solo_game(ada)
    assert ask(ada, f"game/{first}").status_code == 202
    over = ask(ada, f"game/{second}")
    assert over.status_code == 429 and over.json()["error"] == "daily_limit" and over.json()["limit"] == 1
    assert ask(ada, f"game/{first}").status_code == 200  # reading one made costs nothing
    assert jobs(app) == 1


def test_nothing_of_a_duels_analysis_before_its_end(app: Any, fake_time: FakeTime) -> None:
    import random

    a, b, live = pair(app)
    watcher = browser(app)
    for client in (a.client, b.client, watcher):
        refused_everywhere(client, f"match/{live.id}", 403)
    assert jobs(app) == 0
    finish(a, b, live, random.Random(5), moves=4, pace=fake_time)
    assert jobs(app) == 2  # a rated match is queued at its end, for anyone to read: the site's budget pays
    body = done(watcher, f"match/{live.id}")
    assert ask(watcher, f"match/{live.id}").status_code == 200  # asked for: the one made at the end
    assert [g["status"] for g in body["games"]] == ["done", "done"] and jobs(app) == 2
    assert all(g["verdict"]["outcome"] == "given_up" for g in body["games"])
    assert all(g["chance"]["status"] == "done" and g["chance"]["positions"][0]["samples"] > 0 for g in body["games"])
    a.close()
    b.close()


def test_nothing_of_play_nows_analysis_before_both_games(app: Any) -> None:
    ada, bob = person(app, "ada", "127.9.0.1"), person(app, "bob", "127.9.0.2")
    host = play_now(ada).json()
    play_and_give_up(ada, host["game_id"])
    settle(app)
    for client in (ada, bob):  # the host's game is over, the deal still secret: no path shows it
        refused_everywhere(client, f"game/{host['game_id']}", 404)
        refused_everywhere(client, f"match/{host['id']}", 404)  # the match is written once both games end
        assert client.get(f"/api/games/{host['game_id']}/replay").status_code == 404
    taken = play_now(bob).json()
    assert taken["game_id"] != host["game_id"]
    refused_everywhere(bob, f"game/{taken['game_id']}", 404)
    refused_everywhere(bob, f"match/{host['id']}", 404)
    assert jobs(app) == 0
    play_and_give_up(bob, taken["game_id"])
    settle(app)
    match_id = host["id"]
    assert ask(bob, f"match/{match_id}").status_code == 200  # queued at the match's end
    games = done(ada, f"match/{match_id}")["games"]
    assert [g["status"] for g in games] == ["done", "done"] and all(g["chance"]["status"] == "done" for g in games)


def test_a_rated_match_is_queued_at_its_end_only_while_the_sites_budget_allows(
        app: Any, fake_time: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    monkeypatch.setattr(db, "RATED_DAILY_BUDGET", 3)  # room for one match's two games today, not two matches'
    for n, expected in ((0, 2), (1, 2)):
        a, b, live = pair(app, f"anna{n}", f"bruno{n}")
        finish(a, b, live, random.Random(n), moves=2, pace=fake_time)
        a.close()
        b.close()
        assert jobs(app) == expected
        refused = ask(browser(app), f"match/{live.id}")
    assert refused.status_code == 503 and refused.json()["error"] == "busy"  # the second's: over the budget
    assert jobs(app) == 2


def test_nothing_of_a_days_analysis_before_the_day_is_over(app: Any) -> None:
    ada, bea = person(app, "ada"), person(app, "bea")
    game_id = start_day(ada, "teppich").json()["id"]
    with ada.websocket_connect("/ws") as ws:
        join_day(ws, game_id)
        send(ws, "giveup", {"ack": 1})
        reply_to(ws, 1)
    with app.state.store.engine.connect() as connection:
        assert connection.execute(select(AttemptRow.game_id)).scalar() == game_id
    for client in (ada, bea):
        refused_everywhere(client, f"daily/{game_id}", 403)
        refused_everywhere(client, f"game/{game_id}", 404)  # nor as a solo game
        assert client.get(f"/api/games/{game_id}/replay").status_code == 404  # nor its replay as one
    assert jobs(app) == 0
    app.state.daily.wall = lambda: NEXT_DAY_S  # the day is over (UTC)
    assert ask(bea, f"daily/{game_id}").status_code == 202
    assert done(ada, f"daily/{game_id}")["games"][0]["status"] == "done"
    refused_everywhere(ada, f"game/{game_id}", 404)  # a day's game is only ever a day's game


def test_bad_requests_are_told_clearly(app: Any) -> None:
    ada = person(app, "ada")
    assert ada.get("/api/analysis/chess/x1234").json()["error"] == "bad_kind"
    assert ada.get("/api/analysis/match/nosuchmatch").status_code == 404
    assert ada.get("/api/analysis/game/" + "x" * 41).status_code == 404
    forged = ada.post("/api/analysis/game/abcdef", data={"csrf": "forged"}, headers={"accept": "application/json"})
    assert forged.status_code == 403
    assert jobs(app) == 0


def test_a_server_without_analysis_workers_leaves_jobs_to_another(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite3'}"
    application = create_app(database_url=url, password_hasher=FAST_HASH)  # 0 workers: the default of the app
    with running(application) as running_app:
        ada = person(running_app, "ada")
        game_id = solo_game(ada)
        assert ask(ada, f"game/{game_id}").status_code == 202
        time.sleep(1.5)
        assert ada.get(f"/api/analysis/game/{game_id}").json()["games"][0]["status"] == "queued"


def test_a_days_games_are_analysed_in_bulk_on_a_dask_cluster(database_url: str, fake_time: FakeTime,
                                                              seeds: Any) -> None:  # noqa: F811
    import random

    import dask.distributed as distributed  # a test dependency: the cluster path must run in CI

    application = create_app(database_url=database_url, now=fake_time, wall=fake_time, tick_seconds=0.02,
                             save_seconds=0.05, password_hasher=FAST_HASH)  # no analysis worker of its own
    with running(application) as running_app:
        stocked(running_app)
        a, b, live = pair(running_app)
        finish(a, b, live, random.Random(3), moves=3, pace=fake_time)
        a.close()
        b.close()
        ada = person(running_app, "ada")
        game_id = start_day(ada, "teppich").json()["id"]
        with ada.websocket_connect("/ws") as ws:
            join_day(ws, game_id)
            send(ws, "giveup", {"ack": 1})
            reply_to(ws, 1)
        solo = solo_game(ada)  # a solo game is analysed for its player only, never in bulk
        running_app.state.test_portal.call(running_app.state.hub.save)
    store = Store(database_url)
    with store.engine.connect() as connection:  # a match ends on the wall clock; the day's deal is of the test's
        ended_ms = connection.execute(select(MatchRow.ended_ms).where(MatchRow.id == live.id)).scalar_one()
    store.close()
    days = {time.strftime("%Y-%m-%d", time.gmtime(ended_ms / 1000)): "0 newly queued",  # queued at the match's end
            time.strftime("%Y-%m-%d", time.gmtime(fake_time())): "1 newly queued"}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        for day, queued in days.items():
            ended = subprocess.run([sys.executable, "-m", "patience", "analyse", "--day", day, "--database-url",
                                    database_url, "--scheduler", cluster.scheduler_address, "--budget-s", "10",
                                    "--chance-s", str(CHANCE_S)],
                                   capture_output=True, text=True, timeout=300, check=False)
            assert ended.returncode == 0, ended.stderr[-2000:]
            assert queued in ended.stdout and " done, 0 failed" in ended.stdout, ended.stdout
    store = Store(database_url)
    for key in (f"match:{live.id}:0", f"match:{live.id}:1", f"daily:{game_id}"):
        found = db.find(store.engine, key)
        assert found is not None and found["status"] == "done" and found["verdict"]["outcome"] == "given_up"
        assert found["chance"]["status"] == "done"  # the win chance too, on the cluster
    assert db.find(store.engine, f"game:{solo}") is None
    store.close()


@pytest.mark.parametrize(("given", "env"), [(["--analysis-workers", "-1"], ""), (["--analysis-workers", "65"], ""),
                                            ([], "many")])
def test_serve_refuses_a_number_of_analysis_workers_that_is_none(tmp_path: Path, given: list[str], env: str) -> None:
    import os

    ended = subprocess.run([sys.executable, "-m", "patience", "serve", "--data-dir", str(tmp_path), "--port", "1",
                            *given], capture_output=True, text=True, timeout=60, check=False,
                           env={**os.environ, "PATIENCE_ANALYSIS_WORKERS": env})
    assert ended.returncode == 2 and "--analysis-workers is a number of processes from 0 to 64" in ended.stderr
    assert len(ended.stderr.strip().splitlines()) == 1


def test_a_stage_over_its_cpu_budget_stops_with_a_clear_reason_in_a_worker_process() -> None:
    code = ("from patience.server.analysis import OverBudget, cpu_limit, worker_init\nworker_init()\n"
            "try:\n    with cpu_limit(1.0):\n        while True: pass\nexcept OverBudget:\n    print('over')\n")
    ended = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert ended.returncode == 0 and ended.stdout.strip() == "over", ended.stderr


@contextlib.contextmanager
def asked_for(tmp_path: Path, record: dict[str, Any], variant: str,
              **budgets: float) -> Iterator[tuple[Any, TestClient, SavedGame]]:
    """A server on SQLite with one analysis worker process and these stages' CPU budgets, a player of it, and
    their finished solo game of ``record``, whose analysis they asked for: the app, the player, the game."""
    application = create_app(tmp_path, password_hasher=FAST_HASH, analysis_workers=1)
    with running(application) as running_app:
        running_app.state.analyst.budgets.update(budgets)
        ada = person(running_app, "ada")
        game = SavedGame(f"game-{record['game']}-{record['seed']}", ada.cookies.get("patience_id"), record["game"],
                         variant, str(record["seed"]), record, 1000, len(record["actions"]), 0, "given_up")
        running_app.state.store.save_games([game])
        assert ask(ada, f"game/{game.id}").status_code == 202
        yield running_app, ada, game


def test_a_job_whose_worker_process_died_is_taken_again(tmp_path: Path) -> None:
    import os
    import signal

    record = greedy_record("teppich", 900_053, {"waste": True})  # each position takes the solver over 2 s
    with asked_for(tmp_path, record, "waste", verdict=3.0, chance=CHANCE_S) as (running_app, ada, game):
        analyst = running_app.state.analyst
        deadline = time.monotonic() + 60
        while ada.get(f"/api/analysis/game/{game.id}").json()["games"][0]["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        pids = []
        while not pids:  # the worker process is spawned for the job
            pids = list(getattr(analyst._pool, "_processes", {}))
            time.sleep(0.05)
        os.kill(pids[0], signal.SIGKILL)
        body = done(ada, f"game/{game.id}", 120)["games"][0]
        # done on its second claim (whether 3 s of CPU decided every position depends on the machine's
        # speed: the budget kept is the next test's)
        assert body["status"] == "done" and body["verdict"] is not None
        with running_app.state.store.engine.connect() as connection:
            attempts = connection.execute(select(db.AnalysisRow.attempts)
                                          .where(db.AnalysisRow.key == f"game:{game.id}")).scalar_one()
        assert attempts == 2  # taken again after its worker died


def test_a_jobs_chance_stage_fills_the_graph_is_stored_and_keeps_its_cpu_budget(tmp_path: Path) -> None:
    from patience.server.analysis import GRACE_SECONDS

    record = greedy_record("reloaded", 900_001)
    with asked_for(tmp_path, record, "standard", chance=5.0) as (running_app, ada, game):  # short of the whole graph
        analyst = running_app.state.analyst
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + 180
        while (body := ada.get(f"/api/analysis/game/{game.id}").json()["games"][0])["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, body
            if body["verdict"] is not None:
                seen.append(body)
            time.sleep(0.1)
        assert body["status"] == "done", body["error"]
        # the verdict shows first, then the graph fills while the chance stage runs
        assert seen and seen[0]["status"] in ("queued", "running")  # the verdict is read before the chance is done
        filling = [b["chance"] for b in seen if b["chance"] and b["chance"]["status"] == "filling"]
        assert filling and 0 < sum(p is not None for p in filling[0]["positions"]) < len(record["actions"]) + 1
        assert all(p is None or 0 <= p["low"] <= p["chance"] <= p["high"] <= 1 for p in filling[-1]["positions"])
        chance = body["chance"]
        assert chance["status"] == "done" and chance["complete"] is False  # its budget spent, no more
        assert len(chance["positions"]) == len(record["actions"]) + 1 and chance["positions"][0]["samples"] >= 4
        assert len(chance["actions"]) == len(record["actions"])
        assert chance["seconds"] <= 5.0 + GRACE_SECONDS
        assert body["cpu_s"] <= analyst.budgets["verdict"] + 5.0 + 2 * GRACE_SECONDS
        assert set(chance["better_by"]) == set(chance["better_frames"])  # who chose each line's moves
        for number, frames in chance["better_frames"].items():  # a labelled action's better line, to step through
            action = chance["actions"][int(number) - 1]
            assert action["label"] and frames[1]["m"] == action["best_action"]
            assert frames[0]["m"] is None and 2 <= len(frames) <= LINE_MOVES + 1 and all(f["m"] for f in frames[1:])
            assert chance["better_by"][number] in ("solver", "hint", "move")
        again = ada.get(f"/api/analysis/game/{game.id}").json()["games"][0]
        assert again == body  # a second read: the stored result, not worked again
        assert ask(ada, f"game/{game.id}").status_code == 200 and jobs(running_app) == 1
        assert analyst.worked == 1


# -- the better line of a key moment --------------------------------------------------------------------


def replayed(record: dict[str, Any], start: int, frames: list[dict[str, Any]]) -> Any:
    """The session of ``record`` at its action ``start``, then the line's moves, each checked against its frame
    (the rules engine plays every move: the page, which knows no rule, draws what the server sent)."""
    from patience.server.analysis import _session_at
    from patience.server.storage.league import _frame

    session, t = _session_at(record, start)
    assert frames[0] == _frame(session, None, t, True)
    for frame in frames[1:]:
        session.play(frame["m"])
        assert frame == _frame(session, frame["m"], t, True)
    return session


@pytest.mark.parametrize(("game", "options", "seed"), [("reloaded", {}, 7), ("faecher", {}, 9),
                                                       ("teppich", {"waste": True}, 5)])
def test_a_better_line_goes_on_with_the_solvers_win_from_a_winnable_position(
        game: str, options: dict[str, Any], seed: int) -> None:
    from patience.games import get_game
    from patience.server.analysis import LINE_MOVES, better_line
    from patience.solve import Budget, Status, solve, solve_deal

    line = solve_deal(game, seed, options, Budget(seconds=5.0, nodes=300_000, memory_mb=64)).moves
    record = record_of(game, options, seed, [*line[:2], "giveup"])
    state = get_game(game).deal(seed, options)
    for move in line[:2]:
        state._apply(move)
    frames, by = better_line(record, 2, str(line[2]), 5.0)
    assert by == "solver" and frames[1]["m"] == str(line[2])
    assert len(frames) == min(LINE_MOVES, len(line) - 2) + 1  # at most LINE_MOVES moves, the better one first
    session = replayed(record, 2, frames)
    if not session.state.is_won():  # where the line stops, the deal is still won with every card known
        assert solve(session.state, Budget(seconds=5.0, nodes=300_000, memory_mb=64)).status is Status.WON


@pytest.mark.parametrize("game", ["reloaded", "teppich"])
def test_a_better_line_goes_on_with_the_hint_players_moves_where_the_solver_finds_no_win(game: str) -> None:
    from patience.games import get_game
    from patience.server.analysis import LINE_MOVES, better_line
    from test_analysis import _unwinnable_seed

    seed = _unwinnable_seed(game, {})
    record = record_of(game, {}, seed, ["giveup"])
    first = str(get_game(game).deal(seed, {}).legal_moves()[0])
    frames, by = better_line(record, 0, first, 3.0)
    assert by == "hint" and frames[1]["m"] == first and 3 <= len(frames) <= LINE_MOVES + 1
    replayed(record, 0, frames)
    assert better_line(record, 0, first, 0.0) == (frames[:2], "move")  # no time left: the better move alone
    with pytest.raises(PatienceError):  # a move the rules refuse is never drawn
        better_line(record, 0, "t1>t1", 3.0)


def test_the_bulk_path_stores_each_games_verdict_then_its_graph_as_it_fills(tmp_path: Path) -> None:
    """``patience analyse --day`` on this machine's processes: a viewer of a game reads its verdict as soon as
    that game's verdict stage is done, and its win-chance graph while it fills, not only at the end."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from patience.server.analysis import work_queue, worker_init

    store = Store(f"sqlite:///{tmp_path / 'bulk.sqlite3'}")
    store.migrate()
    record = greedy_record("reloaded", 900_001)
    db.enqueue(store.engine, "daily:bulk1", "daily", "bulk1", 0, "reloaded", record, "bulk")
    seen: list[dict[str, Any]] = []
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, ProcessPoolExecutor(1, mp_context=context, initializer=worker_init) as pool:
        worker = threading.Thread(target=work_queue, args=(store, pool), kwargs={
            "at_once": 1, "budgets": {"verdict": 10.0, "chance": 6.0}, "progress": manager.Queue()})
        worker.start()
        while worker.is_alive():
            found = db.find(store.engine, "daily:bulk1")
            if found is not None and found["verdict"] is not None:
                seen.append(found)
            worker.join(0.1)
    done = db.find(store.engine, "daily:bulk1")
    store.close()
    assert done is not None and done["status"] == "done" and done["chance"]["status"] == "done"
    assert seen and seen[0]["status"] in ("queued", "running")  # the verdict, read before the job was done
    sizes = [sum(p is not None for p in s["chance"]["positions"]) for s in seen
             if s["chance"] and s["chance"]["status"] == "filling"]
    assert sizes and sizes[0] < len(record["actions"]) + 1  # the graph, read while it filled
