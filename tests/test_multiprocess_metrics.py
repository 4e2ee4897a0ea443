"""``patience serve --metrics-port``: two real processes of one arena (PostgreSQL and Redis) serve their
figures in the Prometheus text format on listeners of their own, after a duel and a solo game; the
public port has no ``/metrics``."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from arena_processes import Player, ServeProcess, free_port, fresh_redis

pytestmark = pytest.mark.slow

FORMAT = "reloaded/standard/300"


def scrape(port: int) -> dict[str, float]:
    """Each sample of ``/metrics``, by its name and labels."""
    answer = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    figures = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            figures[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return figures


@pytest.fixture
def pair(postgres_url: str, redis_server: str, tmp_path: Path) -> Iterator[tuple[list[ServeProcess], list[int]]]:
    redis_url = fresh_redis(redis_server, 12)
    ports = [free_port(), free_port()]
    procs = [ServeProcess(postgres_url, redis_url, tmp_path, name, extra=("--metrics-port", str(port)))
             for name, port in zip(("one", "two"), ports, strict=True)]
    try:
        for proc in procs:
            proc.wait_ready()
        yield procs, ports
    finally:
        for proc in procs:
            proc.stop()


def test_two_processes_serve_their_figures_apart(pair: tuple[list[ServeProcess], list[int]]) -> None:
    (one, two), (port_one, port_two) = pair
    tag = secrets.token_hex(3)
    anna, bruno = Player(one.url, f"anna{tag}"), Player(two.url, f"bruno{tag}")
    anna.open()
    bruno.open()
    anna.seek(FORMAT)
    anna.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)
    bruno.seek(FORMAT)
    match_id = bruno.until(lambda m: m["t"] == "duel")["d"]["id"]
    anna.until(lambda m: m["t"] == "duel")
    for player in (anna, bruno):
        assert player.intent("stock")["t"] == "dev"
    # a solo game on the first process, on a page of its own
    solo = Player(one.url, f"carl{tag}")
    solo.open()
    solo.send("new", {"game": "teppich", "seed": "5", "cid": "solo"})
    solo.until(lambda m: m["t"] == "game")
    assert anna.ws is not None
    anna.ws.send("this is no message")  # refused: counted by its reason
    anna.until(lambda m: m["t"] == "err")

    first, second = scrape(port_one), scrape(port_two)
    for figures in (first, second):
        assert figures[next(k for k in figures if k.startswith("patience_up{"))] == 1
        for name in ("patience_sockets", "patience_players_signed_in", "patience_matches_owned",
                     "patience_solo_games_held", "patience_pairing_waves_total", "patience_group_commits_total",
                     "patience_signin_queue{lane=signin}", "patience_signin_hashing"):
            assert name in figures, (name, sorted(figures))
        assert any(k.startswith("patience_deal_stock{variant=") for k in figures)
    # the match is owned by exactly one of them; the pairer is one of them
    assert first["patience_matches_owned"] + second["patience_matches_owned"] == 1, match_id
    assert first["patience_pairs_made_total"] + second["patience_pairs_made_total"] == 1
    assert first["patience_pairing_waves_total"] + second["patience_pairing_waves_total"] >= 1
    # sockets: anna's and carl's pages on the first, bruno's on the second
    assert first["patience_sockets"] >= 2 and second["patience_sockets"] >= 1
    assert first["patience_players_signed_in"] >= 2 and second["patience_players_signed_in"] >= 1
    assert first["patience_solo_games_held"] >= 1
    assert first["patience_group_commits_total"] + second["patience_group_commits_total"] >= 1
    # events counted as they happen: the intents (timed), group commits, pairing waves, refusals, the bus
    for figures in (first, second):
        assert figures["patience_intent_seconds_count{kind=stock}"] >= 1
        assert 0 < figures["patience_intent_seconds_sum{kind=stock}"] < 10
        assert figures["patience_bus_round_trip_seconds_count"] >= 1
        assert figures["patience_bus_round_trip_seconds_sum"] < 2 * figures["patience_bus_round_trip_seconds_count"]
    assert first["patience_intent_seconds_count{kind=new}"] >= 1
    assert sum(v for k, v in first.items() if k.startswith("patience_refused_messages_total{")) >= 1
    commits = first["patience_group_commit_seconds_count"] + second["patience_group_commit_seconds_count"]
    assert commits >= 1
    assert first["patience_group_commit_batch_sum"] + second["patience_group_commit_batch_sum"] >= commits
    assert first["patience_pairing_wave_seconds_count"] + second["patience_pairing_wave_seconds_count"] >= 1
    pools = [k for figures in (first, second) for k in figures if k.startswith("patience_pool_seekers{pool=")]
    assert pools, "the pairer shows its pools"
    # the public port does not serve the figures
    for proc in (one, two):
        answer = httpx.get(f"{proc.url}/metrics")
        assert answer.status_code == 404 and "patience_up" not in answer.text
    for player in (anna, bruno, solo):
        player.close()


def test_metrics_refused_with_workers_and_on_a_taken_port(tmp_path: Path) -> None:
    from patience.cli import main

    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    assert main(["serve", "--database-url", url, "--metrics-port", "9", "--workers", "2",
                 "--redis-url", "redis://127.0.0.1:6379/0"]) == 2
    assert main(["serve", "--database-url", url, "--metrics-port", "70000"]) == 2
