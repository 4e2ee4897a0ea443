"""The rules where a player needs them: the start page says the chosen variant's rules (and shows
its whole name), the game page has a rules sheet for the game and variant on the table, opened by
a button or R, closed with Esc — in English, German and Italian."""

from __future__ import annotations

from typing import Any

import pytest
from browser_settle import settle
from playwright.sync_api import expect

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1366, "height": 850}}


def option_fits(page: Any, tile: Any) -> list[str]:
    """The options whose text is wider than the select shows (its padding and arrow aside)."""
    return tile.locator("select").evaluate(
        """(select) => {
          const style = getComputedStyle(select);
          const probe = document.createElement("span");
          probe.style.font = style.font;
          probe.style.whiteSpace = "nowrap";
          probe.style.position = "absolute";
          document.body.append(probe);
          const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 24;
          const wide = [...select.options].filter((o) => {
            probe.textContent = o.text;
            return probe.offsetWidth > room;
          }).map((o) => o.text);
          probe.remove();
          return wide;
        }""")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_start_page_says_the_chosen_variants_rules(browser: Any, base_url: str, shot: Any, size: str) -> None:
    context = browser.new_context(locale="en-US", **(PHONE if size == "phone" else DESKTOP))
    page = context.new_page()
    try:
        page.goto(f"{base_url}/")
        tile = page.locator('.game-tile[data-game="teppich"]')
        rules = tile.locator(".rules")
        expect(rules).to_contain_text("The four aces start the foundations")
        expect(rules).to_contain_text("4 rows × 5 columns")
        tile.locator("select").select_option("waste")
        expect(rules).not_to_contain_text("aces start the foundations")
        expect(rules).to_contain_text("the aces too")
        expect(rules).to_contain_text("The foundations start empty")
        expect(rules).to_contain_text("once only")
        assert option_fits(page, tile) == []
        shot(page, f"start-rules-waste-{size}")
        tile.locator("select").select_option("5x6")
        expect(rules).to_contain_text("5 rows × 6 columns")
        reloaded = page.locator('.game-tile[data-game="reloaded"]')
        reloaded.locator("select").select_option("untimed")
        expect(reloaded.locator(".rules")).to_contain_text("No time limit")
        expect(reloaded.locator(".rules")).to_contain_text("once per card")
        for game in ("reloaded", "faecher"):
            assert option_fits(page, page.locator(f'.game-tile[data-game="{game}"]')) == []
        page.locator('#langs [data-lang="de"]').click()
        expect(rules).to_contain_text("5 Reihen × 6 Spalten")
        expect(reloaded.locator(".rules")).to_contain_text("Kein Zeitlimit")
    finally:
        context.close()


CASES = [  # address, language, what the sheet must say, what it must not
    ("game=teppich&variant=waste&seed=4", "en", ["the aces too", "once only"], "The four aces start"),
    ("game=teppich&seed=4", "de", ["Die vier Asse bilden die Ablagen", "4 Reihen × 5 Spalten"], "auch die Asse"),
    ("game=reloaded&seed=4", "it", ["una volta sola per carta", "Tempo: 5 minuti", "fino a 3 di scorta"],
     "Nessun limite"),
    ("game=reloaded&variant=untimed&seed=4", "en", ["No time limit", "once per card", "up to 3 in store"],
     "Time limit: 5"),
    ("game=faecher&seed=4", "de", ["Ein Pool von 1500", "Zurücknehmen gibt es nicht"], "auf Vorrat"),
    ("game=faecher&variant=with-undo&seed=4", "it", ["fino a 3 di scorta", "−50"], "Non si annulla"),
]


@pytest.mark.parametrize(("query", "lang", "says", "never"), CASES)
def test_the_game_page_has_the_rules_of_its_game_and_variant(browser: Any, base_url: str, shot: Any, query: str,
                                                              lang: str, says: list[str], never: str) -> None:
    context = browser.new_context(locale="en-US", **DESKTOP)
    page = context.new_page()
    try:
        page.goto(f"{base_url}/play?{query}&lang={lang}")
        page.wait_for_selector(".card.up")
        sheet = page.locator("#rules")
        # keyboard: Tab reaches the button; Enter opens the sheet, Esc closes it
        button = page.locator("#rules-btn")
        for _ in range(120):
            page.keyboard.press("Tab")
            if button.evaluate("(b) => b === document.activeElement"):
                break
        expect(button).to_be_focused()
        page.keyboard.press("Enter")
        expect(sheet).to_be_visible()
        for text in says:
            expect(sheet).to_contain_text(text)
        expect(sheet).not_to_contain_text(never)
        if query.startswith("game=teppich&variant=waste"):
            shot(page, "play-rules-desktop")
        page.keyboard.press("Escape")
        expect(sheet).to_be_hidden()
        page.keyboard.press("r")
        expect(sheet).to_be_visible()
        page.keyboard.press("Escape")
        expect(sheet).to_be_hidden()
    finally:
        context.close()


def test_the_rules_sheet_on_a_phone(browser: Any, base_url: str, shot: Any) -> None:
    context = browser.new_context(locale="it-IT", **PHONE)
    page = context.new_page()
    try:
        page.goto(f"{base_url}/play?game=reloaded&seed=4")
        page.wait_for_selector(".card.up")
        page.locator("#rules-btn").tap()
        sheet = page.locator("#rules")
        expect(sheet).to_be_visible()
        expect(sheet).to_contain_text("Regole: Solitaire Reloaded")
        settle(page)  # the sheet done sliding in
        box = sheet.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        shot(page, "play-rules-phone")
        sheet.locator(".close").tap()
        expect(sheet).to_be_hidden()
    finally:
        context.close()
