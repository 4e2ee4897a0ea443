"""The table's settings (issue 26), in one "Settings" section of the play page's menu and of the duel page's:
each does what it says (the stock on the right for the left-handed, larger and smaller cards, a dark table
that also follows the system, table colours) and stays after a reload; the sounds are one switch, off until
turned on and then heard (notes counted through a hooked Web Audio API). An opponent found while the duel
page is in the background marks the tab's title and, with notifications allowed, shows one. Screenshots
of the play page in each look, at both sizes, go to /tmp/shots/ (and test-artifacts/)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest
from browser_accounts import sign_up
from browser_settle import settle
from playwright.sync_api import expect
from test_browser_access import serious

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1366, "height": 850}}
SIZES = {"phone": PHONE, "desktop": DESKTOP}
SHOTS = Path("/tmp/shots")
PLAY = "/play?game=reloaded&seed=3"

# every note the page plays starts an oscillator: counted here
COUNT_NOTES = """
window.__notes = 0;
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) { window.__notes += 1; return start.apply(this, args); };
"""

# a tab the test may send to the background (window.__hidden), and the notifications it shows, counted
BACKGROUND = """
window.__hidden = false;
Object.defineProperty(Document.prototype, "hidden", { get: () => !!window.__hidden, configurable: true });
Object.defineProperty(Document.prototype, "visibilityState", {
  get: () => (window.__hidden ? "hidden" : "visible"), configurable: true });
window.__shown = [];
if (window.Notification) {
  const Real = window.Notification;
  window.Notification = class extends Real {
    constructor(title, options) { window.__shown.push(title); super(title, options); }
  };
}
"""


@pytest.fixture
def context_of(browser: Any) -> Any:
    made: list[Any] = []
    errors: list[str] = []

    def make(size: str = "desktop", **extra: Any) -> Any:
        context = browser.new_context(locale="en-US", **SIZES[size], **extra)
        context.on("page", lambda p: p.on("pageerror", lambda exc: errors.append(str(exc))))
        context.set_default_timeout(20_000)
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()
    assert not errors, f"errors in the page: {errors}"


def snap(page: Any, name: str, shot: Any) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    settle(page, 350)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    shot(page, name)


def open_play(context: Any) -> Any:
    page = context.new_page()
    page.goto(context.base_url + PLAY)
    page.wait_for_selector(".card.up")
    settle(page, 300)
    return page


def choose(page: Any, name: str, value: str) -> None:
    """Pick a setting in the menu's Settings section, as a player does, and close the menu."""
    page.locator("#menu-btn").click()
    expect(page.locator("#settings-title")).to_have_text("Settings")
    page.locator(f"#set-{name}").select_option(value)
    page.locator("#menu [data-close]").click()
    settle(page, 300)


def x_of(page: Any, pile: str) -> float:
    return page.locator(f'.slot[data-pile="{pile}"]').bounding_box()["x"]


def card_width(page: Any) -> float:
    return page.locator(".card.up").first.bounding_box()["width"]


@pytest.fixture
def context(context_of: Any, base_url: str) -> Any:
    context = context_of("desktop")
    context.base_url = base_url
    return context


def test_left_handed_puts_the_stock_on_the_right(context: Any) -> None:
    page = open_play(context)
    assert x_of(page, "s") < x_of(page, "w") < x_of(page, "fs")
    choose(page, "hand", "left")
    assert page.evaluate("document.documentElement.dataset.hand") == "left"
    assert x_of(page, "fs") < x_of(page, "fh") < x_of(page, "fd") < x_of(page, "fc") < x_of(page, "w") < x_of(page, "s")
    stock = x_of(page, "s")
    page.reload()
    page.wait_for_selector(".card.up")
    settle(page, 300)
    assert x_of(page, "s") == pytest.approx(stock, abs=1)  # kept
    # a card is played on the mirrored table as before: the stock turns a card onto the waste
    page.locator('.card[data-pile="s"]').last.click()
    expect(page.locator('.card[data-pile="w"]')).to_have_count(1)


def test_card_size(context: Any) -> None:
    page = open_play(context)
    normal = card_width(page)
    choose(page, "cards", "large")
    large = card_width(page)
    assert large > normal * 1.1
    page.reload()
    page.wait_for_selector(".card.up")
    settle(page, 300)
    assert card_width(page) == pytest.approx(large, abs=1)
    choose(page, "cards", "small")
    assert card_width(page) < normal * 0.9
    # the tableau stays on the table: the last column's right edge within the window
    right = max(box["x"] + box["width"] for box in (c.bounding_box() for c in page.locator(".slot").all()))
    assert right <= 1366


