"""Accessibility in a real browser: axe-core (bundled by axe-playwright-python) finds no serious or
critical violation on any page — the start page, each game, its dialogs, the lobby, a duel and its
result, the replay, the profile, the match history, the leaderboard, the account and the error pages —
at desktop and phone sizes. And what a screen reader or a keyboard player meets at the table."""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from browser_accounts import sign_up
from browser_settle import settle
from playwright.sync_api import expect

from patience.games import get_game

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1366, "height": 850}}
AXE = Axe()


def serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now: rule, the elements, what to fix."""
    settle(page, 400)  # cards and dialogs done moving
    results = AXE.run(page)
    found = []
    for violation in results.response["violations"]:
        if violation["impact"] in ("serious", "critical"):
            nodes = "; ".join(f"{node['target']}: {' '.join(node.get('failureSummary', '').split())[:160]}"
                              for node in violation["nodes"][:4])
            found.append(f"{violation['id']} ({violation['impact']}): {nodes} — {violation['help']}")
    return found


PAGES = [
    ("/", ".game-tile"),
    ("/play?game=teppich&seed=3", ".card.up"),
    ("/play?game=teppich&variant=waste&seed=3", ".card.up"),
    ("/play?game=reloaded&seed=3", ".card.up"),
    ("/play?game=faecher&seed=3", ".card.up"),
    ("/duel", ".pool, #signin-box"),
    ("/leaderboard", "#page-title"),
    ("/daily", "#daily-days a"),
    ("/matches", "#page-title"),
    ("/account", "#signup-form"),
    ("/profile?u=nobody", "#error"),
    ("/nonexistent", ".lost"),
    ("/match?id=999999", ".lost"),
    ("/play?game=nope", ".lost"),
]


@pytest.fixture(scope="module")
def sized_pages(browser: Any) -> Iterator[dict[str, Any]]:
    """A page at each size, signed out, that the checks of the pages one after another load their page in."""
    contexts = {size: browser.new_context(locale="en-US", **(PHONE if size == "phone" else DESKTOP))
                for size in ("desktop", "phone")}
    try:
        yield {size: context.new_page() for size, context in contexts.items()}
    finally:
        for context in contexts.values():
            context.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize(("path", "ready"), PAGES)
def test_no_serious_violation_on_any_page(sized_pages: dict[str, Any], base_url: str, size: str, path: str,
                                          ready: str) -> None:
    page = sized_pages[size]
    page.goto(f"{base_url}{path}")
    page.wait_for_selector(ready, state="attached")
    assert serious(page) == []


@pytest.mark.parametrize("path", ["/duel", "/leaderboard", "/matches", "/daily", "/account"])
def test_the_page_names_its_controls_before_the_server_says_who_is_signed_in(browser: Any, base_url: str,
                                                                             path: str) -> None:
    """A slow first answer (``/api/me`` held back here) leaves no icon button without its name: the page's
    own words are put in at once, not after the server answered (a screen reader met unnamed buttons, and
    a loaded machine made this page's check above fail now and then)."""
    context = browser.new_context(locale="en-US", **PHONE)
    held: list[Any] = []
    try:
        page = context.new_page()
        page.route("**/api/me", lambda route: held.append(route))
        page.goto(f"{base_url}{path}")
        page.wait_for_function("() => document.documentElement.lang === 'en'")
        assert held, "the page asked the server who is signed in"
        assert serious(page) == []
        unnamed = page.evaluate("""() => [...document.querySelectorAll('[data-t-label]')]
            .filter((e) => !e.getAttribute('aria-label')).map((e) => e.id || e.className)""")
        assert unnamed == []
    finally:
        for route in held:
            with contextlib.suppress(Exception):
                route.continue_()
        context.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_no_serious_violation_in_the_play_page_dialogs(page: Any, base_url: str, lang: str) -> None:
    page.goto(f"{base_url}/play?game=reloaded&seed=3&lang={lang}")
    page.wait_for_selector(".card.up")
    page.locator("#menu-btn").click()
    expect(page.locator("#menu")).to_be_visible()
    assert serious(page) == []
    page.keyboard.press("Escape")
    page.locator("#score-btn").click()
    expect(page.locator("#ledger")).to_be_visible()
    assert serious(page) == []
    page.keyboard.press("Escape")
    page.locator("#rules-btn").click()
    expect(page.locator("#rules")).to_be_visible()
    assert serious(page) == []
    page.keyboard.press("Escape")
    page.locator("#menu-btn").click()
    page.locator("#m-giveup").click()
    expect(page.locator("#confirm")).to_be_visible()
    assert serious(page) == []
    page.locator("#confirm-yes").click()
    expect(page.locator("#end")).to_be_visible()
    expect(page.locator("#end-stats")).not_to_have_text("…")
    assert serious(page) == []


def test_no_serious_violation_on_the_duel_side(browser: Any, base_url: str) -> None:
    """Signed in: the lobby, a waiting player, a duel going on, its result, the replay, the profile,
    the match history, the leaderboard and the account page."""
    fmt = "reloaded/standard/300"
    contexts = [browser.new_context(locale="en-US", **DESKTOP) for _ in range(2)]
    anna, bruno = (context.new_page() for context in contexts)
    try:
        tag = secrets.token_hex(3)
        sign_up(anna, base_url, f"axa{tag}", f"Axe Anna {tag}")
        sign_up(bruno, base_url, f"axb{tag}", f"Axe Bruno {tag}")
        assert serious(anna) == []
        anna.locator(f'.pool[data-format="{fmt}"] .seek').click()
        expect(anna.locator("#wait-box")).to_be_visible()
        assert serious(anna) == []
        bruno.locator(f'.pool[data-format="{fmt}"] .seek').click()
        for page in (anna, bruno):
            expect(page.locator("#arena")).to_be_visible()
            page.wait_for_selector(".card.up")
        assert serious(bruno) == []
        for page in (bruno, anna):  # "match found": a countdown before the clocks start
            expect(page.locator("#found")).to_be_hidden(timeout=10_000)
        for page in (bruno, anna):
            page.locator("#giveup").click()
            page.locator("#confirm-yes").click()
            expect(page.locator("#giveup")).to_be_disabled(timeout=15_000)
        expect(anna.locator("#result")).to_be_visible(timeout=15_000)
        assert serious(anna) == []
        anna.locator("#to-replay").click()
        anna.wait_for_url("**/match?id=*")
        anna.wait_for_selector("#board0 .card.up")
        assert serious(anna) == []
        for path, ready in (("/profile", "#player-name:not(:empty)"), ("/matches", "tr[data-match]"),
                            ("/leaderboard?game=reloaded", "#rows"), ("/account", "#page-title"),
                            ("/", ".game-tile")):
            anna.goto(f"{base_url}{path}")
            anna.wait_for_selector(ready, state="attached")
            assert serious(anna) == [], path
    finally:
        for context in contexts:
            context.close()


def ace_on_cards() -> tuple[int, str, str, str]:
    """A Solitaire Reloaded deal with an Ace on top of face-down cards: (seed, the Ace, its pile, the card under it)."""
    cls = get_game("reloaded")
    for seed in range(1, 500):
        state = cls.deal(seed)
        for move in state.legal_moves():
            if move.dst == "f" and move.src.startswith("t") and len(state.piles()[move.src]) > 1:
                after = state.copy()
                after.push(move)
                return seed, state.piles()[move.src][-1][0].text, move.src, after.piles()[move.src][-1][0].text
    raise AssertionError("no such deal")


NAMES = {"A": "Ace", "J": "Jack", "Q": "Queen", "K": "King", "2": "Two", "3": "Three", "4": "Four", "5": "Five",
         "6": "Six", "7": "Seven", "8": "Eight", "9": "Nine", "10": "Ten"}
SUITS = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}


