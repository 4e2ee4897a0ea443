"""Pages that ask for one match at the same instant (after a restart, say): each gets the match, or
``no_such_match`` for an id that is none, never a ``server_error`` "being restored: reconnect" that sends
it round again while another page's take-over of the match is under way."""

from __future__ import annotations

import time
from typing import Any

import pytest

import patience.server.arena.owned
from helpers import FakeTime
from test_server_duel import Page, browser, make_app, pair, running
from test_server_duel import seeds as seeds  # a fixture

PAGES = 6  # a side's pages asking at once


def test_pages_asking_for_one_match_at_once_get_it_or_no_such_match(database_url: str, fake_time: FakeTime,
                                                                      seeds: Any, monkeypatch: pytest.MonkeyPatch
                                                                      ) -> None:
    read = patience.server.arena.owned.saved_matches

    def slowly(*args: Any, **kwargs: Any) -> Any:  # a loaded database: the take-over's read takes a while
        time.sleep(0.2)
        return read(*args, **kwargs)

    monkeypatch.setattr(patience.server.arena.owned, "saved_matches", slowly)
    with running(make_app(database_url, fake_time)) as app:
        a, b, live = pair(app)
        owned = app.state.arena.owned
        token = owned.leases[live.id]

        async def let_go() -> None:  # as when the lease is lost: nobody plays it until a page asks
            owned._let_go(live.id)
            await owned.bus.release(f"match:{live.id}", token)

        app.state.test_portal.call(let_go)
        pages = []
        for n in range(PAGES):
            for side, first in enumerate((a, b)):
                client = browser(app)
                client.cookies = first.client.cookies
                pages.append(Page(client, f"p{side}n{n}"))
        for page in pages:  # all at once: the first starts the take-over, the others come during it
            page.join(live.id, 0)
        answers = [page.until(lambda m: m["t"] == "duel" or (m["t"] == "err" and m["d"]["code"] != "replaced"),
                              faults=True) for page in pages]  # (a side's later page replaces its earlier ones)
        assert [m["t"] for m in answers] == ["duel"] * len(pages), [m["d"] for m in answers if m["t"] == "err"]
        assert {m["d"]["id"] for m in answers} == {live.id}

        for page in pages:  # an id that is no match, asked for at once: no_such_match for each
            page.join("nomatch0000000000000", 0)
        answers = [page.until(lambda m: m["t"] == "err" and m["d"]["code"] != "replaced", faults=True)["d"]["code"]
                   for page in pages]
        assert answers == ["no_such_match"] * len(pages)
        for page in (*pages, a, b):
            page.close()