def test_theme_and_table_colour(context: Any) -> None:
    page = open_play(context)
    light = page.evaluate("getComputedStyle(document.body).backgroundImage")
    assert "0.58" not in light
    choose(page, "theme", "dark")
    assert "rgba(0, 0, 0, 0.58)" in page.evaluate("getComputedStyle(document.body).backgroundImage")
    page.reload()
    page.wait_for_selector(".card.up")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert "rgba(0, 0, 0, 0.58)" in page.evaluate("getComputedStyle(document.body).backgroundImage")
    # "like the system" follows the system's dark mode
    choose(page, "theme", "system")
    page.emulate_media(color_scheme="dark")  # the page hears of it as of any change of the system's scheme
    page.wait_for_function("() => document.documentElement.dataset.dark === 'true'", timeout=5000)
    assert "rgba(0, 0, 0, 0.58)" in page.evaluate("getComputedStyle(document.body).backgroundImage")
    assert page.locator('meta[name="theme-color"]').get_attribute("content") == "#0b1a12"  # the bar too
    page.emulate_media(color_scheme="light")
    page.wait_for_function("() => document.documentElement.dataset.dark === 'false'", timeout=5000)
    assert "0.58" not in page.evaluate("getComputedStyle(document.body).backgroundImage")
    assert page.locator('meta[name="theme-color"]').get_attribute("content") == "#174f33"
    choose(page, "felt", "blue")
    assert "rgb(46, 112, 168)" in page.evaluate("getComputedStyle(document.body).backgroundImage")
    page.reload()
    page.wait_for_selector(".card.up")
    assert page.locator("#set-felt").input_value() == "blue"


def test_the_look_is_there_before_the_first_paint(context: Any) -> None:
    """Set before any module runs: prefs.js, a classic script in <head>, puts it on <html>."""
    page = open_play(context)
    choose(page, "theme", "dark")
    seen = []
    page.on("console", lambda msg: seen.append(msg.text))
    page.add_init_script("""document.addEventListener("readystatechange", () => {
        if (document.readyState === "interactive") console.log("theme " + document.documentElement.dataset.theme);
    }, { once: true });""")
    page.reload()
    page.wait_for_selector(".card.up")
    assert "theme dark" in seen


def test_sounds_one_switch_off_until_turned_on(context: Any) -> None:
    context.add_init_script(COUNT_NOTES)
    page = open_play(context)
    assert page.evaluate("localStorage.getItem('patience.sound')") is None
    page.keyboard.press("d")  # a card from the stock: no sound yet
    expect(page.locator('.card[data-pile="w"]')).to_have_count(1)
    settle(page, 200)
    assert page.evaluate("window.__notes") == 0
    page.locator("#menu-btn").click()
    expect(page.locator("#sound")).not_to_be_checked()
    page.locator("#sound").check()
    page.locator("#menu [data-close]").click()
    after_switch = page.evaluate("window.__notes")
    assert after_switch >= 1  # the switch is heard
    page.keyboard.press("d")
    expect(page.locator('.card[data-pile="w"]')).to_have_count(2)
    settle(page, 200)
    assert page.evaluate("window.__notes") > after_switch  # a move: a note
    page.reload()
    page.wait_for_selector(".card.up")
    page.locator("#menu-btn").click()
    expect(page.locator("#sound")).to_be_checked()  # kept
    page.locator("#sound").uncheck()
    page.locator("#menu [data-close]").click()
    before = page.evaluate("window.__notes")
    page.keyboard.press("d")
    settle(page, 300)
    assert page.evaluate("window.__notes") == before