def spoken(card: str) -> str:
    return f"{NAMES[card[:-1]]} of {SUITS[card[-1]]}"


def test_a_screen_reader_hears_the_hidden_cards_and_the_card_turned_up(page: Any, base_url: str) -> None:
    seed, ace, pile, under = ace_on_cards()
    downs = int(pile[1:]) - 1
    page.goto(f"{base_url}/play?game=reloaded&seed={seed}")
    page.wait_for_selector(".card.up")
    face_up = page.locator(f'.card[data-card="{ace}"]')
    plural = "1 face-down card" if downs == 1 else f"{downs} face-down cards"
    expect(face_up).to_have_attribute("aria-label", f"{plural}, then {spoken(ace)}, Pile {pile[1:]}")
    # F sends the Ace home; the focus stays at the pile (on the card turned up), which is said
    face_up.focus()
    page.keyboard.press("f")
    page.wait_for_selector(f'.card[data-card="{ace}"][data-pile="f{ace[-1].lower()}"]', state="attached")
    expect(page.locator(f'.card[data-card="{under}"]')).to_be_focused()
    expect(page.locator("#live")).to_contain_text(f"Turned up: {spoken(under)}")
    if downs > 1:
        left = downs - 1
        expect(page.locator(f'.card[data-card="{under}"]')).to_have_attribute(
            "aria-label", re.compile(f"^{left} face-down cards?, then {spoken(under)}"))


def contrast(a: list[float], b: list[float]) -> float:
    def luminance(rgb: list[float]) -> float:
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (x / 255 for x in rgb)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_a_selected_red_card_keeps_its_contrast(page: Any, base_url: str) -> None:
    """The selection's tint lies over both the red index and the face: blended, they stay at 4.5:1 or more."""
    page.goto(f"{base_url}/play?game=faecher&seed=3")
    page.wait_for_selector(".card.up")
    red = page.locator('.card.up[data-pile^="v"].s-H, .card.up[data-pile^="v"].s-D').last
    red.click()
    expect(red).to_have_class(re.compile(r"\bselected\b"))
    colours = red.evaluate(
        """(el) => {
          const rgba = (text) => {
            const m = text.match(/[\\d.]+/g).map(Number);
            return [m[0], m[1], m[2], m[3] ?? 1];
          };
          const probe = document.createElement("div");
          probe.style.color = el.querySelector("svg rect").getAttribute("fill");
          document.body.append(probe);
          const face = rgba(getComputedStyle(probe).color);
          probe.remove();
          return { ink: rgba(getComputedStyle(el.querySelector("text.rank")).fill),
                   face, tint: rgba(getComputedStyle(el, "::after").backgroundColor) };
        }""")
    tint = colours["tint"]

    def under(rgb: list[float]) -> list[float]:
        return [c * (1 - tint[3]) + t * tint[3] for c, t in zip(rgb[:3], tint[:3], strict=True)]

    ratio = contrast(under(colours["ink"]), under(colours["face"]))
    assert ratio >= 4.5, (ratio, colours)
