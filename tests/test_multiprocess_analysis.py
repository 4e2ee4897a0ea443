"""Game analyses across real ``patience serve`` processes on PostgreSQL and Redis: a job asked for on a process
without analysis workers is taken from the shared queue by another process's worker, and its result is read on
both; and nothing of it is shown before the game has ended, on either process."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from arena_processes import Player, ServeProcess, fresh_redis


def ask(player: Player, path: str) -> Any:
    token = player.http.get("/api/me").json()["csrf"]
    return player.http.post(f"/api/analysis/{path}", data={"csrf": token}, headers={"accept": "application/json"})


def test_a_job_asked_on_one_process_is_worked_on_another_and_read_on_both(
        postgres_url: str, redis_server: str, tmp_path: Path) -> None:
    redis_url = fresh_redis(redis_server, 8)
    worker = ServeProcess(postgres_url, redis_url, tmp_path, "worker", ("--analysis-workers", "1"))
    front = ServeProcess(postgres_url, redis_url, tmp_path, "front", ("--analysis-workers", "0"))
    try:
        worker.wait_ready()
        front.wait_ready()
        ada = Player(front.url, "ada", "127.0.8.1")
        ada.open()
        ada.send("new", {"game": "teppich", "seed": "3", "cid": ada.cid})
        game_id = ada.until(lambda m: m["t"] == "game")["d"]["id"]
        for server in (front, worker):  # going on: nothing of it on any process (403, or 404 while not yet saved)
            ada.move_to(server.url)
            early = ask(ada, f"game/{game_id}")
            assert early.status_code in (403, 404) and "games" not in early.json()
        ada.send("giveup", {"ack": 1})
        ada.until(lambda m: m["d"].get("ack") == 1)
        ada.close()
        ada.move_to(front.url)
        asked = ask(ada, f"game/{game_id}")
        assert asked.status_code == 202, asked.text
        deadline = time.monotonic() + 300  # both stages: the win chance takes up to 40 s of CPU, on a busy machine
        while True:
            body = ada.http.get(f"/api/analysis/game/{game_id}").json()
            if body["games"][0]["status"] == "done":
                break
            assert time.monotonic() < deadline, (body, worker.log(), front.log())
            time.sleep(0.3)
        ada.move_to(worker.url)
        there = ada.http.get(f"/api/analysis/game/{game_id}").json()
        assert there == body and there["games"][0]["verdict"]["outcome"] == "given_up"
        chance = there["games"][0]["chance"]  # the win chance, worked on the other process too
        assert chance["status"] == "done" and chance["positions"][0]["samples"] > 0 and chance["result"] == 0.0
        assert ask(ada, f"game/{game_id}").status_code == 200  # once, stored: asked again on any process
        stranger = Player(worker.url, "bea", "127.0.8.2")
        assert stranger.http.get(f"/api/analysis/game/{game_id}").status_code == 404
    finally:
        front.stop()
        worker.stop()
