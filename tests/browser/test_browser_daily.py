"""The deal of the day in the browser: a player signs up, plays (and gives up) the day's attempt, sees it on
the day's leaderboard, and is told clearly that a second attempt is not allowed; screenshots on desktop and
on a phone."""

from __future__ import annotations

import re
import secrets
from typing import Any

from browser_accounts import sign_up
from playwright.sync_api import expect

from helpers import establish, user_id_of


def test_one_attempt_at_the_deal_of_the_day(browser: Any, base_url: str, server_app: Any, shot: Any) -> None:
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 1366, "height": 850}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(20_000)  # the first visit of a day may prove its deal
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    name, login = f"Daisy {secrets.token_hex(3)}", f"daisy{secrets.token_hex(3)}"
    sign_up(page, base_url, login, name, then="/daily")
    establish(server_app.state.store, user_id_of(server_app, login))  # the board's entry rule: the day's deal
    page.goto(f"{base_url}/")
    entry = page.locator('.game-tile[data-game="reloaded"] .daily-link')
    expect(entry).to_have_text("Deal of the day")
    shot(page, "daily-start-desktop")
    entry.click()
    page.wait_for_url(f"{base_url}/daily?game=reloaded")
    expect(page.locator("#daily-day")).to_contain_text("Solitaire Reloaded")
    expect(page.locator("#daily-commitment")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
    expect(page.locator("#daily-reveal")).to_contain_text("shown when the day ends")
    expect(page.locator("p[data-t='daily.intro']")).to_contain_text("one attempt, and it is the one that counts")
    expect(page.locator("#daily-play")).to_have_text("Play today's deal")
    page.locator("#daily-play").click()
    page.wait_for_url(f"{base_url}/play?*")
    page.wait_for_selector(".card.up")
    game_url = page.url
    page.goto(f"{base_url}/daily?game=reloaded")  # back on the day's page: the attempt goes on
    expect(page.locator("#rows tr", has_text=name)).to_contain_text("playing")
    page.locator("#daily-play", has_text="Go on with your attempt").click()
    page.wait_for_url(game_url)
    page.wait_for_selector(".card.up")
    expect(page.locator("#variant-name")).to_contain_text("Deal of the day 20")  # its day: no key, no number
    expect(page.locator("#m-restart")).to_be_hidden()
    # hints are off in the attempt, and a new game is not offered while it goes on (giving up is, in the menu)
    expect(page.locator("#hint")).to_be_hidden()
    expect(page.locator("#new")).to_be_hidden()
    shot(page, "daily-attempt-desktop")
    page.keyboard.press("h")
    page.wait_for_timeout(300)
    expect(page.locator("#toast")).to_be_hidden()
    page.locator("#menu-btn").click()
    expect(page.locator("#m-new")).to_be_hidden()
    page.locator("#m-giveup").click()
    page.locator("#confirm-yes").click()
    expect(page.locator("#end-title")).to_have_text("Given up")
    page.locator("#look").click()
    expect(page.locator("#new")).to_be_visible()  # the attempt is over: a new game may begin
    expect(page.locator("#hint")).to_be_hidden()
    page.goto(f"{base_url}/daily?game=reloaded")
    row = page.locator("#rows tr", has_text=name)
    expect(row).to_contain_text("Given up")
    # the attempt is done: its result, and no button that would only be refused
    expect(page.locator("#daily-play")).to_have_count(0)
    expect(page.locator("#daily-done")).to_have_text(re.compile(
        r"^Today's attempt is done: Given up, score −?\d+, rank \d+\. The next deal comes at midnight \(UTC\)\.$"))
    shot(page, "daily-desktop")
    page.locator("#nav .langs button[data-lang=de]").click()
    expect(page.locator("#daily-done")).to_contain_text("Dein heutiger Versuch ist beendet: Aufgegeben")
    shot(page, "daily-desktop-done-de")
    # the attempt's address opened again without its game (from the history, or shared): never another game,
    # but the word that today's attempt is done and the way to the day's page; with its game: the attempt, over
    day = re.search(r"day(?:%3A|:)([0-9-]{10})", game_url)
    assert day, game_url
    page.goto(f"{base_url}/play?game=reloaded&seed=day:{day.group(1)}")
    expect(page.locator(".lost p")).to_have_text(
        "Dein Versuch am heutigen Spiel des Tages ist beendet: ein Versuch am Tag.")
    expect(page.locator(".lost a")).to_have_attribute("href", f"/daily?game=reloaded&day={day.group(1)}")
    expect(page.locator(".card")).to_have_count(0)
    shot(page, "daily-address-again-de")
    page.goto(game_url)
    expect(page.locator("#end-title")).to_have_text("Aufgegeben")
    expect(page.locator("#variant-name")).to_contain_text(f"Spiel des Tages {day.group(1)}")
    context.close()

    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="it-IT", is_mobile=True,
                                has_touch=True)
    small = phone.new_page()
    small.on("pageerror", lambda exc: errors.append(str(exc)))
    small.goto(f"{base_url}/daily?game=reloaded&lang=it")
    expect(small.locator("#daily-day")).to_contain_text("(UTC)")
    expect(small.locator("#rows tr", has_text=name)).to_contain_text("Abbandonata")
    expect(small.locator("#daily-actions")).to_contain_text("Accedi per giocare")  # signed out: no attempt
    shot(small, "daily-phone")
    phone.close()
    assert not errors, errors


