"""Game analyses through the server: asked for over HTTP, queued in the database, worked by the worker processes.

    python3 benchmarks/analysis_queue.py [--games 9] [--workers 2] [--every 5] [--database-url URL] [--player greedy]

Solitaire Reloaded deals from seed 900,001 on are played out by the greedy player (or the hint player) and
stored as finished solo games of one browser; that browser asks for their analyses one every ``--every``
seconds, as players finish games (``POST /api/analysis/game/{id}``; 0: all at once), and reads them until each
is done (both stages: the verdict with every card known, then the win-chance graph). Printed: the seconds from
the ask to the first verdict and to the full graph (50th and 95th percentile, at most: the queue's wait
included, so they grow with the games asked over the workers; a game asked for while every worker works a win
chance shows its verdict at once all the same), the CPU seconds of each job (both stages, as the worker
measured them), the games analysed a second, and the engine's moves a second (``benchmarks/engine.py``)
beside, for the machine's speed.

Targets (issue 36): with every card known, a typical game in at most 5 s of CPU at the 95th percentile; with
the win chance, at most 60 s of CPU a game at the 95th percentile, queued; the first verdict seen at once (it
is the job's first stage).
"""

from __future__ import annotations

import argparse
import importlib.util
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _analysis_benchmark() -> Any:
    spec = importlib.util.spec_from_file_location("analysis_benchmark", Path(__file__).with_name("analysis.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=9, help="games (the first starts the workers; default 9)")
    parser.add_argument("--workers", type=int, default=2, help="analysis worker processes (default 2)")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between two asks (default 5; 0: at once)")
    parser.add_argument("--database-url", default=None, help="default: an SQLite file in a temporary folder")
    parser.add_argument("--player", choices=("greedy", "hint"), default="greedy")
    args = parser.parse_args(argv)

    from starlette.testclient import TestClient

    from patience.server import create_app
    from patience.server.storage.store import SavedGame

    bench = _analysis_benchmark()
    browser = secrets.token_urlsafe(18)
    games = []
    for seed in range(900_001, 900_001 + args.games):
        record = bench.game_record("reloaded", {}, seed, args.player)
        games.append(SavedGame(secrets.token_urlsafe(12), browser, "reloaded", "standard", str(seed), record,
                               1000, len(record["actions"]), 0, "given_up"))
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
        app = create_app(database_url=url, analysis_workers=args.workers)
        with TestClient(app) as client:
            app.state.analysis_limit = 10**6
            app.state.store.save_games(games)
            client.cookies.set("patience_id", browser)
            token = client.get("/api/me").json()["csrf"]
            asked: dict[str, float] = {}
            first = time.perf_counter()  # the first ask starts the worker processes (spawned when needed)
            warm, games = games[0], games[1:]
            client.post(f"/api/analysis/game/{warm.id}", data={"csrf": token}, headers={"accept": "application/json"})
            while client.get(f"/api/analysis/game/{warm.id}").json()["games"][0]["status"] not in ("done", "failed"):
                time.sleep(0.1)
            spawn = time.perf_counter() - first
            started = time.perf_counter()
            verdict: dict[str, float] = {}
            latency: dict[str, float] = {}
            cpu: dict[str, float] = {}
            deadline = time.monotonic() + 120 * args.games
            while len(latency) < len(games) and time.monotonic() < deadline:
                for game in games:  # the next asks that are due
                    if game.id not in asked and time.perf_counter() >= started + len(asked) * args.every:
                        answer = client.post(f"/api/analysis/game/{game.id}", data={"csrf": token},
                                             headers={"accept": "application/json"})
                        assert answer.status_code == 202, answer.text
                        asked[game.id] = time.perf_counter()
                for game in games:
                    if game.id in latency or game.id not in asked:
                        continue
                    body = client.get(f"/api/analysis/game/{game.id}").json()["games"][0]
                    if body["verdict"] is not None and game.id not in verdict:
                        verdict[game.id] = time.perf_counter() - asked[game.id]
                    if body["status"] in ("done", "failed"):
                        latency[game.id] = time.perf_counter() - asked[game.id]
                        cpu[game.id] = body["cpu_s"]
                time.sleep(0.25)  # the page polls every second
            wall = time.perf_counter() - started
    moves = bench.engine_speed("Solitaire Reloaded", 1.0)
    lat, used, first_seen = list(latency.values()), list(cpu.values()), list(verdict.values())
    print(f"the first analysis of a server that had not started its worker processes: {spawn:.1f} s")
    print(f"{len(lat)} of {len(games)} Solitaire Reloaded games ({args.player} player), asked one every "
          f"{args.every:g} s, analysed by {args.workers} worker processes in {wall:.1f} s: "
          f"{len(lat) / wall:.3f} games/s")
    print(f"ask -> first verdict seconds: p50 {statistics.median(first_seen):.2f}  p95 {pct(first_seen, 0.95):.2f}  "
          f"max {max(first_seen):.2f}")
    print(f"ask -> full graph seconds:    p50 {statistics.median(lat):.2f}  p95 {pct(lat, 0.95):.2f}  "
          f"max {max(lat):.2f}")
    print(f"CPU seconds a game (both stages): p50 {statistics.median(used):.2f}  p95 {pct(used, 0.95):.2f}  "
          f"max {max(used):.2f}")
    print(f"engine: {moves:,.0f} moves/s (benchmarks/engine.py, Solitaire Reloaded)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