@pytest.mark.slow
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_screenshots_of_each_look(context_of: Any, base_url: str, shot: Any, size: str) -> None:
    context = context_of(size)
    context.base_url = base_url
    page = open_play(context)
    snap(page, f"settings-light-{size}", shot)
    page.locator("#menu-btn").click()
    page.locator("#settings-title").scroll_into_view_if_needed()
    snap(page, f"settings-menu-{size}", shot)
    assert serious(page) == []
    page.locator("#menu [data-close]").click()
    for name, value in [("theme", "dark"), ("hand", "left"), ("cards", "large"), ("felt", "blue")]:
        choose(page, name, value)
        snap(page, f"settings-{name}-{value}-{size}", shot)
    page.locator("#menu-btn").click()
    page.locator("#settings-title").scroll_into_view_if_needed()
    snap(page, f"settings-menu-dark-{size}", shot)
    assert serious(page) == []
    page.locator("#menu [data-close]").click()
    assert serious(page) == []
    # the other dialogs are dark too, and as readable
    page.locator("#rules-btn").click()
    snap(page, f"settings-rules-dark-{size}", shot)
    assert serious(page) == []
    page.locator("#rules [data-close]").click()
    page.keyboard.press("d")
    page.locator("#score-btn").click()
    snap(page, f"settings-ledger-dark-{size}", shot)
    assert serious(page) == []
    page.locator("#ledger [data-close]").click()
    page.locator("#menu-btn").click()
    page.locator("#m-giveup").click()
    page.locator("#confirm-yes").click()
    expect(page.locator("#end")).to_be_visible()
    snap(page, f"settings-end-dark-{size}", shot)
    assert serious(page) == []


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_duel_page_has_the_settings_too(context_of: Any, base_url: str, shot: Any, size: str) -> None:
    page = context_of(size).new_page()
    tag = secrets.token_hex(3)
    sign_up(page, base_url, f"set{tag}", f"Setter {tag}", tap=size == "phone")
    expect(page.locator("#notify")).to_be_visible()
    snap(page, f"settings-duel-lobby-{size}", shot)
    page.locator("#settings-btn").click()
    expect(page.locator("#settings #settings-title")).to_have_text("Settings")
    page.locator("#set-theme").select_option("dark")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    snap(page, f"settings-duel-dialog-{size}", shot)
    assert serious(page) == []
    page.locator("#settings [data-close]").click()
    assert serious(page) == []


def test_an_opponent_found_in_a_background_tab(context_of: Any, base_url: str, shot: Any) -> None:
    anna_context = context_of("desktop")
    anna_context.grant_permissions(["notifications"], origin=base_url)
    anna_context.add_init_script(BACKGROUND)
    anna_context.add_init_script(COUNT_NOTES)
    anna = anna_context.new_page()
    bruno = context_of("desktop").new_page()
    tag = secrets.token_hex(3)
    sign_up(anna, base_url, f"anna{tag}", f"Anna {tag}")
    sign_up(bruno, base_url, f"bruno{tag}", f"Bruno {tag}")
    fmt = "reloaded/standard/300"
    expect(anna.locator("#notify")).to_be_checked()  # the browser allows them already: on, until switched off
    anna.locator("#notify").uncheck()
    anna.reload()
    expect(anna.locator("#notify")).not_to_be_checked()  # kept
    anna.locator("#notify").check()
    anna.locator(f'.pool[data-format="{fmt}"] .seek').click()
    expect(anna.locator("#wait-box")).to_be_visible()
    title = anna.title()
    anna.evaluate("window.__hidden = true; document.dispatchEvent(new Event('visibilitychange'))")
    bruno.locator(f'.pool[data-format="{fmt}"] .seek').click()
    expect(bruno.locator("#arena")).to_be_visible()
    expect(anna).to_have_title("● " + title)
    assert anna.evaluate("window.__shown") == ["Opponent found"]
    assert anna.evaluate("window.__notes") >= 1  # heard, though sounds are off: the player asked to play
    anna.evaluate("window.__hidden = false; document.dispatchEvent(new Event('visibilitychange'))")
    expect(anna).to_have_title(title)
    # a tab in sight: no notification
    assert bruno.evaluate("typeof window.__shown") == "undefined"


# what the page does with its audio, said on its console: an AudioContext made (and its state then), the cards
# dealt. Before the first gesture the test watches the page only through its console: every query of
# Playwright's (a selector waited for, an evaluation) runs in Chromium as a user gesture (DevTools'
# Runtime.callFunctionOn with userGesture), which gives the page the browser's user activation; a sound due
# after one (the deal's, when the game comes after the query on a loaded machine) then rightly starts the audio.
WATCH_AUDIO = """
(() => {
  const Real = window.AudioContext;
  if (Real) {
    window.AudioContext = class extends Real {
      constructor(...args) { super(...args); console.log(`audio context made: ${this.state}`); }
    };
  }
  new MutationObserver((_, watch) => {
    if (!document.querySelector(".card.up")) return;
    watch.disconnect();
    console.log("cards up");
  }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ["class"] });
})();
"""


