"""The account page in a real browser, with a server that sends mail (aiosmtpd on a free port): every
section shows at 390 px and at 1366 px without sideways scrolling, the password is changed through
the form, a second browser is listed and signed out from the first, and a forgotten password is set
again through the link of the mail."""

from __future__ import annotations

import email
import email.policy
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from browser_accounts import sign_up
from playwright.sync_api import expect

PASSWORD = "a long enough password"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Inbox:
    def __init__(self) -> None:
        self.bodies: list[str] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.bodies.append(message.get_content())
        return "250 OK"


@pytest.fixture(scope="module")
def mail_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Inbox]]:
    import uvicorn

    from patience.server import create_app

    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=_free_port())
    smtp.start()
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    app = create_app(tmp_path_factory.mktemp("mail-site"), smtp_url=f"smtp://127.0.0.1:{smtp.port}", public_url=url)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield url, inbox
    server.should_exit = True
    thread.join(timeout=10)
    smtp.stop()


def no_sideways_scroll(page: Any) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.mark.slow
def test_the_account_page_at_phone_and_desktop_width(mail_site: tuple[str, Inbox], browser: Any, shot: Any) -> None:
    url, inbox = mail_site
    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="de-DE", is_mobile=True,
                                has_touch=True)
    page = phone.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_up(page, url, "paula", "Paula", then="/account")
    page.locator("#sessions li").first.wait_for()
    assert page.locator("#email-form").is_visible() and page.locator("#close-form").is_visible()
    no_sideways_scroll(page)
    page.screenshot(path=str(shot(page, "account-390").with_name("account-390-full.png")), full_page=True)

    # a second browser signs in; the first lists it and signs it out
    desktop = browser.new_context(viewport={"width": 1366, "height": 850}, locale="en-US")
    other = desktop.new_page()
    other.on("pageerror", lambda exc: errors.append(str(exc)))
    other.goto(f"{url}/account")
    form = other.locator("#signin-form")
    form.locator("input[name=login]").fill("paula")
    form.locator("input[name=password]").fill(PASSWORD)
    form.locator("button[type=submit]").click()
    other.wait_for_url(f"{url}/duel")
    other.goto(f"{url}/account")
    other.locator("#sessions li").nth(1).wait_for()
    no_sideways_scroll(other)
    shot(other, "account-1366")
    other.screenshot(path=str(shot(other, "account-1366").with_name("account-1366-full.png")), full_page=True)
    page.reload()
    page.locator("#sessions li").nth(1).wait_for()
    page.locator("#sessions li", has_not=page.locator(".session-mark")).locator("button").click()
    page.locator("#sessions li").nth(1).wait_for(state="detached")
    other.reload()
    other.locator("#signin-form").wait_for(state="visible")

    # the e-mail address, then a new password
    mail = page.locator("#email-form")
    mail.locator("input[name=email]").fill("paula@example.org")
    mail.locator("input[name=password]").fill(PASSWORD)
    mail.locator("button[type=submit]").click()
    page.locator("#email-now", has_text="paula@example.org").wait_for()
    pw = page.locator("#password-form")
    pw.locator("input[name=old]").fill("not the password at all")  # a wrong current password: said as such
    pw.locator("input[name=new]").fill("an even longer password")
    pw.locator("button[type=submit]").click()
    expect(page.locator("#error")).to_have_text("Das ist nicht das Passwort des Kontos.")
    pw.locator("input[name=old]").fill(PASSWORD)
    pw.locator("input[name=new]").fill("an even longer password")
    pw.locator("button[type=submit]").click()
    page.locator("#info", has_text="Passwort geändert").wait_for()

    # forgotten: the link of the mail sets another
    other.locator("#forgot-form").wait_for(state="visible")
    shot(other, "account-signed-out-1366")
    other.locator("#forgot-form input[name=who]").fill("paula")
    other.locator("#forgot-form button[type=submit]").click()
    other.locator("#info").wait_for(state="visible")
    deadline = time.monotonic() + 10
    while not inbox.bodies and time.monotonic() < deadline:
        time.sleep(0.1)
    link = re.search(r"http://\S+/account\?reset=[A-Za-z0-9_-]+", inbox.bodies[-1]).group(0)
    other.goto(link)
    reset = other.locator("#reset-form")
    reset.wait_for(state="visible")
    assert "reset=" not in other.url  # the token left the address bar
    reset.locator("input[name=password]").fill("the third password")
    reset.locator("button[type=submit]").click()
    other.wait_for_url(f"{url}/account?reset_done=1")
    other.locator("#info").wait_for(state="visible")
    other.goto(link)  # the link again: used, said at once, and the form to ask for a new one instead of its own
    expect(other.locator("#error")).to_have_text("This link is used or too old: ask for a new one.")
    expect(other.locator("#reset-form")).to_be_hidden()
    expect(other.locator("#forgot-form")).to_be_visible()
    shot(other, "account-reset-used-1366")
    page.reload()
    page.locator("#signin-form").wait_for(state="visible")  # the reset signed every browser out
    form = other.locator("#signin-form")
    form.locator("input[name=login]").fill("paula")
    form.locator("input[name=password]").fill("the third password")
    form.locator("button[type=submit]").click()
    other.wait_for_url(f"{url}/duel")
    phone.close()
    desktop.close()
    assert not errors, errors
