"""A double click is two clicks on the same card that both pick it: a click that puts the picked card
onto a pile's top card, followed at once by a click on that card, picks it up and sends no move to the
foundation (in Der Fächer a wrong one costs 50 points) — even when the browser counts the two clicks as
its double click; a real double click still sends it there, once, and so does a double click slower than
the page's own window that the browser still counts as one (the system's setting, or a busy page)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from browser_settle import settle
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from patience.games import Move, get_game

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


def a_drop_on_a_card() -> tuple[int, str, str, str, str]:
    """A Der Fächer deal with a card that can be put on another pile's top card at once, and a card that
    can go to its foundation: (seed, moved card, target card, target pile, foundation card)."""
    cls = get_game("faecher")
    for seed in range(1, 500):
        state = cls.deal(seed, {})
        piles = state.piles()
        drop = next((m for m in state.legal_moves()
                     if m.src[0] in "rv" and m.dst[0] in "rv" and piles[m.dst]), None)
        home = next((m for m in state.legal_moves() if m.dst == "f" and m.src != drop.src), None) if drop else None
        if drop and home and home.src != drop.dst:
            assert state.check(Move(drop.dst, "f", 2)) is not None  # the two cards to the foundation: wrong
            return (seed, piles[drop.src][-1][0].text, piles[drop.dst][-1][0].text, drop.dst,
                    piles[home.src][-1][0].text)
    raise AssertionError("no such deal in range")


def sent_moves(page: Any) -> list[dict[str, Any]]:
    """The moves the page sends, as it sends them (filled as they go)."""
    moves: list[dict[str, Any]] = []

    def on_frame(payload: Any) -> None:
        try:
            msg = json.loads(payload)
        except (TypeError, ValueError):
            return
        if isinstance(msg, dict) and msg.get("t") == "move":
            moves.append(msg.get("d") or {})

    page.on("websocket", lambda ws: ws.on("framesent", on_frame))
    return moves


def card(page: Any, text: str) -> Any:
    return page.locator(f'.card[data-card="{text}"]')


def clicks(page: Any, x: float, y: float, gap_ms: int = 0) -> None:
    """Two clicks at (x, y), ``gap_ms`` apart, that the browser counts as a double click (its second is
    click number 2: the browser sends its own ``dblclick``), as a person's two quick clicks are."""
    page.mouse.move(x, y)
    page.mouse.down(click_count=1)
    page.mouse.up(click_count=1)
    if gap_ms:
        page.wait_for_timeout(gap_ms)
    page.mouse.down(click_count=2)
    page.mouse.up(click_count=2)


def centre(locator: Any) -> tuple[float, float]:
    box = locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def double_tap(page: Any, target: Any, done: str) -> None:
    """Two taps at the card's centre, back to back. On a loaded machine the second can come later than
    the page's double-tap window, which the page rightly reads as a pick and a put-back (no move): then
    the pair is tapped again, up to three times."""
    for _ in range(3):
        box = target.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.touchscreen.tap(x, y)
        page.touchscreen.tap(x, y)
        try:
            page.wait_for_selector(done, state="attached", timeout=3000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            page.wait_for_timeout(600)


def check_drop_then_quick_click(page: Any, base_url: str, shot: Any, name: str, touch: bool) -> None:
    seed, moved, target, pile, home = a_drop_on_a_card()
    moves = sent_moves(page)
    page.goto(f"{base_url}/play?game=faecher&seed={seed}")
    page.wait_for_selector(".card.up")
    settle(page)
    box = card(page, target).bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    (card(page, moved).tap if touch else card(page, moved).click)()  # pick
    if touch:
        page.touchscreen.tap(x, y)  # drop: the picked card goes onto this one
        page.touchscreen.tap(x, y)  # at once again, in the same place: a pick, not the second half of a double tap
    else:  # the same with a mouse, the browser counting the drop and the pick as its double click
        clicks(page, x, y)
    page.wait_for_selector(f'.card[data-card="{moved}"][data-pile="{pile}"]', state="attached")
    page.wait_for_timeout(500)
    shot(page, f"double-click-{name}-drop-then-click")
    assert [m.get("dst") for m in moves] == [pile], moves
    expect(page.locator("#score")).not_to_contain_text("−50")
    page.keyboard.press("Escape")
    page.wait_for_timeout(500)  # apart from the last click
    # a real double click (or double tap) still sends the card to its foundation
    if touch:
        double_tap(page, card(page, home), f'.card[data-card="{home}"][data-pile^="f"]')
    else:
        card(page, home).dblclick()
    page.wait_for_selector(f'.card[data-card="{home}"][data-pile^="f"]', state="attached")
    assert moves[-1].get("dst") == "f", moves
    assert len(moves) == 2, moves


def test_a_drop_on_a_card_then_a_quick_click_sends_no_foundation_move(page: Any, base_url: str, shot: Any) -> None:
    check_drop_then_quick_click(page, base_url, shot, "desktop", touch=False)


def test_a_drop_on_a_card_then_a_quick_tap_sends_no_foundation_move(browser: Any, base_url: str, shot: Any) -> None:
    context = browser.new_context(**PHONE, locale="en-US")
    try:
        page = context.new_page()
        check_drop_then_quick_click(page, base_url, shot, "phone", touch=True)
    finally:
        context.close()


def test_a_double_click_slower_than_the_pages_window_still_sends_the_card_home_once(page: Any, base_url: str,
                                                                                      shot: Any) -> None:
    seed, _, _, _, home = a_drop_on_a_card()
    moves = sent_moves(page)
    page.goto(f"{base_url}/play?game=faecher&seed={seed}")
    page.wait_for_selector(".card.up")
    settle(page)
    clicks(page, *centre(card(page, home)), gap_ms=700)  # the page alone reads a pick and a put-back
    page.wait_for_selector(f'.card[data-card="{home}"][data-pile^="f"]', state="attached")
    page.wait_for_timeout(500)
    assert [m.get("dst") for m in moves] == ["f"], moves
    expect(page.locator("#score")).not_to_contain_text("−50")
