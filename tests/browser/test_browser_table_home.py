"""The table feels instant and at home (issue 26): on a phone the start page's first Play button is on the
first screen, the replay viewer's buttons hold their words (German too), the stock's badge is no wider
than its card, the header shows the whole game number, the earlier days' dates stay on one line and the
phone's menu shows no keyboard help; Der Fächer with one pass is a variant of its own (start page, rules,
statistics); and /daily shows a signed-in player's streak and a calendar of their days. Screenshots of
each page at both sizes go to /tmp/shots/ (and test-artifacts/)."""

from __future__ import annotations

import datetime as dt
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_accounts import sign_up
from browser_settle import settle
from playwright.sync_api import expect
from test_browser_access import serious
from test_browser_daily_past import finished_attempt

from patience.daily import DAILY, daily_commitment
from patience.rng import new_deal_key
from patience.server.storage.daily import choose_deal, start_attempt

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1366, "height": 850}}
SIZES = {"phone": PHONE, "desktop": DESKTOP}
SHOTS = Path("/tmp/shots")


def snap(page: Any, name: str, shot: Any) -> None:
    """A screenshot in /tmp/shots/ to look at, and one among the test artifacts."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    settle(page, 350)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    shot(page, name)


@pytest.fixture
def context_of(browser: Any) -> Any:
    """``context_of(size, locale)``: a new browser context (closed after the test) with no error in its pages."""
    made: list[Any] = []
    errors: list[str] = []

    def make(size: str, locale: str = "en-US") -> Any:
        context = browser.new_context(locale=locale, **SIZES[size])
        context.on("page", lambda p: p.on("pageerror", lambda exc: errors.append(str(exc))))
        context.set_default_timeout(20_000)
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()
    assert not errors, f"errors in the page: {errors}"


def box(locator: Any) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, locator
    return found  # type: ignore[no-any-return]


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["x"] < b["x"] + b["width"] - 0.5 and b["x"] < a["x"] + a["width"] - 0.5
            and a["y"] < b["y"] + b["height"] - 0.5 and b["y"] < a["y"] + a["height"] - 0.5)


# -- phone fixes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_first_play_button_is_on_the_first_screen(context_of: Any, base_url: str, shot: Any, size: str) -> None:
    page = context_of(size).new_page()
    page.goto(f"{base_url}/")
    button = page.locator(".play-btn").first
    expect(button).to_have_text("Play")
    found = box(button)
    assert found["y"] + found["height"] <= SIZES[size]["viewport"]["height"], found  # type: ignore[index]
    expect(page.locator(".game-tile .rules li").first).to_be_visible()  # the rules are still there
    snap(page, f"start-{size}", shot)
    assert serious(page) == []


@pytest.fixture(scope="module")
def past_replay(server_app: Any, base_url: str) -> str:
    """The replay viewer's address of a game of a day that is over (written as the server writes one)."""
    with httpx.Client(base_url=base_url) as http:
        token = http.get("/api/me").json()["csrf"]
        login = f"replay{secrets.token_hex(3)}"
        signed = http.post("/account/signup", data={"csrf": token, "login": login, "name": login.title(),
                                                    "password": "a long enough password"},
                           headers={"accept": "application/json"})
        assert signed.status_code == 200, signed.text
        user_id = signed.json()["user"]["id"]
    day = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=5)).isoformat()
    engine = server_app.state.store.engine
    key, attempt = next((k, a) for k in (new_deal_key() for _ in range(100))
                        if (a := finished_attempt(k, day, secrets.token_urlsafe(12))).score > 0)
    choose_deal(engine, day, "reloaded", f"reloaded/{DAILY['reloaded']}", key, daily_commitment("reloaded", key), True)
    start_attempt(engine, day, "reloaded", user_id, attempt)
    return f"/match?daily=reloaded/{day}/{attempt.id}"


@pytest.mark.parametrize(("size", "lang"), [("phone", "de"), ("phone", "it"), ("phone", "en"), ("desktop", "de")])
def test_the_replay_buttons_hold_their_words(context_of: Any, base_url: str, past_replay: str, shot: Any,
                                             size: str, lang: str) -> None:
    page = context_of(size).new_page()
    page.goto(f"{base_url}{past_replay}&lang={lang}")
    expect(page.locator("#verify")).to_have_attribute("data-ok", "true")
    buttons = page.locator(".replay-controls .btn")
    expect(buttons).to_have_count(5)
    snap(page, f"replay-{size}-{lang}", shot)
    boxes = [box(buttons.nth(i)) for i in range(5)] + [box(page.locator("#scrub")), box(page.locator("#step"))]
    for i in range(5):
        button = buttons.nth(i)
        # the words inside their button: nothing spills over (nor is cut)
        assert button.evaluate("b => b.scrollWidth <= b.clientWidth + 1 && b.scrollHeight <= b.clientHeight + 1"), \
            button.inner_text()
        for j, other in enumerate(boxes):
            assert j == i or not overlap(boxes[i], other), (button.inner_text(), j)
        assert boxes[i]["x"] >= 0 and boxes[i]["x"] + boxes[i]["width"] <= SIZES[size]["viewport"]["width"]  # type: ignore[index]
    assert serious(page) == []


