"""The tournament form in a real browser says what is wrong, each mistake in its own words and in the
page's language (it once said "the length and the start are whole numbers" to every mistake)."""

from __future__ import annotations

import datetime
import secrets
from typing import Any

import pytest
from browser_accounts import sign_up
from playwright.sync_api import expect

pytestmark = pytest.mark.slow


def test_the_form_says_each_mistake_in_the_pages_language(page: Any, base_url: str) -> None:
    tag = secrets.token_hex(3)
    sign_up(page, base_url, f"form{tag}", f"Form{tag}", then="/tournament")
    later = (datetime.datetime.now() + datetime.timedelta(days=10)).strftime("%Y-%m-%dT%H:%M")
    said = {"de": "Der Beginn ist ein Datum mit Uhrzeit innerhalb der nächsten 7 Tage.",
            "it": "L'inizio è una data e un'ora entro i prossimi 7 giorni.",
            "en": "The start is a date and time within the next 7 days."}
    for lang, text in said.items():
        page.goto(f"{base_url}/tournament?lang={lang}")
        form = page.locator("#tour-make")
        form.locator("#make-name").fill(f"Cup {tag}")
        form.locator("#make-minutes").fill("30")
        form.locator("#make-start").fill(later)
        form.locator("button[type=submit]").click()
        expect(page.locator("#make-msg")).to_have_text(text)
    # a password the server finds too long (the field allows 100 characters; a script sends more)
    page.evaluate("document.querySelector('#make-password').removeAttribute('maxlength')")
    form.locator("#make-start").fill("")
    form.locator("#make-locked").check()
    form.locator("#make-password").fill("x" * 101)
    form.locator("button[type=submit]").click()
    expect(page.locator("#make-msg")).to_have_text("The password has at most 100 characters.")
