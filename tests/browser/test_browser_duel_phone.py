"""A duel on two phones: in a match the table has the screen (no site navigation, no stray way out),
the result shows every column, and the match history shows both players and the replay link."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from browser_accounts import sign_up
from playwright.sync_api import expect

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
FORMAT = "reloaded/standard/300"


def overflowing(page: Any, selector: str) -> list[str]:
    """Texts of the elements under ``selector`` that reach past the right edge of the screen or of their panel."""
    return page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].filter((el) => {
             if (!el.getClientRects().length) return false;
             const frame = el.closest(".panel, dialog")?.getBoundingClientRect();
             return el.getBoundingClientRect().right > Math.min(innerWidth, frame ? frame.right : innerWidth) + 0.5;
           }).map((el) => el.textContent.trim() || el.tagName)""",
        selector,
    )


def test_a_duel_on_two_phones(browser: Any, base_url: str, shot: Any) -> None:
    contexts = [browser.new_context(locale="en-US", **PHONE) for _ in range(2)]
    alice, bob = (context.new_page() for context in contexts)
    errors: list[str] = []
    for page in (alice, bob):
        page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        tag = secrets.token_hex(3)
        sign_up(alice, base_url, f"alice{tag}", f"Alice {tag}", tap=True)
        sign_up(bob, base_url, f"bob{tag}", f"Bob {tag}", tap=True)
        alice.locator(f'.pool[data-format="{FORMAT}"] .seek').tap()
        expect(alice.locator("#wait-box")).to_be_visible()
        bob.locator(f'.pool[data-format="{FORMAT}"] .seek').tap()
        for page in (alice, bob):
            expect(page.locator("#arena")).to_be_visible()
            page.wait_for_selector(".card.up")
        # the match has the screen: its title in one row with the figures, no site navigation
        expect(alice.locator("#nav")).to_be_hidden()
        expect(alice.locator("#game-name")).to_be_visible()
        header = alice.locator("header.bar").bounding_box()
        assert header is not None and header["height"] < 90
        shot(alice, "duel-phone-match")
        # a stray tap on the back arrow asks first
        alice.locator("#home").tap()
        expect(alice.locator("#confirm")).to_be_visible()
        expect(alice.locator("#confirm-text")).to_have_text("Leave the match? Your clock keeps running.")
        alice.locator("#confirm-no").tap()
        assert "/duel" in alice.url and "m=" in alice.url

        for page in (bob, alice):
            page.locator("#giveup").tap()
            page.locator("#confirm-yes").tap()
        for page in (alice, bob):
            expect(page.locator("#result")).to_be_visible()
            expect(page.locator("#result-rows tr")).to_have_count(2)
            assert overflowing(page, "#result th, #result td") == []
        shot(alice, "duel-phone-result")

        alice.goto(f"{base_url}/matches")
        row = alice.locator(".match-table tbody tr").first
        expect(row).to_contain_text(f"Alice {tag}")
        expect(row).to_contain_text(f"Bob {tag}")
        for text in (f"Alice {tag}", f"Bob {tag}"):
            expect(row.get_by_text(text).first).to_be_in_viewport()
        replay = row.locator('a[href^="/match?id="]')
        expect(replay).to_be_in_viewport()
        assert overflowing(alice, ".match-table td, .match-table a") == []
        shot(alice, "matches-phone")
    finally:
        for context in contexts:
            context.close()
    assert not errors, errors