@pytest.mark.parametrize("query", ["game=faecher&seed=4", "game=reloaded&seed=4", "game=teppich&variant=waste&seed=4",
                                   "game=faecher&variant=one-pass&seed=4"])
@pytest.mark.parametrize("lang", ["en", "de", "it"])
def test_the_stock_badge_is_no_wider_than_its_card(context_of: Any, base_url: str, query: str, lang: str) -> None:
    page = context_of("phone").new_page()
    page.goto(f"{base_url}/play?{query}&lang={lang}")
    page.wait_for_selector(".card.up")
    badge = page.locator(".badge").first
    expect(badge).to_be_visible()
    settle(page, 300)
    card = box(page.locator(".slot.kind-stock").first)
    said = box(badge)
    assert said["width"] <= card["width"] + 0.5, (badge.inner_text(), said, card)


@pytest.mark.parametrize("lang", ["en", "de", "it"])
@pytest.mark.parametrize("query", ["game=faecher&variant=with-undo", "game=teppich&variant=5x6-waste",
                                   "game=reloaded&variant=untimed"])
def test_the_header_shows_the_whole_game_number(context_of: Any, base_url: str, shot: Any, lang: str,
                                                query: str) -> None:
    page = context_of("phone").new_page()
    seed = "987654321"  # as long as a random game number gets
    page.goto(f"{base_url}/play?{query}&seed={seed}&lang={lang}")
    page.wait_for_selector(".card.up")
    number = page.locator("#variant-name .which")
    expect(number).to_have_text(f"#{seed}")
    expect(number).to_be_visible()
    assert number.evaluate("n => n.scrollWidth <= n.clientWidth + 1")  # not cut
    title, said = box(page.locator(".bar .title")), box(number)
    assert said["x"] >= title["x"] - 0.5 and said["x"] + said["width"] <= title["x"] + title["width"] + 0.5
    if query.startswith("game=faecher") and lang == "de":
        snap(page, "header-phone-de", shot)


def test_the_earlier_days_keep_each_date_on_one_line(context_of: Any, base_url: str, shot: Any) -> None:
    for size in ("phone", "desktop"):
        page = context_of(size).new_page()
        page.goto(f"{base_url}/daily?game=faecher&lang=de")
        links = page.locator("#daily-days a")
        expect(links).to_have_count(8, timeout=30_000)  # the day's first visit proves its deal
        expect(links.nth(1)).to_have_text((dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat())
        heights = [box(links.nth(i))["height"] for i in range(8)]
        line = links.nth(1).evaluate("a => parseFloat(getComputedStyle(a).lineHeight) || 20")
        padding = links.nth(1).evaluate("a => parseFloat(getComputedStyle(a).paddingTop) + "
                                        "parseFloat(getComputedStyle(a).paddingBottom)")
        assert max(heights) < 1.6 * line + padding + 2, (heights, line, padding)  # one line each
        assert max(heights) - min(heights) < 1
        # and side by side as the line has room: the page no wider than the screen
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        snap(page, f"daily-signed-out-{size}", shot)


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_phone_menu_has_no_keyboard_help(context_of: Any, base_url: str, shot: Any, size: str) -> None:
    page = context_of(size).new_page()
    page.goto(f"{base_url}/play?game=teppich&seed=3")
    page.wait_for_selector(".card.up")
    page.locator("#menu-btn").click()
    keys = page.locator("dialog .keys")
    if size == "phone":
        expect(keys).to_be_hidden()
    else:
        expect(keys).to_be_visible()
        expect(keys).to_contain_text("Enter")
    snap(page, f"menu-{size}", shot)


# -- Der Fächer with one pass ---------------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_one_pass_faecher_has_its_place_its_rules_and_its_statistics(context_of: Any, base_url: str, shot: Any,
                                                                      size: str) -> None:
    page = context_of(size).new_page()
    page.goto(f"{base_url}/")
    tile = page.locator('.game-tile[data-game="faecher"]')
    select = tile.locator("select")
    expect(select.locator("option[value='one-pass']")).to_have_text("One pass")
    select.select_option("one-pass")
    expect(tile.locator(".rules")).to_contain_text("gone through once only: no redeal")
    expect(tile.locator(".rules")).not_to_contain_text("twice")
    expect(tile.locator(".tile-odds")).to_contain_text("34")  # the published rate of one pass (672 of 2,000)
    expect(tile.locator(".tile-stats")).to_contain_text("One pass")
    tile.locator("input[name=winnable]").uncheck()
    tile.locator("input[name=seed]").fill("4")
    tile.locator(".play-btn").click()
    page.wait_for_url("**/play?game=faecher&variant=one-pass&seed=4")
    page.wait_for_selector(".card.up")
    expect(page.locator("#variant-name")).to_contain_text("One pass")
    expect(page.locator(".badge").first).not_to_contain_text("redeal")  # no redeal left to tell
    snap(page, f"faecher-one-pass-{size}", shot)
    page.locator(".rules-btn").click()
    lines = page.locator("#rules-lines")
    expect(lines).to_contain_text("The talon is gone through once only: no redeal.")
    expect(lines).not_to_contain_text("twice")
    snap(page, f"faecher-one-pass-rules-{size}", shot)
    assert serious(page) == []
    page.keyboard.press("Escape")
    # a one-pass game begun through the address's option counts under one pass too, never as Standard
    for address in ("/play?game=faecher&variant=one-pass&seed=4", "/play?game=faecher&passes=1&seed=5"):
        page.goto(f"{base_url}{address}")
        page.wait_for_selector(".card.up")
        expect(page.locator("#variant-name")).to_contain_text("One pass")
        page.locator("#menu-btn").click()
        page.locator("#m-giveup").click()
        page.locator("#confirm-yes").click()
        expect(page.locator("#end-title")).to_have_text("Given up")
        expect(page.locator("#end-stats-title")).to_contain_text("One pass")
    stats = page.evaluate("fetch('/api/stats').then(r => r.json())")["stats"]["faecher"]
    assert stats["variants"]["one-pass"]["played"] == 2
    assert "standard" not in stats["variants"] and "custom" not in stats["variants"]
    page.goto(f"{base_url}/")
    tile = page.locator('.game-tile[data-game="faecher"]')
    tile.locator("select").select_option("one-pass")
    expect(tile.locator(".tile-stats")).not_to_contain_text("No games yet")
    tile.locator("select").select_option("standard")
    expect(tile.locator(".tile-stats")).to_contain_text("No games yet")


