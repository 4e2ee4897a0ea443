"""A duel between two browsers on two server processes of one arena (PostgreSQL and Redis): each
Chromium talks to a different ``patience serve``, they meet in the shared pool, play, and both
reach the result page."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from test_browser_duel import sign_up

from arena_processes import fresh_redis, serving

pytestmark = pytest.mark.slow

FORMAT = "reloaded/standard/300"


@pytest.fixture(scope="module")
def two_processes(module_postgres_url: str, redis_server: str,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The arena of two processes the tests of this module share (none of them stops one)."""
    with serving(module_postgres_url, fresh_redis(redis_server, 12), tmp_path_factory.mktemp("arena")) as (one, two):
        yield one.url, two.url


def test_two_browsers_on_two_processes_play_a_duel_to_its_result(browser: Any, two_processes: tuple[str, str],
                                                                 shot: Any) -> None:
    contexts = [browser.new_context(viewport={"width": 1200, "height": 800}, locale="en-US") for _ in range(2)]
    errors: list[str] = []
    try:
        anna, bruno = (context.new_page() for context in contexts)
        for page in (anna, bruno):
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        url_a, url_b = two_processes
        tag = secrets.token_hex(3)
        sign_up(anna, url_a, f"anna{tag}", "Anna")
        sign_up(bruno, url_b, f"bruno{tag}", "Bruno")
        anna.locator(f'.pool[data-format="{FORMAT}"] .seek').click()
        expect(anna.locator("#wait-box")).to_be_visible()
        pool_b = bruno.locator(f'.pool[data-format="{FORMAT}"]')
        expect(pool_b.locator(".pool-queue")).to_contain_text("Anna")  # waiting on the other process
        pool_b.locator(".seek").click()
        for page in (anna, bruno):
            expect(page.locator("#arena")).to_be_visible()
            page.wait_for_selector(".card.up")
        expect(anna.locator("#opp-name")).to_contain_text("Bruno")
        expect(bruno.locator("#opp-name")).to_contain_text("Anna")
        expect(bruno.locator("#found")).to_be_hidden()  # the countdown is over: the clocks run
        bruno.keyboard.press("d")  # a card drawn on one process, seen on the other
        expect(bruno.locator('.card[data-pile="w"]')).to_have_count(1)
        expect(anna.locator("#opp-moves")).to_have_text("1")
        shot(anna, "arena-two-processes")
        for page in (bruno, anna):
            page.locator("#giveup").click()
            page.locator("#confirm-yes").click()
        for page in (anna, bruno):
            expect(page.locator("#result")).to_be_visible()
            expect(page.locator("#verify")).to_contain_text("opens the commitment shown at the start")
        shot(bruno, "arena-two-processes-result")
    finally:
        for context in contexts:
            context.close()
    assert not errors, f"errors in the pages: {errors}"


def test_a_solo_game_taken_by_a_window_on_another_process_says_so_in_the_first(
        browser: Any, two_processes: tuple[str, str]) -> None:
    """One browser, two windows on two processes of one arena: the second opens the first's game, which
    moves to its process; the first window says so in the page's language (not the server's English)."""
    url_a, url_b = two_processes
    context = browser.new_context(viewport={"width": 1200, "height": 800}, locale="de-DE")
    errors: list[str] = []
    try:
        first = context.new_page()
        first.on("pageerror", lambda exc: errors.append(str(exc)))
        first.set_default_timeout(15_000)
        first.goto(f"{url_a}/play?game=reloaded&seed=9")
        first.wait_for_selector(".card.up")
        first.keyboard.press("d")
        expect(first.locator('.card[data-pile="w"]')).to_have_count(1)
        first.wait_for_url("**id=*")
        game_id = first.evaluate("new URLSearchParams(location.search).get('id')")
        assert game_id
        second = context.new_page()  # the same browser: its cookie goes to both processes of the host
        second.set_default_timeout(15_000)
        second.goto(f"{url_b}/play?id={game_id}")
        expect(second.locator('.card[data-pile="w"]')).to_have_count(1)  # the game as the first left it
        expect(first.locator("#toast")).to_have_text(
            "Dieses Spiel geht in einem anderen Fenster weiter: lade die Seite neu, um es hier zu spielen.")
    finally:
        context.close()
    assert not errors, f"errors in the page: {errors}"


def test_a_player_signs_out_on_one_process_and_in_on_the_other(browser: Any, two_processes: tuple[str, str],
                                                               shot: Any) -> None:
    """Sign-in through the form on an arena of two processes: a wrong password says so, the right one
    lands on the duel page signed in, whichever process answers."""
    url_a, url_b = two_processes
    context = browser.new_context(viewport={"width": 1200, "height": 800}, locale="en-US")
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.set_default_timeout(15_000)
        login = f"greta{secrets.token_hex(3)}"
        sign_up(page, url_a, login, "Greta")
        page.goto(f"{url_a}/account")
        page.locator("#signout-form button[type=submit]").click()
        expect(page.locator("#signin-form")).to_be_visible()
        for url, password in ((url_b, "not her password"), (url_b, "a long enough password"),
                              (url_a, "a long enough password")):
            page.goto(f"{url}/account?next=/duel")
            form = page.locator("#signin-form")
            form.locator("input[name=login]").fill(login)
            form.locator("input[name=password]").fill(password)
            form.locator("button[type=submit]").click()
            if password.startswith("not"):
                expect(page.locator("#signin-form")).to_be_visible()
                expect(page.locator("body")).to_contain_text("Wrong login name or password.")
                continue
            page.wait_for_url(f"{url}/duel")
            expect(page.locator(".pool .seek").first).to_be_visible()  # signed in: the pools offer a seat
            shot(page, "arena-signed-in")
            if url == url_b:
                page.goto(f"{url}/account")
                page.locator("#signout-form button[type=submit]").click()
                expect(page.locator("#signin-form")).to_be_visible()
    finally:
        context.close()
    assert not errors, f"errors in the page: {errors}"