def test_audio_starts_on_the_first_gesture_not_before(context: Any) -> None:
    """With sounds on, a game page starts no audio before the player's first gesture (the browser would refuse
    it, saying so in the console), and the first gesture starts it: the move's sound is heard."""
    context.add_init_script("try { localStorage.setItem('patience.sound', '1'); } catch {}")  # not on about:blank
    context.add_init_script(COUNT_NOTES)
    context.add_init_script(WATCH_AUDIO)
    said: list[str] = []
    context.on("console", lambda message: said.append(message.text))
    page = context.new_page()
    heard: list[str] = []
    page.on("console", lambda message: heard.append(message.text))
    with page.expect_console_message(lambda message: message.text == "cards up"):
        page.goto(context.base_url + PLAY)  # dealt: the deal's sound was due (before the cards were drawn)
    duel = context.new_page()  # another page of the site, used meanwhile, is no gesture on this one
    duel.goto(context.base_url + "/duel")
    expect(duel.locator("#nav")).not_to_be_empty()
    assert not [text for text in heard if text.startswith("audio context made")], heard
    page.locator('.slot[data-pile="s"]').click(force=True)
    expect(page.locator('.card[data-pile="w"]')).to_have_count(1)
    page.wait_for_function("window.__notes >= 1")
    assert page.evaluate("async () => (await import('/static/js/sound.js')).audioState()") == "running"
    assert len([text for text in heard if text.startswith("audio context made")]) == 1  # made by the gesture
    assert not [text for text in said if "AudioContext" in text], said


def test_which_sound_for_what(context: Any) -> None:
    """A card onto a foundation has a sound of its own (two notes), any other move one note; the clock's last
    ten seconds tick once a second, not before; nothing at all with the switch off."""
    context.add_init_script(COUNT_NOTES)
    page = open_play(context)
    page.locator("#clock").click()  # a gesture: audio may start
    counts = page.evaluate("""async () => {
        const m = await import("/static/js/sound.js");
        const notes = (fn) => { const before = window.__notes; fn(); return window.__notes - before; };
        const state = {};
        const off = notes(() => { m.moveSound("t1>fh"); m.lastSeconds(state, 5000, true); });
        m.soundOn(true);
        return {
            off,
            foundation: notes(() => m.moveSound("t1>fh")), any: notes(() => m.moveSound("t1>f")),
            move: notes(() => m.moveSound("t6>t1:3")), stock: notes(() => m.moveSound("s>w")),
            early: notes(() => m.lastSeconds(state, 10500, true)),
            ten: notes(() => { m.lastSeconds(state, 9990, true); m.lastSeconds(state, 9100, true); }),
            nine: notes(() => m.lastSeconds(state, 8900, true)),
            stopped: notes(() => m.lastSeconds(state, 7000, false)),
            win: notes(() => m.sound("win")), found: notes(() => m.sound("found")),
        };
    }""")
    assert counts == {"off": 0, "foundation": 2, "any": 2, "move": 1, "stock": 1, "early": 0, "ten": 1,
                      "nine": 1, "stopped": 0, "win": 4, "found": 2}


def test_the_browser_bar_follows_the_dark_theme(context: Any) -> None:
    page = open_play(context)
    assert page.locator('meta[name="theme-color"]').get_attribute("content") == "#174f33"
    choose(page, "theme", "dark")
    assert page.locator('meta[name="theme-color"]').get_attribute("content") == "#0b1a12"
    page.reload()
    page.wait_for_selector(".card.up")
    assert page.locator('meta[name="theme-color"]').get_attribute("content") == "#0b1a12"
    choose(page, "theme", "light")
    assert page.locator('meta[name="theme-color"]').get_attribute("content") == "#174f33"


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_dark_theme_on_the_other_pages(context_of: Any, base_url: str, shot: Any, size: str) -> None:
    """The theme chosen at the table holds on every page (prefs.js is in every page's head), readable."""
    context = context_of(size)
    context.add_init_script("if (location.protocol === 'http:') { localStorage.setItem('patience.theme', 'dark');"
                            "localStorage.setItem('patience.felt', 'red'); }")
    page = context.new_page()
    for path, ready in (("/", ".game-tile"), ("/leaderboard", "#page-title"), ("/duel", ".pool, #signin-box")):
        page.goto(base_url + path)
        page.wait_for_selector(ready)
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        assert "rgba(0, 0, 0, 0.58)" in page.evaluate("getComputedStyle(document.body).backgroundImage")
        snap(page, f"settings-dark-{path.strip('/') or 'start'}-{size}", shot)
        assert serious(page) == []
