"""Statistics that mean something: kept per variant (the 4 × 5 carpet and the 5 × 6 apart), a game
won with a hint counted apart, a best score per variant; a signed-in player's figures are those of
every browser of the account."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from playwright.sync_api import expect
from test_browser_polish import play_up_by_keys, won_carpet  # a won 5 × 6 carpet deal, by the engine

pytestmark = pytest.mark.slow

DESKTOP = {"viewport": {"width": 1366, "height": 850}}


def figures(box: Any) -> dict[str, str]:
    return dict(zip(box.locator("dt").all_text_contents(), box.locator("dd").all_text_contents(), strict=True))


def test_a_win_with_a_hint_counts_apart_in_its_variant(browser: Any, base_url: str, shot: Any) -> None:
    seed, state = won_carpet()
    context = browser.new_context(locale="en-US", reduced_motion="reduce", **DESKTOP)
    page = context.new_page()
    try:
        page.goto(f"{base_url}/play?game=teppich&rows=5&cols=6&seed={seed}")
        page.wait_for_selector(".card.up")
        page.keyboard.press("h")  # one hint: the win that follows counts apart
        expect(page.locator(".mark-hint").first).to_be_attached()
        play_up_by_keys(page, state)
        expect(page.locator("#end")).to_be_visible(timeout=10_000)
        expect(page.locator("#end-stats-title")).to_have_text("Statistics: Carpet · 5 × 6 carpet")
        expect(page.locator("#end-stats dd").first).to_have_text("1")
        said = figures(page.locator("#end-stats"))
        assert (said["Played"], said["Won"], said["Won with hints"], said["Best"]) == ("1", "0", "1", "–")
        shot(page, "stats-end-hinted")
        page.goto(f"{base_url}/")
        tile = page.locator('.game-tile[data-game="teppich"]')
        expect(tile.locator(".tile-stats")).to_contain_text("No games yet")  # the 4 × 5 carpet: none
        tile.locator("select").select_option("5x6")
        expect(tile.locator(".stats-title")).to_have_text("Your statistics: 5 × 6 carpet")
        said = figures(tile.locator(".tile-stats"))
        assert (said["Played"], said["Won"], said["Won with hints"]) == ("1", "0", "1")
        shot(page, "stats-start-tile")
    finally:
        context.close()


def test_a_signed_in_players_figures_come_from_every_browser_of_the_account(browser: Any, base_url: str) -> None:
    tag = secrets.token_hex(3)
    login, password = f"stats{tag}", "a long enough password"
    first, second = (browser.new_context(locale="en-US", **DESKTOP) for _ in range(2))
    try:
        page = first.new_page()
        page.goto(f"{base_url}/account")
        form = page.locator("#signup-form")
        form.locator("input[name=login]").fill(login)
        form.locator("input[name=name]").fill(f"Stats {tag}")
        form.locator("input[name=password]").fill(password)
        form.locator("button[type=submit]").click()
        page.wait_for_url(lambda url: "/account" not in url)
        page.goto(f"{base_url}/play?game=faecher&variant=with-undo&seed=4")
        page.wait_for_selector(".card.up")
        page.keyboard.press("d")
        page.locator("#menu-btn").click()
        page.locator("#m-giveup").click()
        page.locator("#confirm-yes").click()
        expect(page.locator("#end")).to_be_visible()
        other = second.new_page()
        other.goto(f"{base_url}/")
        tile = other.locator('.game-tile[data-game="faecher"]')
        tile.locator("select").select_option("with-undo")
        expect(tile.locator(".tile-stats")).to_contain_text("No games yet")  # a browser of its own so far
        other.goto(f"{base_url}/account")
        form = other.locator("#signin-form")
        form.locator("input[name=login]").fill(login)
        form.locator("input[name=password]").fill(password)
        form.locator("button[type=submit]").click()
        other.wait_for_url(lambda url: "/account" not in url)
        other.goto(f"{base_url}/")
        tile.locator("select").select_option("with-undo")
        said = figures(tile.locator(".tile-stats"))
        assert (said["Played"], said["Won"]) == ("1", "0")
        tile.locator("select").select_option("standard")
        expect(tile.locator(".tile-stats")).to_contain_text("No games yet")
        other.goto(f"{base_url}/profile")
        expect(other.locator("#solo")).to_contain_text("With undo (up to 3)")
    finally:
        first.close()
        second.close()
