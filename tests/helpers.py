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

__all__ = ["FakeTime", "TestClient", "at_a_scripts_pace", "mentioned_cards"]


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
