"""A duel in real browsers: two people (two Chromium contexts) sign up, meet in the lobby, play
the same deal on one clock, see each other's progress, and read the result, then the replay.

The server runs in this process, so the test fixes the deal key the server draws: a Solitaire
Reloaded deal with an Ace to move at once.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterator
from typing import Any

import browser_accounts
import pytest
from playwright.sync_api import expect

from patience.games import get_game

pytestmark = pytest.mark.slow

FORMAT = "reloaded/standard/300"


def ace_deal() -> tuple[str, str, str]:
    """A deal key whose deal shows an Ace on top of a pile with cards under it: (key, the Ace, its pile)."""
    cls = get_game("reloaded")
    for number in range(500):
        seed = hashlib.sha256(f"ace {number}".encode()).hexdigest()
        state = cls.deal(seed)
        for move in state.legal_moves():
            if move.dst == "f" and move.src.startswith("t") and len(state.piles()[move.src]) > 1:  # a card turns up
                return seed, state.piles()[move.src][-1][0].text, move.src
    raise AssertionError("no such deal")


@pytest.fixture
def two(browser: Any) -> Iterator[tuple[Any, Any]]:
    pages = []
    contexts = []
    errors: list[str] = []
    for _ in range(2):
        context = browser.new_context(viewport={"width": 1200, "height": 800}, locale="en-US")
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        contexts.append(context)
        pages.append(page)
    yield pages[0], pages[1]
    for context in contexts:
        context.close()
    assert not errors, f"errors in the pages: {errors}"


def sign_up(page: Any, base_url: str, login: str, name: str) -> None:
    browser_accounts.sign_up(page, base_url, login, name)
    expect(page.locator('.pool[data-format="reloaded/standard/300"]')).to_be_visible()


def test_a_duel_between_two_browsers_to_its_result(two: tuple[Any, Any], base_url: str, shot: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    seed, ace, pile = ace_deal()
    monkeypatch.setattr("patience.server.arena.dealstock.new_deal_key", lambda: seed)
    anna, bruno = two
    sockets: list[Any] = []
    through = {"on": True}

    def socket(route: Any) -> None:  # Anna's play connection goes through the test, which may cut it
        sockets.append(route)
        if through["on"]:
            route.connect_to_server()

    anna.route_web_socket(re.compile(r"/ws$"), socket)
    tag = secrets.token_hex(3)
    sign_up(anna, base_url, f"anna{tag}", "Anna")
    sign_up(bruno, base_url, f"bruno{tag}", "Bruno")
    pool_b = bruno.locator(f'.pool[data-format="{FORMAT}"]')
    expect(pool_b.locator(".pool-count")).to_have_text("Nobody waiting")

    anna.locator(f'.pool[data-format="{FORMAT}"] .seek').click()
    expect(anna.locator("#wait-box")).to_be_visible()
    expect(pool_b.locator(".pool-count")).to_have_text("1 waiting")  # the lobby says who waits
    expect(pool_b.locator(".pool-queue")).to_contain_text("Anna")
    shot(bruno, "duel-lobby")

    # her connection drops (as in a restart): the server lets her go; her page comes back and queues again
    through["on"] = False
    cut = len(sockets)
    sockets[-1].close()
    expect(pool_b.locator(".pool-count")).to_have_text("Nobody waiting")
    for _ in range(100):  # her page reconnects, to nowhere for now
        if len(sockets) > cut:
            break
        anna.wait_for_timeout(50)
    assert len(sockets) > cut
    through["on"] = True
    sockets[-1].close()
    expect(pool_b.locator(".pool-count")).to_have_text("1 waiting")
    expect(anna.locator("#wait-box")).to_be_visible()

    pool_b.locator(".seek").click()
    for page in (anna, bruno):
        expect(page.locator("#arena")).to_be_visible()
        page.wait_for_selector(".card.up")
    commitment = anna.locator("#commit-short").get_attribute("title")  # shown from the start
    assert commitment is not None and len(commitment) == 64
    assert bruno.locator("#commit-short").get_attribute("title") == commitment
    expect(anna.locator("#opp-name")).to_contain_text("Bruno")
    expect(bruno.locator("#opp-name")).to_contain_text("Anna")

    # Anna puts the Ace on its foundation; Bruno sees her score and her foundation, never her cards
    anna.locator(f'.card[data-card="{ace}"]').click()
    anna.locator(f'.slot[data-pile="f{ace[-1].lower()}"]').click()
    anna.wait_for_selector(f'.card[data-card="{ace}"][data-pile="f{ace[-1].lower()}"]', state="attached")
    expect(anna.locator("#score")).to_have_text("15")  # 10 × Ace, and +5 for the card turned up
    expect(anna.locator("#undos-left")).to_have_text("(1 of 3)")  # undos in store of the most, as in solo play
    expect(bruno.locator("#opp-score")).to_have_text("15")
    expect(bruno.locator("#opp-found")).to_have_text("1/52")
    expect(bruno.locator("#opp-moves")).to_have_text("1")
    assert bruno.locator(f'.card[data-card="{ace}"][data-pile^="f"]').count() == 0
    shot(bruno, "duel-opponent-progress")

    bruno.keyboard.press("d")  # a card drawn: Bruno's own game goes on
    expect(bruno.locator('.card[data-pile="w"]')).to_have_count(1)
    bruno.locator("#giveup").click()
    bruno.locator("#confirm-yes").click()
    expect(bruno.locator("#giveup")).to_be_disabled()
    expect(anna.locator("#opp-outcome")).to_have_text("Given up")
    anna.locator("#giveup").click()
    anna.locator("#confirm-yes").click()

    # the result: the winner's bonus (RULES.md: 10 %, at least 100), ratings, the deal key that opens the commitment
    for page, title in ((anna, "You won!"), (bruno, "You lost")):
        expect(page.locator("#result")).to_be_visible()
        expect(page.locator("#result-title")).to_have_text(title)
        expect(page.locator("#verify")).to_have_text(f"✓ the deal key {seed} opens the commitment shown at the start")
    expect(anna.locator("#commitment")).to_have_text(commitment)
    you = anna.locator('#result-rows tr[data-side="you"] td')
    expect(you.nth(0).locator(".result-name")).to_have_text("Anna (You)")
    expect(you.nth(0).locator(".result-how")).to_have_text("Given up")  # how her game ended, a line of its own
    expect(you.nth(1)).to_have_text("15")
    expect(you.nth(2)).to_have_text("+100")
    expect(you.nth(3)).to_have_text("115")
    # Bruno gave up after one card drawn: no real attempt, so the match moves no rating (docs/fairplay.md,
    # "What moves a rating"), and the result says so with the ratings as they were
    expect(you.nth(4)).to_contain_text("(0)")
    expect(bruno.locator('#result-rows tr[data-side="you"] td').nth(4)).to_contain_text("(0)")
    # and why, in words, as the server wrote it with the result (no real attempt, or one browser: linked)
    expect(you.nth(4).locator(".result-why")).to_have_text(re.compile(r"^no rating change: "))
    shot(anna, "duel-result")

    # the replay: both games side by side, step by step
    anna.locator("#to-replay").click()
    anna.wait_for_url("**/match?id=*")
    expect(anna.locator("#verify")).to_contain_text(f"deal key {seed}")
    expect(anna.locator(".side-name").first).to_have_text("Anna")
    anna.locator("#first").click()
    expect(anna.locator("#step")).to_have_text("Step 0 of 6")  # each: a move, giving up, the end
    anna.wait_for_selector('#board0 .card.up')
    assert anna.locator(f'#board0 .card[data-card="{ace}"][data-pile="{pile}"]').count() == 1
    anna.locator("#next").click()
    anna.wait_for_selector(f'#board0 .card[data-card="{ace}"][data-pile="f{ace[-1].lower()}"]', state="attached")
    shot(anna, "duel-replay")

    # the profile and the leaderboard know the match
    anna.goto(f"{base_url}/profile")
    expect(anna.locator("#recent li").first).to_contain_text("won")
    anna.locator("#all-matches").click()  # the whole match history of this player
    anna.wait_for_url("**/matches?player=*")
    rows = anna.locator("tr[data-match]")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Solitaire Reloaded · 5 min")
    expect(rows.first.locator("[data-outcome]").first).to_have_text("Given up")
    shot(anna, "duel-history")
    rows.first.locator("a.replay").click()
    anna.wait_for_url("**/match?id=*")
    expect(anna.locator("#verify")).to_contain_text(f"deal key {seed}")
    anna.goto(f"{base_url}/profile")
    anna.goto(f"{base_url}/leaderboard?game=reloaded")
    expect(anna.locator("#rows")).to_contain_text("Anna")


def test_a_faecher_duel_shows_the_pool_draining_until_the_match_ends(two: tuple[Any, Any], base_url: str,
                                                                       shot: Any) -> None:
    """RULES.md §3: in a duel the pool drains until both games have ended. Anna gives up at once: her score
    stays 0, her pool (and Bruno's view of it) goes on draining, and the result shows what it added."""
    fmt = "faecher/standard/300"
    anna, bruno = two
    tag = secrets.token_hex(3)
    sign_up(anna, base_url, f"annaf{tag}", f"Anna F{tag}")
    sign_up(bruno, base_url, f"brunof{tag}", f"Bruno F{tag}")
    anna.locator(f'.pool[data-format="{fmt}"] .seek').click()
    expect(anna.locator("#wait-box")).to_be_visible()
    bruno.locator(f'.pool[data-format="{fmt}"] .seek').click()
    for page in (anna, bruno):
        expect(page.locator("#arena")).to_be_visible()
        expect(page.locator("#pool-box")).to_be_visible()
    anna.locator("#giveup").click()
    anna.locator("#confirm-yes").click()
    expect(anna.locator("#giveup")).to_be_disabled()
    expect(anna.locator("#score")).to_have_text("0")  # nothing banked by ending early
    expect(anna.locator("#pool-box")).to_be_visible()
    expect(bruno.locator("#opp-outcome")).to_have_text("Given up")
    expect(bruno.locator("#opp-pool-box")).to_be_visible()
    expect(bruno.locator("#opp-score")).to_have_text("0")
    first = int(anna.locator("#pool").inner_text())
    assert 1400 < first <= 1500
    anna.wait_for_timeout(1300)  # 5 points a second over 5 minutes
    assert int(anna.locator("#pool").inner_text()) < first
    shot(bruno, "duel-faecher-pool")
    bruno.locator("#giveup").click()
    bruno.locator("#confirm-yes").click()
    for page in (anna, bruno):
        expect(page.locator("#result")).to_be_visible()
        expect(page.locator("#pool-note")).to_be_visible()
        expect(page.locator("#pool-box")).to_be_hidden()
    you = anna.locator('#result-rows tr[data-side="you"] td')
    pool = you.nth(2).inner_text()
    assert 1400 < int(pool) < first and you.nth(1).inner_text() == pool  # her score is the pool alone
    shot(anna, "duel-faecher-result")
