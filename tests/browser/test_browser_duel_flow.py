"""The flow around a duel in real browsers: a challenge link that says who challenges and which duel
before Accept (and says at once when a code is no good), the "match found" moment with both
players and the countdown, a spectator who is not signed in watching from the lobby's list (figures,
never a card) to the result, and the rematch offer, taken up or ended by the other player leaving.
Screenshots at desktop and phone size go to test-artifacts/."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from test_browser_duel import sign_up

pytestmark = pytest.mark.slow

DESKTOP = {"width": 1366, "height": 850}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def three(browser: Any) -> Iterator[tuple[Any, Any, Any]]:
    pages = []
    contexts = []
    errors: list[str] = []
    for _ in range(3):
        context = browser.new_context(viewport=DESKTOP, locale="en-US")
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        contexts.append(context)
        pages.append(page)
    yield pages[0], pages[1], pages[2]
    for context in contexts:
        context.close()
    assert not errors, f"errors in the pages: {errors}"


def both_sizes(shot: Any, page: Any, name: str) -> None:
    shot(page, f"{name}-desktop")
    page.set_viewport_size(PHONE)
    shot(page, f"{name}-phone")
    page.set_viewport_size(DESKTOP)


def give_up(page: Any) -> None:
    page.locator("#giveup").click()
    page.locator("#confirm-yes").click()


def test_challenge_link_match_found_spectator_and_rematch(three: tuple[Any, Any, Any], own_base_url: str,
                                                         shot: Any) -> None:
    base_url = own_base_url  # a site of its own: nobody else online, no match going on but theirs
    anna, bruno, visitor = three
    tag = secrets.token_hex(3)
    sign_up(anna, base_url, f"anna{tag}", f"Anna{tag}")
    visitor.goto(f"{base_url}/duel")  # a visitor who is not signed in, in the lobby
    expect(visitor.locator("#live-box")).to_be_hidden()  # no match to watch yet

    # a code that cannot be one, and one nobody made: said at once, and no Accept
    for code in ("short", "NoSuchCode123"):
        visitor.goto(f"{base_url}/duel?c={code}")
        expect(visitor.locator("#accept-text")).to_have_text("This challenge link is unknown.")
        expect(visitor.locator("#accept")).to_be_hidden()
    visitor.goto(f"{base_url}/duel")

    anna.locator('.pool[data-format="reloaded/standard/600"] .challenge').click()
    link = anna.locator("#challenge-url")
    expect(link).not_to_have_value("")
    url = link.input_value()
    sign_up(bruno, base_url, f"bruno{tag}", f"Bruno{tag}")
    expect(anna.locator("#playing")).to_contain_text("Players online: 2")  # pushed to her lobby unasked
    bruno.goto(url)
    said = bruno.locator("#accept-text")
    expect(said).to_have_text(f"Anna{tag} (1500?) challenges you to a duel: Solitaire Reloaded · 10 min.")
    expect(bruno.locator("#accept")).to_be_visible()
    both_sizes(shot, bruno, "duel-challenge")
    visitor.goto(url)  # the visitor sees who challenges, and is asked to sign in instead of an Accept
    expect(visitor.locator("#accept-text")).to_contain_text("Sign in to accept.")
    expect(visitor.locator("#accept")).to_be_hidden()
    visitor.goto(f"{base_url}/duel")
    expect(visitor.locator("#live-box")).to_be_hidden()  # no match to watch yet

    # match found: both players and their ratings, then the countdown, then both clocks
    bruno.set_viewport_size(PHONE)
    bruno.locator("#accept").click()
    for page in (anna, bruno):
        found = page.locator("#found")
        expect(found).to_be_visible()
        expect(found).to_contain_text(f"Anna{tag} (1500?)")
        expect(found).to_contain_text(f"Bruno{tag} (1500?)")
        expect(found).to_contain_text("Solitaire Reloaded · 10 min")
    shot(anna, "duel-found-desktop")
    shot(bruno, "duel-found-phone")
    assert anna.locator("#found-seconds").inner_text() in ("1", "2", "3")
    expect(anna.locator("#clock")).to_have_text("10:00")  # standing until the countdown ends
    for page in (anna, bruno):
        expect(page.locator("#found")).to_be_hidden(timeout=5000)
    expect(anna.locator("#clock")).not_to_have_text("10:00", timeout=3000)  # now it runs
    bruno.set_viewport_size(DESKTOP)

    # the visitor's lobby lists the match without a reload; they watch it: figures, never a card
    row = visitor.locator(".live-match")
    expect(row).to_contain_text(f"Anna{tag} (1500?) vs Bruno{tag} (1500?)")
    both_sizes(shot, visitor, "duel-lobby-live")
    row.locator(".watch").click()
    expect(visitor.locator("#spectate")).to_be_visible()
    sides = visitor.locator(".watch-side")
    expect(sides).to_have_count(2)
    bruno.keyboard.press("d")  # Bruno draws: a move the spectator sees counted
    expect(visitor.locator('.watch-side[data-side="1"] .watch-moves')).to_have_text("1")
    assert visitor.locator(".card").count() == 0 and visitor.locator("[data-card]").count() == 0
    both_sizes(shot, visitor, "duel-spectated")

    give_up(anna)
    give_up(bruno)
    for page in (anna, bruno):
        expect(page.locator("#result")).to_be_visible()
    expect(visitor.locator("#watch-end")).to_be_visible()
    expect(visitor.locator("#watch-result")).to_have_text(re.compile(r"^(\w+ won|Draw) \(\d+ : \d+\)$"))
    assert (visitor.locator("#watch-replay").get_attribute("href") or "").startswith("/match?id=")

    # rematch: Anna offers, Bruno's result says so; he accepts and both meet again
    anna.locator("#rematch").click()
    expect(anna.locator("#rematch-note")).to_have_text(f"You offered a rematch. Waiting for Bruno{tag}…")
    expect(bruno.locator("#rematch-note")).to_have_text(f"Anna{tag} offers a rematch.")
    expect(bruno.locator("#rematch")).to_have_text("Accept the rematch")
    both_sizes(shot, bruno, "duel-rematch-offer")
    first = anna.url
    bruno.locator("#rematch").click()
    for page in (anna, bruno):
        expect(page.locator("#found")).to_be_visible()
        expect(page.locator("#result")).to_be_hidden()
    for page in (anna, bruno):
        expect(page.locator("#found")).to_be_hidden(timeout=5000)
    assert anna.url != first  # a new match

    # this time Bruno declines, then leaves: Anna's page says so and offers no rematch any more
    give_up(anna)
    give_up(bruno)
    anna.locator("#look").click()  # she looks at the table; the result, and its rematch, are a button away
    expect(anna.locator("#result")).to_be_hidden()
    anna.locator("#show-result").click()
    anna.locator("#rematch").click()
    bruno.locator("#rematch-no").click()
    expect(anna.locator("#rematch-note")).to_have_text(f"Bruno{tag} declined the rematch.")
    anna.locator("#rematch").click()
    expect(bruno.locator("#rematch-note")).to_have_text(f"Anna{tag} offers a rematch.")
    bruno.goto(f"{base_url}/duel")
    expect(anna.locator("#rematch-note")).to_have_text(f"Bruno{tag} has left: no rematch.")
    expect(anna.locator("#rematch")).to_be_hidden()


def test_the_challenge_page_in_german_and_italian(browser: Any, base_url: str) -> None:
    for locale, text in (("de", "Diesen Herausforderungslink gibt es nicht."),
                         ("it", "Questo link di sfida non esiste.")):
        context = browser.new_context(viewport=DESKTOP, locale=locale)
        page = context.new_page()
        page.goto(f"{base_url}/duel?c=NoSuchCode123&lang={locale}")
        expect(page.locator("#accept-text")).to_have_text(text)
        expect(page.locator("#accept")).to_be_hidden()
        context.close()
