"""Auto-move in a real browser: a setting of the play page (off until chosen, kept by the browser);
the server plays the safe cards up after the player's move, the page only shows them."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.slow

DESKTOP = {"viewport": {"width": 1366, "height": 850}}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


def pile_of(page: Any, text: str) -> str:
    return page.locator(f'.card[data-card="{text}"]').get_attribute("data-pile")  # type: ignore[no-any-return]


def stock(page: Any) -> Any:
    count = page.locator('.card[data-pile="s"]').count()
    return page.locator(f'.card[data-pile="s"][data-index="{count - 1}"]')


@pytest.mark.parametrize(("size", "device"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_auto_move_sends_a_safe_ace_up_once_chosen(browser: Any, base_url: str, shot: Any, size: str,
                                                    device: dict[str, Any]) -> None:
    context = browser.new_context(locale="en-US", **device)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        # game 21: A♥ lies on t7, face up
        page.goto(f"{base_url}/play?game=reloaded&seed=21")
        page.wait_for_selector(".card.up")
        stock(page).click()  # off by default: a draw leaves A♥ where it lies
        page.wait_for_selector('.card[data-pile="w"]', state="attached")
        page.wait_for_timeout(300)
        assert pile_of(page, "AH") == "t7"

        page.locator("#menu-btn").click()
        box = page.get_by_label("Auto-move")
        expect(box).not_to_be_checked()
        box.check()
        shot(page, f"menu-{size}-auto-move")
        page.locator("#menu [data-close]").click()
        stock(page).click()
        page.wait_for_selector('.card[data-card="AH"][data-pile="fh"]', state="attached")
        shot(page, f"reloaded-{size}-auto-move")

        page.reload()  # the browser keeps the choice
        page.wait_for_selector(".card.up")
        page.locator("#menu-btn").click()
        expect(page.locator("#auto")).to_be_checked()
        page.goto(f"{base_url}/play?game=reloaded&seed=21&lang=de")
        page.locator("#menu-btn").click()
        expect(page.get_by_label("Automatisch ablegen")).to_be_checked()
    finally:
        context.close()