# -- a daily habit --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_daily_streak_and_calendar_show_after_an_attempt(context_of: Any, base_url: str, server_app: Any,
                                                             shot: Any, size: str) -> None:
    context = context_of(size)
    page = context.new_page()
    page.goto(f"{base_url}/daily?game=reloaded")
    expect(page.locator("#daily-days a").first).to_be_visible(timeout=30_000)  # the day's first visit proves its deal
    expect(page.locator("#daily-mine")).to_be_hidden()  # signed out: nothing
    assert page.request.get(f"{base_url}/api/daily/mine").status == 401
    login = f"streak{secrets.token_hex(3)}"
    sign_up(page, base_url, login, login.title(), then="/daily")
    for bad in ("2026-13", "nope", "2026-1", "2026-11-01"):
        answer = page.request.get(f"{base_url}/api/daily/mine?month={bad}")
        assert answer.status == 400 and answer.json()["error"] == "bad_month", bad
    expect(page.locator("#daily-mine")).to_be_visible()
    expect(page.locator("#daily-streak")).to_have_text("Streak: 0 days")
    # yesterday's attempt, written as the server writes one, then today's through the page
    today = dt.datetime.now(dt.UTC).date()
    yesterday = (today - dt.timedelta(days=1)).isoformat()
    user_id = page.evaluate("fetch('/api/me').then(r => r.json())")["user"]["id"]
    engine = server_app.state.store.engine
    key = new_deal_key()
    choose_deal(engine, yesterday, "reloaded", f"reloaded/{DAILY['reloaded']}", key,
                daily_commitment("reloaded", key), True)
    old = finished_attempt(key, yesterday, secrets.token_urlsafe(12))
    start_attempt(engine, yesterday, "reloaded", user_id, old)
    page.goto(f"{base_url}/daily?game=reloaded")
    page.locator("#daily-play").click()
    page.wait_for_url(f"{base_url}/play?*")
    page.wait_for_selector(".card.up")
    page.goto(f"{base_url}/daily?game=reloaded")
    expect(page.locator("#daily-streak")).to_have_text("Streak: 2 days", timeout=30_000)
    expect(page.locator("#daily-best")).to_have_text("Best: 2 days")
    cell = page.locator(f"#cal-days a[href='/daily?game=reloaded&day={today.isoformat()}']")
    expect(cell).to_have_text(str(today.day))
    expect(cell).to_have_class("played")
    expect(cell).to_have_attribute("aria-label", f"{today.isoformat()}: Solitaire Reloaded: playing")
    expect(page.locator("#cal-next")).to_be_disabled()
    board, panel = box(page.locator(".daily-board")), box(page.locator(".daily-board").locator(".."))
    assert board["x"] + board["width"] <= panel["x"] + panel["width"] - 8  # the day's board within its panel
    snap(page, f"daily-mine-{size}", shot)
    assert serious(page) == []
    if yesterday[:7] == today.isoformat()[:7]:
        expect(page.locator(f"#cal-days a[href='/daily?game=reloaded&day={yesterday}']")).to_have_class("played")
    else:
        page.locator("#cal-prev").click()
        expect(page.locator(f"#cal-days a[href='/daily?game=reloaded&day={yesterday}']")).to_have_class("played")
        page.locator("#cal-next").click()
    # the calendar's days lead to their boards
    cell.click()
    page.wait_for_url(f"{base_url}/daily?game=reloaded&day={today.isoformat()}")
    expect(page.locator("#daily-day")).to_contain_text(today.isoformat())
    page.locator("#nav .langs button[data-lang=de]").click()
    expect(page.locator("#daily-streak")).to_have_text("Serie: 2 Tage")
    snap(page, f"daily-mine-{size}-de", shot)
