"""The app's storage: migrations, WAL, saving games, statistics, and rebuilding a game from its log.

Every test that stores something runs on SQLite and on PostgreSQL (the ``database_url`` fixture).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.orm import Session

from patience.errors import IllegalMoveError
from patience.games import Outcome
from patience.server.live import GameClock
from patience.server.solo.hub import LiveGame, restore
from patience.server.storage.store import GameRow, SavedGame, Store, metadata, sqlite_url
from patience.session import Session as GameSession


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    s = Store(database_url)
    s.migrate()
    yield s
    s.close()


def saved(game_id: str, outcome: str | None, score: int = 10, browser: str = "browser-one", game: str = "teppich",
          ) -> SavedGame:
    return SavedGame(game_id, browser, game, None, "7", {"format": "patience-record"}, 1000, 3, score, outcome)


def test_migrations_make_the_schema_of_the_models(store: Store) -> None:
    with store.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    store.migrate()  # a second run is a no-op


def test_the_sqlite_file_is_in_wal_mode(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "db.sqlite3"))
    store.migrate()
    store.close()
    with sqlite3.connect(tmp_path / "db.sqlite3") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_saving_twice_updates_one_row_and_the_end_is_kept(store: Store) -> None:
    store.save_games([saved("game-0001", None, 5)])
    store.save_games([saved("game-0001", "won", 52)])
    back = store.load_game("game-0001")
    assert back is not None and back.outcome == "won" and back.score == 52
    assert store.load_game("nope-0000") is None
    with Session(store.engine) as db:
        ended = db.get(GameRow, "game-0001").ended_ms  # type: ignore[union-attr]
        assert ended is not None
    store.save_games([saved("game-0001", "won", 52)])
    with Session(store.engine) as db:
        assert db.get(GameRow, "game-0001").ended_ms == ended  # type: ignore[union-attr]
        assert db.query(GameRow).count() == 1


def test_statistics_count_finished_games_and_streaks(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # games end one after the other; saved within one millisecond, their order would be the database's choice
    clock = iter(range(1_000_000, 2_000_000, 10))
    monkeypatch.setattr("patience.server.storage.store.now_ms", lambda: next(clock))
    outcomes = ["won", "won", "no_moves", "won", "won", "won", "given_up", "won"]
    for i, outcome in enumerate(outcomes):
        store.save_games([saved(f"game-{i:04}", outcome, score=10 * i)])
    store.save_games([saved("game-live", None, score=999)])
    store.save_games([saved("other-0001", "won", score=5000, browser="browser-two")])
    figures = store.stats("browser-one")["teppich"]
    assert (figures.played, figures.won, figures.best) == (8, 6, 70)
    assert figures.win_percent == 75.0
    assert (figures.streak, figures.best_streak) == (1, 3)
    assert store.stats("browser-one")["reloaded"].played == 0
    assert [g.id for g in store.unfinished("browser-one")] == ["game-live"]


def test_a_game_comes_back_from_its_log_exactly() -> None:
    now = [100.0]
    clock = GameClock(lambda: now[0])
    clock.go_live()
    session = GameSession("faecher", 11, clock=clock)
    live = LiveGame("game-restore", "browser-one", session, clock, None, lambda: now[0])
    state = session.state
    for _ in range(12):
        move = state.useful_moves()[0]
        now[0] += 1.5
        session.play(move)
    now[0] += 2
    with pytest.raises(IllegalMoveError):
        session.play("v1>v2")  # a wrong click: logged, and charged
    record = live.saved()
    back = restore(record, lambda: now[0])
    assert back.session.state.position() == state.position()
    assert back.session.score == session.score
    assert [e.to_dict() for e in back.session.ledger] == [e.to_dict() for e in session.ledger]
    assert back.session.elapsed_ms() == session.elapsed_ms()
    now[0] += 5  # the restored game's clock goes on from where it stood
    assert back.session.elapsed_ms() == record.ms + 5000


def test_a_finished_game_comes_back_finished() -> None:
    now = [0.0]
    clock = GameClock(lambda: now[0])
    clock.go_live()
    session = GameSession("reloaded", 3, clock=clock)
    now[0] = 301.0
    session.tick()
    assert session.outcome == Outcome.TIME_OUT
    live = LiveGame("game-timeout", "b" * 20, session, clock, None, lambda: now[0])
    back = restore(live.saved(), lambda: now[0])
    assert back.session.outcome == Outcome.TIME_OUT
    assert back.session.score == session.score


def test_statistics_per_variant_with_wins_helped_by_a_hint_apart(store: Store,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter(range(1_000_000, 2_000_000, 10))
    monkeypatch.setattr("patience.server.storage.store.now_ms", lambda: next(clock))
    games = [  # variant, outcome, score, hints
        ("4x5", "no_moves", 12, 0), ("4x5", "won", 52, 0), ("4x5", "no_moves", 9, 0),
        ("waste", "won", 52, 0), ("waste", "won", 52, 2), ("waste", "no_moves", 30, 0), ("waste", "won", 52, 0),
        (None, "no_moves", 40, 1),
    ]
    for i, (variant, outcome, score, hints) in enumerate(games):
        store.save_games([SavedGame(f"v-{i}", "browser-v", "teppich", variant, "7", {"format": "patience-record"},
                                    1000, 3, score, outcome, hints)])
    store.save_games([SavedGame("v-other", "browser-w", "teppich", "4x5", "7", {"format": "patience-record"},
                                1000, 3, 52, "won", 0)])
    figures = store.stats("browser-v")["teppich"]
    assert (figures.played, figures.won, figures.won_hinted, figures.best) == (8, 3, 1, 52)
    four, waste, custom = (figures.variants[name] for name in ("4x5", "waste", "custom"))
    assert (four.played, four.won, four.won_hinted, four.best, four.win_percent) == (3, 1, 0, 52, 33.3)
    assert (waste.played, waste.won, waste.won_hinted, waste.best, waste.win_percent) == (4, 2, 1, 52, 50.0)
    assert (waste.streak, waste.best_streak) == (1, 1)  # a win helped by a hint ends a streak
    assert (custom.played, custom.best) == (1, None)  # its one game had a hint: no best without one
    assert figures.to_dict()["variants"]["waste"]["won_hinted"] == 1
    # an account's figures: the games of all its browsers
    both = store.stats(["browser-v", "browser-w"])["teppich"]
    assert (both.played, both.variants["4x5"].won) == (9, 2)
    # the hints are kept: the game comes back with them
    loaded = store.load_game("v-4")
    assert loaded is not None and loaded.hints == 2


def test_a_pages_last_intent_is_kept_with_its_game_and_never_goes_back(store: Store) -> None:
    from patience.server.storage.store import write_acks

    store.save_games([saved("g-acks", None)])
    with store.engine.begin() as connection:  # one batch: two intents of one page, one of another
        write_acks(connection, [("g-acks", "page", 4, 9, b'{"t":"ev","v":9}'), ("g-acks", "page", 5, 11, b'{"v":11}'),
                                ("g-acks", "tab2", 1, 10, b'{"v":10}')])
    with store.engine.begin() as connection:  # an older ack that arrives late changes nothing
        write_acks(connection, [("g-acks", "page", 3, 7, b'{"v":7}')])
    loaded = store.load_game("g-acks")
    assert loaded is not None and loaded.acks == {"page": (5, 11, b'{"v":11}'), "tab2": (1, 10, b'{"v":10}')}
    store.save_games([saved("g-none", None)])
    none = store.load_game("g-none")
    assert none is not None and none.acks == {}
