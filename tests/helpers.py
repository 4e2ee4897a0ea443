"""What the server tests share: the test client, a clock the test moves, and the cards a message names.

The ``fake_time`` fixture (tests/conftest.py) is a :class:`FakeTime`; an app under test takes it as
its clock of games (``now``) and, where accounts or challenges matter, as its wall clock (``wall``)
too, so that a test moves time for everything at once.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

with warnings.catch_warnings():  # the test client's note about its HTTP library is not ours to act on
    warnings.filterwarnings("ignore", message=".*httpx.*")
    from starlette.testclient import TestClient

__all__ = ["FakeTime", "TestClient", "at_a_scripts_pace", "greedy_record", "mentioned_cards", "record_of"]


class FakeTime:
    """The server's clocks, moved by the test."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t


def at_a_scripts_pace(app: Any) -> None:
    """Let the sockets that ``app`` (started) opens from now on send as fast as a script: a test that
    plays whole games is not held to a page's pace, 8 messages a second a socket and 50 an address,
    60 new games a minute an address (that pace is tests/test_server_flood.py's)."""
    from patience.server.transport.budget import Budgets

    fast = 1_000_000
    app.state.router.budgets = Budgets(socket_rate=fast, socket_burst=fast, address_rate=fast, address_burst=fast,
                                       address_new_games=fast, address_new_games_burst=fast)


_DISPLAY = re.compile(r"(10|[2-9AJQK])([♠♥♦♣])")
_TEXT = re.compile(r"^(10|[2-9AJQK])([SHDC])$")


def mentioned_cards(value: Any) -> set[str]:
    """Every card a message names: card texts ("QH") and cards in sentences ("Q♥").

    >>> sorted(mentioned_cards({"a": ["QH", "7♣ cannot go on 8♣"], "b": "nothing"}))
    ['7C', '8C', 'QH']
    """
    found: set[str] = set()
    if isinstance(value, str):
        if _TEXT.match(value):
            found.add(value)
        for rank, symbol in _DISPLAY.findall(value):
            found.add(rank + "SHDC"["♠♥♦♣".index(symbol)])
    elif isinstance(value, dict):
        for item in value.values():
            found |= mentioned_cards(item)
    elif isinstance(value, list):
        for item in value:
            found |= mentioned_cards(item)
    return found


def run_async(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run(main())`` on a thread of its own: the browser tests' Playwright keeps an event
    loop running on the main thread for the whole session, where ``asyncio.run`` is refused."""
    import asyncio
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(main())).result()


def opponents_for_the_board(store: Any, n: int = 4) -> list[str]:
    """``n`` accounts 10 days old that have played each other in earnest (through the ladder's storage,
    tests/test_ladder.py's matches): opponents whose rated matches count for the board's entry rule."""
    import itertools

    from test_ladder import play, user

    people = [user(store, f"o{k}") for k in range(n)]
    for one, two in itertools.combinations(people, 2):
        play(store, one, two, "play")
        play(store, two, one, "play")
    return people


def establish(store: Any, user_id: str, opponents: list[str] | None = None) -> str:
    """Make the account ``user_id`` meet the deal of the day's entry rule (docs/fairplay.md) the way a
    player does: it is made 8 days old (the test cannot wait a week) and wins 6 rated matches, through the
    ladder's storage, against 3 opponents who played them in earnest and share no browser nor address with
    it. The rule itself (patience.server.storage.daily.entered) is not touched."""
    import time

    from sqlalchemy import update

    from patience.server.storage.daily import entered
    from patience.server.storage.store import UserRow
    from test_ladder import play

    people = opponents if opponents is not None else opponents_for_the_board(store)
    with store.engine.begin() as c:
        c.execute(update(UserRow).where(UserRow.id == user_id, UserRow.created_ms > time.time() * 1000 - 8 * 86_400_000)
                  .values(created_ms=int(time.time() * 1000) - 8 * 86_400_000))
    for n in range(6):
        play(store, user_id, people[n % 3], "play")
    time.sleep(0.002)  # the attempt begins after the matches, on the millisecond clock
    assert entered(store.engine, user_id), "the account does not meet the entry rule"
    return user_id


def user_id_of(app: Any, login: str) -> str:
    """The id of the account signed up as ``login`` in ``app``."""
    from sqlalchemy import select

    from patience.server.storage.store import UserRow

    with app.state.store.engine.connect() as c:
        return str(c.scalar(select(UserRow.id).where(UserRow.login == login.lower())))


def established_person(app: Any, login: str, opponents: list[str] | None = None, address: str | None = None) -> Any:
    """tests/test_server_duel.py's ``person`` (a browser signed in to an account of its own) whose account
    meets the deal of the day's entry rule (:func:`establish`): it is dealt the day's deal."""
    from test_server_duel import person

    client = person(app, login, address)
    establish(app.state.store, user_id_of(app, login), opponents)
    return client


def record_of(game: str, options: dict[str, Any], seed: int, actions: list[Any]) -> dict[str, Any]:
    """The record of a game of these actions (moves, or texts such as ``undo`` and ``giveup``), 100 ms apart."""
    from patience.games import Move
    from patience.session import ManualClock, Session

    clock = ManualClock()
    session = Session(game, seed, options, clock=clock)
    for action in actions:
        clock.advance(0.1)
        if isinstance(action, Move):
            session.play(action)
        else:
            session.apply_action(action)
    return session.record()


def greedy_record(game: str, seed: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """A game played out by the greedy player, given up where it stops short of a win, its moves 100 ms apart."""
    from patience.games import get_game
    from patience.session import ManualClock, Session
    from patience.solve.greedy import play_greedy

    _, moves = play_greedy(get_game(game).deal(seed, options or {}))
    clock = ManualClock()
    session = Session(game, seed, options or {}, clock=clock)
    for move in moves:
        clock.advance(0.1)
        session.play(move)
    if session.outcome is None:
        session.give_up()
    return session.record()
