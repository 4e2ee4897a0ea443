"""``/metrics`` of one ``patience serve`` process, in the Prometheus text format, on a listener of its own.

Nothing here counts as play goes on: :class:`ArenaCollector` reads, at each scrape, the figures the
services already keep (the live matches owned, the solo games held, the sockets, the pairer's waves,
the group writer's batches, the sign-in queues, the deal stock). The listener is started only by
``patience serve --metrics-port N`` (on 127.0.0.1 unless ``--metrics-host`` says otherwise): the
figures are for the people who run the site, never on the public port.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

import patience.server.figures as figures

__all__ = ["ArenaCollector", "registry_for", "serve_metrics"]


class ArenaCollector(Collector):
    """The figures of the app's services, read when scraped (an app not started yet gives only ``patience_up``)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def collect(self) -> Iterable[Metric]:
        state = self.app.state
        up = GaugeMetricFamily("patience_up", "1 while the process serves (its services started)",
                               labels=["process"])
        arena = getattr(state, "arena", None)
        hub = getattr(state, "hub", None)
        up.add_metric([f"{socket.gethostname()}-{os.getpid()}"], 1.0 if arena is not None else 0.0)
        yield up
        if arena is None or hub is None:
            return
        yield from self._sockets(arena, hub)
        yield GaugeMetricFamily("patience_matches_owned", "live duels this process plays (owns)",
                                value=len(arena.owned.matches))
        yield CounterMetricFamily("patience_match_takeovers", "matches this process took over from one that stopped",
                                  value=arena.owned.takeovers)
        yield GaugeMetricFamily("patience_solo_games_held", "solo games held in this process's memory",
                                value=len(hub.games))
        yield CounterMetricFamily("patience_pairing_waves", "pairing waves this process ran as the pairer",
                                  value=arena.pools.waves)
        yield CounterMetricFamily("patience_pairs_made", "pairs the pairing waves of this process made",
                                  value=arena.pools.made)
        writer = arena.writer
        yield CounterMetricFamily("patience_group_commits", "group commits (batches) written", value=writer.batches)
        yield CounterMetricFamily("patience_group_commit_rows", "jobs written by the group commits",
                                  value=writer.rows)
        seekers = GaugeMetricFamily("patience_pool_seekers", "seekers waiting per pool at the last pairing wave "
                                    "(the pairer's figure)", labels=["pool"])
        for pool, count in sorted(arena.pools.seekers.items()):
            seekers.add_metric([pool], count)
        yield seekers
        self._bus_round_trip(arena)
        yield from self._hashing(arena.hashing)
        yield from self._stock(arena.deals)

    def _sockets(self, arena: Any, hub: Any) -> Iterator[Metric]:
        conns: set[Any] = set(arena.peers.values()) | set(arena.view.watchers)
        for game in list(hub.games.values()):
            conns |= set(game.conns)
        users = {conn.user.id for conn in conns if getattr(conn, "user", None) is not None}
        yield GaugeMetricFamily("patience_sockets", "play sockets of this process seen by the games and the arena",
                                value=len(conns))
        yield GaugeMetricFamily("patience_players_signed_in", "signed-in accounts among this process's sockets",
                                value=len(users))
        yield GaugeMetricFamily("patience_lobby_watchers", "lobby pages of this process",
                                value=len(arena.view.watchers))
        summary = getattr(arena.view, "_last", None)
        if summary is not None:
            yield GaugeMetricFamily("patience_arena_online", "players online in the whole arena (the pairer's count)",
                                    value=summary[0].online)
            yield GaugeMetricFamily("patience_arena_playing", "players in a duel in the whole arena",
                                    value=summary[0].playing)

    def _bus_round_trip(self, arena: Any) -> None:
        """Time one bus command from the app's event loop (at most once a second; a bus that does not
        answer within 2 s is counted in the last bucket)."""
        now = time.monotonic()
        if now - getattr(self, "_timed", 0.0) < 1.0 or not arena._tasks:
            return
        self._timed = now
        loop = arena._tasks[0].get_loop()

        async def command() -> float:
            started = time.perf_counter()
            await arena.bus.hget("metrics", "round-trip")
            return time.perf_counter() - started

        try:
            figures.BUS_SECONDS.observe(asyncio.run_coroutine_threadsafe(command(), loop).result(timeout=2.0))
        except Exception:
            figures.BUS_SECONDS.observe(2.0)

    def _hashing(self, hashing: Any) -> Iterator[Metric]:
        queued = GaugeMetricFamily("patience_signin_queue", "password checks waiting, per lane", labels=["lane"])
        for lane, waiting in hashing._queues.items():
            queued.add_metric([lane], len(waiting))
        yield queued
        yield GaugeMetricFamily("patience_signin_hashing", "password hashes being computed now",
                                value=hashing.running)

    def _stock(self, deals: Any) -> Iterator[Metric]:
        from patience.server.arena.dealstock import stock_counts

        figures = deals.figures()
        yield CounterMetricFamily("patience_deals_proved", "deal keys this process proved winnable and kept",
                                  value=figures["proved"])
        yield CounterMetricFamily("patience_deals_dropped", "deal keys not proved (unwinnable or undecided)",
                                  value=figures["dropped"])
        stock = GaugeMetricFamily("patience_deal_stock", "deals proved winnable waiting, per duel variant",
                                  labels=["variant"])
        try:
            counts = stock_counts(deals.store.engine)
        except Exception:  # a database that does not answer: the other figures are still served
            counts = {}
        for variant, count in sorted(counts.items()):
            stock.add_metric([variant], count)
        yield stock


def registry_for(app: Any) -> CollectorRegistry:
    """A registry of this process alone, with the app's figures."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ArenaCollector(app))
    for instrument in figures.ALL:
        registry.register(instrument)
    return registry


class ErrorCounter(logging.Handler):
    """Counts the log lines at level error or worse, by logger and exception type."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)

    def emit(self, record: logging.LogRecord) -> None:
        kind = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else "none"
        figures.ERRORS.labels(record.name, kind).inc()


def serve_metrics(app: Any, host: str, port: int) -> threading.Thread:
    """Serve ``/metrics`` of ``app`` on ``host:port`` in a thread (raises OSError when it cannot listen)."""
    from prometheus_client import start_http_server

    _server, thread = start_http_server(port, addr=host, registry=registry_for(app))
    for name in ("patience", "uvicorn.error"):
        logging.getLogger(name).addHandler(ErrorCounter())
    return thread

