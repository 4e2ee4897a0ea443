"""Signing up through the account page, as a player does, for the browser tests."""

from __future__ import annotations

from typing import Any


def sign_up(page: Any, base_url: str, login: str, name: str, *, then: str = "/duel", tap: bool = False) -> None:
    """Make an account with the sign-up form and land on ``then``; ``tap`` presses the button by touch."""
    page.goto(f"{base_url}/account?next={then}")
    form = page.locator("#signup-form")
    form.locator("input[name=login]").fill(login)
    form.locator("input[name=name]").fill(name)
    form.locator("input[name=password]").fill("a long enough password")
    button = form.locator("button[type=submit]")
    if tap:
        button.tap()
    else:
        button.click()
    page.wait_for_url(f"{base_url}{then}")
