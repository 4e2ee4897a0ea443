"""The app's stop leaves no database work behind it: what a background job has under way on a worker thread
(fair play analysing a rated game, then scoring its account) ends before the stop returns and the engine
is let go, never after. On PostgreSQL a thread still writing after the stop held locks on a schema that a
test's teardown then dropped: the DROP waited, or deadlocked."""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

import psycopg
from sqlalchemy import event
from sqlalchemy.engine import make_url

from helpers import FakeTime
from patience.server.solo.hints import hint as search_hint
from test_ladder import _try
from test_server_duel import make_app, pair, running
from test_server_duel import seeds as seeds  # the fixture: duels deal from known keys

HOLD_S = 10.0  # how long the first hint of the analysis waits for the app to begin stopping, at most


def _connections_named(url: str, name: str) -> int:
    """The open connections to the database of ``url`` whose application_name is ``name``."""
    plain = make_url(url).set(query={})
    dsn = plain.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)).fetchone()
    assert row is not None
    return int(row[0])


def test_no_database_work_outlives_the_apps_stop(postgres_url: str, fake_time: FakeTime, seeds: Any) -> None:
    name = f"stop-{secrets.token_hex(4)}"  # the app's connections, told apart from every other in pg_stat_activity
    url = make_url(postgres_url).update_query_dict({"application_name": name}).render_as_string(hide_password=False)
    application = make_app(url, fake_time)
    in_analysis = threading.Event()
    disposed = threading.Event()
    late: list[str] = []  # what checked a connection out once the app had let its engine go

    with running(application) as app:
        fairplay = app.state.fairplay
        engine = app.state.store.engine

        def held_hint(session: Any) -> Any:
            """The analysis's first hint waits until the app has begun to stop: a game is being analysed then."""
            if not in_analysis.is_set():
                in_analysis.set()
                deadline = time.monotonic() + HOLD_S
                while not getattr(fairplay, "stopping", False) and time.monotonic() < deadline:
                    time.sleep(0.01)
            return search_hint(session)

        fairplay.hint = held_hint
        event.listen(engine, "engine_disposed", lambda _engine: disposed.set())
        event.listen(engine, "checkout", lambda *_: disposed.is_set() and late.append(threading.current_thread().name))
        a, b, live = pair(app, "anna", "bruno")
        played: tuple[set[str], set[str]] = (set(), set())
        for _ in range(40):  # both play: the games have open decisions, which the analysis asks the hint about
            if all(len(p) >= 8 for p in played) or any(s.is_over for s in live.match.sessions):
                break
            for page in (a, b):
                _try(page, live, fake_time, played[page.side])
        a.intent("giveup")
        b.intent("giveup")  # the rated match ends: its games' evidence goes to fair play
        assert in_analysis.wait(60), "no game of the match was analysed"
        a.close()
        b.close()
    # the app has stopped; a thread it left behind would finish the analysis and write it now
    deadline = time.monotonic() + HOLD_S + 30
    while fairplay.analysed < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fairplay.analysed >= 1  # the game under way was analysed and written (before the stop: see below)
    assert disposed.is_set()
    assert late == [], f"database work after the app stopped, on {late}"
    assert engine.pool.checkedout() == 0
    assert _connections_named(postgres_url, name) == 0  # and no connection of the app left open
