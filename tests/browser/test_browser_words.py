"""Words and ways: the start page leads to every part of the arena (tournaments and matches too), a
count of moves is written in the singular for one (de, en, it), and German names the stock one way,
"Talon", as the rules do."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


@pytest.mark.parametrize(("size", "lang", "names"), [
    ("desktop", "en", ["Deal of the day", "Duel", "Tournaments", "Leaderboard", "Matches", "Profile"]),
    ("phone", "de", ["Spiel des Tages", "Duell", "Turniere", "Rangliste", "Partien", "Profil"]),
])
def test_the_start_page_leads_to_tournaments_and_matches(browser: Any, base_url: str, shot: Any, size: str,
                                                         lang: str, names: list[str]) -> None:
    options = PHONE if size == "phone" else {"viewport": {"width": 1366, "height": 850}}
    context = browser.new_context(**options, locale={"en": "en-US", "de": "de-DE"}[lang])
    page = context.new_page()
    try:
        page.goto(f"{base_url}/?lang={lang}")
        links = page.locator(".arena-nav a.nav-link")
        expect(links).to_have_text(names)
        shot(page, f"start-nav-{size}-{lang}")
        page.locator(".arena-nav a[href='/tournament']").click()
        page.wait_for_url(f"{base_url}/tournament")
        page.go_back()
        page.locator(".arena-nav a[href='/matches']").click()
        page.wait_for_url(f"{base_url}/matches")
    finally:
        context.close()


@pytest.mark.parametrize(("lang", "one", "many"), [
    ("en", "1 move", "3 moves"), ("de", "1 Zug", "3 Züge"), ("it", "1 mossa", "3 mosse")])
def test_a_count_of_moves_is_singular_for_one(page: Any, base_url: str, lang: str, one: str, many: str) -> None:
    page.goto(f"{base_url}/?lang={lang}")
    said = page.evaluate(
        """async (lang) => {
          const i18n = await import("/static/js/i18n.js");
          i18n.setLang(lang);
          return [1, 3].map((n) => i18n.t(`n_moves.${n === 1 ? "one" : "many"}`, { n }));
        }""", lang)
    assert said == [one, many]


def test_the_resume_line_counts_one_move_in_the_singular(page: Any, base_url: str, shot: Any) -> None:
    page.goto(f"{base_url}/play?game=reloaded&seed=7&lang=de")
    page.wait_for_selector(".card.up")
    page.locator('.slot[data-pile="s"]').click(force=True)  # one card drawn: one move (the stock's cards on top)
    page.wait_for_selector('.card[data-pile="w"]', state="attached")
    page.wait_for_timeout(300)
    page.goto(f"{base_url}/")
    expect(page.locator("#resume-line")).to_have_text(re.compile(r"· 1 Zug$"))
    shot(page, "start-resume-one-move-de")


def test_german_names_the_stock_talon_everywhere(page: Any, base_url: str) -> None:
    page.goto(f"{base_url}/?lang=de")
    said = page.evaluate(
        """async () => {
          const i18n = await import("/static/js/i18n.js");
          i18n.setLang("de");
          return [i18n.t("pile.s"), i18n.t("pile.s_faecher"), i18n.t("why.carpet_no_draw"), i18n.t("stock_none")];
        }""")
    assert all("Talon" in text for text in said), said


@pytest.mark.parametrize(("lang", "one", "many"), [
    ("en", "whole (1 card)", "whole (4 cards)"), ("de", "ganz (1 Karte)", "ganz (4 Karten)"),
    ("it", "intera (1 carta)", "intera (4 carte)")])
def test_a_wrong_move_counts_one_card_in_the_singular(page: Any, base_url: str, lang: str, one: str,
                                                      many: str) -> None:
    """The server's reason (its parameters as text, as the explanation reads them from the engine)."""
    page.goto(f"{base_url}/?lang={lang}")
    said = page.evaluate(
        """async (lang) => {
          const i18n = await import("/static/js/i18n.js");
          i18n.setLang(lang);
          return ["1", "4"].map((n) => i18n.say({ k: "l_illegal", p: { rk: "reserve_whole", n } }, "", "faecher"));
        }""", lang)
    assert one in said[0] and many in said[1], said


@pytest.mark.parametrize(("lang", "titles"), [
    ("de", ["Duell", "Konto", "Spiel des Tages", "Turniere", "Rangliste", "Deine Spiele", "Seite nicht gefunden"]),
    ("it", ["Sfida", "Account", "Partita del giorno", "Tornei", "Classifica", "Le tue partite",
            "Pagina non trovata"]),
])
def test_every_tab_title_is_in_the_page_language(browser: Any, base_url: str, lang: str, titles: list[str]) -> None:
    context = browser.new_context(locale={"de": "de-DE", "it": "it-IT"}[lang])
    page = context.new_page()
    try:
        for path, title in zip(["/duel", "/account", "/daily", "/tournament", "/leaderboard", "/playnow",
                                "/no-such-page"], titles, strict=True):
            page.goto(f"{base_url}{path}")
            expect(page).to_have_title(f"{title} · Patience Arena")
        page.locator(".langs button[data-lang='en']").click()  # and a switch of language follows
        expect(page).to_have_title("Page not found · Patience Arena")
    finally:
        context.close()