def test_a_new_account_is_told_in_german_on_a_phone_that_it_plays_a_practice_deal(browser: Any, base_url: str,
                                                                                  shot: Any) -> None:
    """A brand-new account on /daily (German, phone size): a practice deal of its own, why, and what opens
    the day's deal; no board place, one attempt; the page is keyboard reachable."""
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="de-DE", is_mobile=True,
                                  has_touch=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    name = f"Neu {secrets.token_hex(3)}"
    sign_up(page, base_url, f"neu{secrets.token_hex(3)}", name, then="/daily?game=reloaded")
    page.goto(f"{base_url}/daily?game=reloaded&lang=de")
    expect(page.locator("#daily-practice")).to_have_text("Übungsblatt")
    expect(page.locator("#daily-practice-why")).to_contain_text("eigenes Übungsblatt, in keiner Rangliste")
    expect(page.locator("#daily-practice-why")).to_contain_text(
        "7 Tage alt sind und 5 gewertete Duelle ernsthaft gegen 3 verschiedene Gegner")
    expect(page.locator("#daily-play")).to_have_text("Dein Übungsblatt spielen")
    shot(page, "daily-practice-phone-de")
    page.locator("#daily-play").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base_url}/play?*")
    page.wait_for_selector(".card.up")
    game_url = page.url
    # the table says it is the practice deal, not the day's deal (whose label it would otherwise share)
    which = page.locator("#variant-name .which")
    expect(which).to_have_text(re.compile(r"^Übungsblatt \d{4}-\d{2}-\d{2}$"))
    page.goto(f"{base_url}/daily?game=reloaded")
    expect(page.locator("#daily-play")).to_have_text("Dein Übungsblatt fortsetzen")
    expect(page.locator("#rows tr", has_text=name)).to_have_count(0)  # on no board
    page.locator("#nav .langs button[data-lang=it]").click()
    expect(page.locator("#daily-practice")).to_have_text("Smazzata di prova")
    page.locator("#nav .langs button[data-lang=en]").click()
    expect(page.locator("#daily-practice-why")).to_contain_text("practice deal of your own, on no leaderboard")
    page.goto(game_url)  # back at the table, in English and then in Italian
    expect(which).to_have_text(re.compile(r"^Practice deal \d{4}-\d{2}-\d{2}$"))
    page.locator("#menu-btn").click()
    page.locator("#langs button[data-lang=it]").click()
    expect(which).to_have_text(re.compile(r"^Smazzata di prova \d{4}-\d{2}-\d{2}$"))
    assert not errors, errors
    context.close()
