"""Addresses that name nothing say so in the page's language: a duel or a game to watch that is not
there, a tournament, a leaderboard, a player, a day without a deal of the day, and game settings the
game does not have (the engine's English is not shown on a German page)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}

CASES = [
    ("/duel?m=nope", ".page-notice", "Dieses Duell gibt es nicht: der Link ist falsch oder das Duell ist vorbei."),
    ("/duel?w=nope", ".page-notice", "Dieses Duell gibt es nicht: der Link ist falsch oder das Duell ist vorbei."),
    ("/tournament?id=nope", ".page-notice", "Dieses Turnier gibt es nicht."),
    ("/tournament?id=nopenopenope", ".page-notice", "Dieses Turnier gibt es nicht."),
    ("/leaderboard?game=nope", ".page-notice", "Für „nope“ gibt es keine Rangliste."),
    ("/profile?u=nope", "#error", "Diesen Spieler gibt es nicht."),
    ("/daily?day=1999-01-01", "#daily-msg", "Für den 1999-01-01 gibt es kein Spiel des Tages."),
    ("/play?game=teppich&seed=1&rows=99", ".lost p",
     "Diese Adresse verlangt Einstellungen, die es nicht gibt: so lässt sich kein Spiel austeilen."),
]


@pytest.mark.parametrize(("address", "where", "text"), CASES, ids=[c[0] for c in CASES])
def test_an_address_that_names_nothing_says_so_in_german(browser: Any, base_url: str, shot: Any,
                                                         address: str, where: str, text: str) -> None:
    context = browser.new_context(viewport={"width": 1366, "height": 850}, locale="de-DE")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{base_url}{address}&lang=de" if "?" in address else f"{base_url}{address}?lang=de")
        expect(page.locator(where)).to_have_text(text)
        expect(page.locator(where)).to_be_visible()
        name = address.strip("/").replace("?", "-").replace("=", "-").replace("&", "-")
        shot(page, f"lost-{name}-de")
        if address.startswith("/profile"):  # no empty headings under the message
            expect(page.locator("main h3:visible")).to_have_count(0)
        if address.startswith("/daily"):  # no commitment nor empty table for a day without a deal
            expect(page.locator("#daily-commitment")).to_be_hidden()
            expect(page.locator(".daily-board")).to_be_hidden()
        if address.startswith("/play"):
            expect(page.locator("body")).not_to_contain_text("rows")  # no engine English
        if not address.startswith("/play"):  # (the game page switches its language in its menu)
            page.locator(".langs button[data-lang=it]").first.click()  # the message follows the language
            expect(page.locator(where)).not_to_have_text(text)
    finally:
        context.close()
    assert not errors, errors


def test_the_lost_messages_on_a_phone(browser: Any, base_url: str, shot: Any) -> None:
    context = browser.new_context(**PHONE, locale="it-IT")
    page = context.new_page()
    try:
        page.goto(f"{base_url}/leaderboard?game=nope&lang=it")
        expect(page.locator(".page-notice")).to_have_text("Non c’è una classifica per «nope».")
        shot(page, "lost-leaderboard-phone-it")
        page.goto(f"{base_url}/play?game=teppich&seed=1&rows=99&lang=it")
        expect(page.locator(".lost")).to_contain_text("Questo indirizzo chiede impostazioni che non esistono")
        shot(page, "lost-play-options-phone-it")
    finally:
        context.close()
