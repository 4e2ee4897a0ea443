"""The table's finish: a stock badge that reads as words, undos counted out of their store, toasts
that never lie over a card, a choice of card backs kept by the browser, court cards with figures,
hint marks that stand out, and a cascade of cards on a win (none for a player who asked for less
motion)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_settle import settle
from playwright.sync_api import expect

from patience.games import State, get_game

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1366, "height": 850}}


def test_the_stock_badge_and_the_undo_count_read_as_words(page: Any, base_url: str, shot: Any) -> None:
    page.goto(f"{base_url}/play?game=faecher&seed=4")
    page.wait_for_selector(".card.up")
    badge = page.locator(".badge")
    expect(badge).to_have_text("35 cards1 redeal left")
    expect(page.locator('.slot[data-pile="s"]')).to_have_attribute(
        "aria-label", re.compile(r"^Talon, 35 cards, 1 redeal left, Draw a card$"))
    shot(page, "polish-faecher-badge-desktop")
    page.goto(f"{base_url}/play?game=faecher&seed=4&lang=de")
    expect(badge).to_have_text("35 Kartennoch 1× umdrehen")
    page.goto(f"{base_url}/play?game=reloaded&seed=5&lang=it")
    expect(badge).to_have_text("24 carte")
    expect(page.locator("#undos-left")).to_have_text("(0 su 3)")  # none yet of the three a store holds
    page.keyboard.press("d")
    expect(page.locator("#undos-left")).to_have_text("(1 su 3)")
    expect(page.locator("#undo")).to_have_attribute(
        "title", "Annulla: 1 di scorta; ogni mossa ne aggiunge uno, fino a 3")
    page.goto(f"{base_url}/play?game=reloaded&seed=5&lang=en")
    expect(page.locator("#undos-left")).to_have_text("(0 of 3)")


def overlapping_cards(page: Any) -> list[str]:
    """The cards the toast lies over (by their bounding boxes)."""
    return page.evaluate(
        """() => {
          const t = document.querySelector("#toast").getBoundingClientRect();
          return [...document.querySelectorAll(".card")].filter((c) => !c.hidden).filter((c) => {
            const r = c.getBoundingClientRect();
            return r.left < t.right && r.right > t.left && r.top < t.bottom && r.bottom > t.top;
          }).map((c) => c.dataset.card || c.dataset.pile);
        }""")


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("query", ["game=teppich&rows=5&cols=6&seed=8", "game=reloaded&seed=5",
                                   "game=faecher&seed=4"])
def test_a_toast_never_covers_a_card(browser: Any, base_url: str, shot: Any, size: str, query: str) -> None:
    context = browser.new_context(locale="de-DE", **(PHONE if size == "phone" else DESKTOP))
    page = context.new_page()
    try:
        page.goto(f"{base_url}/play?{query}")
        page.wait_for_selector(".card.up")
        settle(page, 300)
        page.locator("#hint").click()
        toast = page.locator("#toast")
        expect(toast).to_be_visible()
        assert overlapping_cards(page) == []
        # a long message as well (a wrong move's reason is the longest a toast says)
        page.evaluate("""async () => (await import("/static/js/ui.js")).toast(
          "Eine Karte von der Ablage darf nur zurück in die Reihen: eine lange Meldung über zwei Zeilen", "bad")""")
        expect(toast).to_be_visible()
        assert overlapping_cards(page) == []
        shot(page, f"polish-toast-{query.split('&')[0].split('=')[1]}-{size}")
    finally:
        context.close()


def test_a_card_back_chosen_in_the_menu_is_kept(page: Any, base_url: str, shot: Any) -> None:
    page.goto(f"{base_url}/play?game=reloaded&seed=5")
    page.wait_for_selector(".card.up")
    page.locator("#menu-btn").click()
    page.locator("#menu label", has_text="Red").click()
    expect(page.locator("body")).to_have_class(re.compile(r"\bback-red\b"))
    page.keyboard.press("Escape")
    page.reload()
    page.wait_for_selector(".card.up")
    expect(page.locator("body")).to_have_class(re.compile(r"\bback-red\b"))
    assert page.evaluate("getComputedStyle(document.body).getPropertyValue('--back-a').trim()") == "#8a1c28"
    page.locator("#menu-btn").click()
    expect(page.locator("#menu input[value=red]")).to_be_checked()
    page.locator("#menu label", has_text="Green").click()
    expect(page.locator("body")).to_have_class(re.compile(r"\bback-green\b"))
    page.keyboard.press("Escape")
    shot(page, "polish-back-green")


def test_court_cards_have_figures_and_hints_stand_out(page: Any, base_url: str, shot: Any) -> None:
    page.goto(f"{base_url}/play?game=faecher&seed=4")
    page.wait_for_selector(".card.up")
    for court in page.locator('.card.up[data-card^="K"], .card.up[data-card^="Q"], .card.up[data-card^="J"]').all():
        assert court.locator("circle").count() >= 2  # two heads, head to head
    page.keyboard.press("h")
    marked = page.locator(".mark-hint").first
    expect(marked).to_be_attached()
    ring = marked.evaluate("(el) => getComputedStyle(el.classList.contains('card') ? el : el, "
                           "el.classList.contains('card') ? '::after' : null).boxShadow")
    assert "rgb(255, 122, 26)" in ring, ring  # an orange ring round a white one
    shot(page, "polish-faecher-hint")


def won_carpet() -> tuple[int, State]:
    cls = get_game("teppich")
    for seed in range(1, 3000):
        state = cls.deal(seed, {"rows": 5, "cols": 6})
        probe = state.copy()
        while moves := probe.legal_moves():
            probe.push(moves[0])
        if probe.is_won():
            return seed, state
    raise AssertionError("no won deal in range")


def play_up_by_keys(page: Any, state: State) -> None:
    """Play the carpet of ``state`` to its end on the page as a keyboard player does (focus the card, F),
    each card waited for on its foundation; ``state`` follows."""
    while moves := state.legal_moves():
        move = moves[0]
        text = state.piles()[move.src][0][0].text
        page.locator(f'.card[data-card="{text}"]').focus()
        page.keyboard.press("f")
        state.push(move)
        page.wait_for_selector(f'.card[data-card="{text}"][data-pile="f{text[-1].lower()}"]', state="attached")


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_a_win_is_celebrated_unless_less_motion_was_asked(browser: Any, base_url: str, shot: Any, motion: str) -> None:
    seed, state = won_carpet()
    context = browser.new_context(locale="en-US", reduced_motion=motion, **DESKTOP)
    page = context.new_page()
    try:
        page.goto(f"{base_url}/play?game=teppich&rows=5&cols=6&seed={seed}")
        page.wait_for_selector(".card.up")
        play_up_by_keys(page, state)
        page.wait_for_timeout(250)
        moving = page.evaluate("document.getAnimations().filter((a) => a.playState === 'running').length")
        if motion == "reduce":
            assert moving == 0
            expect(page.locator("#board")).not_to_have_attribute("data-celebrating", "1")
        else:
            assert moving >= 40, moving  # the cards leave the foundations one after another
            expect(page.locator("#board")).to_have_attribute("data-celebrating", "1")
            page.wait_for_timeout(900)
            shot(page, "polish-win-cascade")
        expect(page.locator("#end")).to_be_visible(timeout=10_000)
        expect(page.locator("#end-title")).to_have_text("Won!")
    finally:
        context.close()
