"""A server that does not answer (gone, or the network) makes no page fail with an uncaught error: every
request a page makes whose answer does not come is said where it matters. An arena page that cannot learn
who is signed in says so and asks again by itself, and comes back once the server answers; a page whose own
data does not come says so over what it shows; a form sent to nobody says so instead of doing nothing.
Requests are made to fail by Playwright's routing (service workers off, so that every request is seen)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from browser_accounts import sign_up
from playwright.sync_api import expect

from conftest import watched_context

pytestmark = pytest.mark.slow

GONE = "Patience Arena does not answer: this page asks again by itself."
FAILED = "Patience Arena did not answer: try again in a moment."
API = re.compile(r"^[^?]*/api/")  # every request of the API, whatever its query

# every page that asks the server for who is signed in and for the games' names (arena.js openPage)
ARENA = ["/daily", "/duel", "/tournament", "/tournament?id=nosuchtour1", "/leaderboard", "/matches",
         "/playnow", "/profile?u=nobody", "/match?id=nomatch", "/no-such-page"]

# a page, the request of its own data, where it says that the data did not come, and what it says
DATA = [
    ("/", r"/api/games$", ".no-answer", FAILED),
    ("/leaderboard", r"/api/leaderboard\?", ".no-answer", FAILED),
    ("/daily", r"/api/daily/reloaded", ".no-answer", FAILED),
    ("/tournament", r"/api/tournaments$", ".no-answer", FAILED),
    ("/profile?u=nobody", r"/api/profile/", ".no-answer", FAILED),
    ("/match?id=nomatch", r"/api/matches/", ".no-answer", FAILED),
    ("/account", r"/api/me$", "#error", FAILED),
]


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    with watched_context(browser, viewport={"width": 1280, "height": 800}, locale="en-US",
                         service_workers="block") as context:
        yield context


def fail(page: Any, pattern: str | re.Pattern[str]) -> None:
    """Every request whose address matches ``pattern`` finds no server."""
    page.route(re.compile(pattern) if isinstance(pattern, str) else pattern, lambda route: route.abort())


@pytest.mark.parametrize("path", ARENA)
def test_an_arena_page_waits_for_the_server_and_comes_back_by_itself(context: Any, base_url: str,
                                                                   path: str) -> None:
    page = context.new_page()
    fail(page, API)
    page.goto(base_url + path)
    expect(page.locator(".no-answer")).to_have_text(GONE)
    expect(page.locator(".no-answer")).to_be_visible()
    expect(page.locator("#nav .nav-link")).to_have_count(0)  # nothing drawn from an answer that never came
    page.unroute(API)  # the server answers again: the page goes on, with no reload and no click
    expect(page.locator("#nav .nav-link").first).to_be_visible()
    expect(page.locator(".no-answer")).to_have_count(0)


@pytest.mark.parametrize(("path", "pattern", "where", "words"), DATA, ids=[d[0] for d in DATA])
def test_a_page_says_that_its_data_did_not_come(context: Any, base_url: str, path: str, pattern: str, where: str,
                                                words: str) -> None:
    page = context.new_page()
    fail(page, pattern)
    page.goto(base_url + path)
    expect(page.locator(where)).to_have_text(words)
    expect(page.locator(where)).to_be_visible()


def test_the_play_page_plays_without_the_api(context: Any, base_url: str) -> None:
    """The table comes over its socket: a page whose every API request fails still deals, and says nothing
    went wrong where nothing did (its statistics are only asked for at a game's end)."""
    page = context.new_page()
    fail(page, API)
    page.goto(base_url + "/play?game=reloaded&seed=3")
    page.wait_for_selector(".card.up")
    expect(page.locator(".no-answer")).to_have_count(0)


def test_a_form_sent_to_nobody_says_so(context: Any, base_url: str) -> None:
    page = context.new_page()
    page.goto(base_url + "/account")
    form = page.locator("#signin-form")
    expect(form).to_be_visible()
    fail(page, r"/account/signin$")
    form.locator("input[name=login]").fill("nobody")
    form.locator("input[name=password]").fill("a long enough password")
    form.locator("button[type=submit]").click()
    expect(page.locator("#error")).to_have_text(FAILED)
    # a signed-in player's button of the deal of the day (a post through the same helper as every form)
    tag = secrets.token_hex(3)
    sign_up(page, base_url, f"gone{tag}", f"Gone {tag}", then="/daily")
    page.unroute(re.compile(r"/account/signin$"))
    fail(page, r"/api/daily/[a-z]+/start$")
    page.locator("#daily-play").click()
    expect(page.locator("#daily-msg")).to_have_text(re.compile(r"could not be started"))


@pytest.mark.parametrize("path", ["/profile?u=nobody", "/match?id=nomatch", "/leaderboard"])
def test_a_proxys_error_page_for_a_server_away_is_no_answer_either(context: Any, base_url: str, path: str) -> None:
    """Behind a proxy, a server away answers 502 with the proxy's page (no JSON): said as no answer, not as an
    address that names nothing."""
    page = context.new_page()
    page.route(re.compile(r"/api/(profile|matches|leaderboard)"),
               lambda route: route.fulfill(status=502, content_type="text/html", body="<h1>502 Bad Gateway</h1>"))
    page.goto(base_url + path)
    expect(page.locator(".no-answer")).to_have_text(FAILED)
    expect(page.locator("#error")).to_be_hidden()  # the profile's "no such player"
    expect(page.locator("#notice.lost")).to_have_count(0)  # the replay's "no such match"
