"""Fair play in a real browser (docs/fairplay.md): the table says how a move was made (a drag with its
duration and path, a click, a key); a player reports another from the profile page (never oneself) and
after a duel from its replay (signed in only); a moderator
sees the queue at /mod, the account's evidence, and marks it with a required note, after which the
profile shows the mark; everyone else gets the 404 page at /mod; axe-core finds no serious or critical
violation on /mod at phone and desktop sizes."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

import pytest
from browser_accounts import sign_up
from playwright.sync_api import expect
from test_browser_access import DESKTOP, PHONE, serious

from patience.fairplay import Step, game_figures, verdict
from patience.server.storage import fairplay as fp
from patience.server.storage.roles import grant

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")


def my_id(page: Any) -> str:
    return page.evaluate("fetch('/api/me').then((r) => r.json()).then((d) => d.user.id)")  # type: ignore[no-any-return]


def evidence(server_app: Any, user_id: str, thinks: list[int], how: str) -> None:
    """An analysed rated game of ``user_id`` with these think times, as the server keeps one (a duel's
    evidence needs a whole live match: here its row is written as the analysis leaves it)."""
    steps = [[i, think, how, 300 if how == "drag" else None, 250 if how == "drag" else None]
             for i, think in enumerate(thinks)]
    figures = game_figures([Step(i, think, how) for i, think in enumerate(thinks)], 20, 19)
    with server_app.state.store.engine.begin() as connection:
        connection.execute(fp.EvidenceRow.__table__.insert(), [{
            "key": f"test:{user_id}:{len(thinks)}", "user_id": user_id, "kind": "duel", "game": "reloaded",
            "match_id": None, "game_id": None, "rating": 1500.0, "steps": json.dumps(steps), "record": None,
            "figures": json.dumps(figures.to_dict()), "verdict": verdict(figures).kind,
            "at_ms": int(time.time() * 1000), "analysed_ms": int(time.time() * 1000)}])


def test_the_table_says_how_each_move_was_made(page: Any, base_url: str) -> None:
    sent: list[dict[str, Any]] = []

    def watch(ws: Any) -> None:
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)))

    page.on("websocket", watch)
    page.goto(f"{base_url}/play?game=reloaded&seed=3")
    page.locator(".card.up").first.wait_for()
    # the top card of one pile dragged onto the top card of another (legal or not: the server judges)
    spots = page.evaluate("""() => {
      const tops = {};
      for (const c of document.querySelectorAll('.card.up')) {
        const p = c.dataset.pile, i = Number(c.dataset.index);
        if (!p.startsWith('t')) continue;
        if (!tops[p] || tops[p].i < i) tops[p] = { i, r: c.getBoundingClientRect() };
      }
      return Object.values(tops).slice(0, 2).map(({ r }) => [r.left + r.width / 2, r.top + r.height / 2]);
    }""")
    (x0, y0), (x1, y1) = spots
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x0 + 20, y0 + 10, steps=4)
    page.wait_for_timeout(120)
    page.mouse.move(x1, y1, steps=12)
    page.mouse.up()
    page.locator('.slot[data-pile="s"]').click(force=True)  # the stock's cards lie over its place
    page.wait_for_timeout(300)
    moves = [m["d"] for m in sent if m["t"] == "move"]
    stocks = [m["d"] for m in sent if m["t"] == "stock"]
    assert moves and moves[0]["how"] == "drag", sent
    assert moves[0]["ms"] >= 100 and moves[0]["px"] >= abs(x1 - x0), moves[0]
    assert stocks and stocks[0]["how"] == "click" and "ms" not in stocks[0], stocks


def test_a_report_from_the_profile_reaches_the_moderators_who_mark_with_a_note(
        browser: Any, base_url: str, server_app: Any) -> None:
    tag = secrets.token_hex(3)
    contexts = [browser.new_context(**DESKTOP, locale="en-US") for _ in range(3)]
    try:
        target, reporter, moderator = (c.new_page() for c in contexts)
        sign_up(target, base_url, f"tgt{tag}", f"Target {tag}", then="/profile")
        target_id = my_id(target)
        sign_up(reporter, base_url, f"rep{tag}", f"Reporter {tag}", then="/profile")
        evidence(server_app, target_id, [110 + i % 40 for i in range(60)], "click")  # machine speed
        evidence(server_app, my_id(reporter), [900 + (i * 677) % 5000 for i in range(60)], "drag")  # a person
        # one's own profile has no report button
        expect(reporter.locator("#player-name")).to_have_text(f"Reporter {tag}")
        expect(reporter.locator(".report-open")).to_have_count(0)

        reporter.goto(f"{base_url}/profile?u={target_id}")
        expect(reporter.locator("#player-name")).to_have_text(f"Target {tag}")
        reporter.get_by_role("button", name=f"Report Target {tag}").click()
        reporter.get_by_label("Plays with a bot or engine").check()
        reporter.get_by_label("Note (optional").fill("ten moves a second, every game")
        reporter.get_by_role("button", name="Send the report").click()
        expect(reporter.locator(".report-status")).to_contain_text("the moderators will look")
        expect(reporter.locator(".report-open")).to_be_disabled()

        # a non-moderator (signed in, or not) gets the 404 page for /mod, not the page
        answer = reporter.goto(f"{base_url}/mod")
        assert answer is not None and answer.status == 404
        expect(reporter.locator(".lost")).to_be_visible()
        assert contexts[0].request.get(f"{base_url}/mod").status == 404

        sign_up(moderator, base_url, f"mod{tag}", f"Moderator {tag}", then="/profile")
        assert grant(server_app.state.store, f"mod{tag}", "moderator")
        answer = moderator.goto(f"{base_url}/mod")
        assert answer is not None and answer.status == 200
        row = moderator.locator(f'#queue tr[data-account="{target_id}"]')
        expect(row).to_contain_text(f"Target {tag}")
        expect(row).to_contain_text("Plays with a bot or engine")
        row.get_by_role("link").click()
        expect(moderator.locator("#account-name")).to_have_text(f"Target {tag}")
        expect(moderator.locator("#reports")).to_contain_text("ten moves a second")
        expect(moderator.locator("#think .think-row")).to_have_count(11)
        expect(moderator.locator("#games tbody tr")).to_have_count(1)
        expect(moderator.locator("#games tbody tr")).to_contain_text("machine speed")
        expect(moderator.locator("#games tbody tr")).to_contain_text("click 60")
        SHOTS.mkdir(exist_ok=True)
        moderator.screenshot(path=str(SHOTS / "mod-1366.png"), full_page=True)
        assert serious(moderator) == []

        # the note is required
        moderator.get_by_label("Mark as a bot").check()
        moderator.get_by_role("button", name="Do it").click()
        expect(moderator.locator("#act-msg")).to_have_text("Say why in the note.")
        moderator.get_by_label("Note (required").fill("the report and the games agree")
        moderator.get_by_role("button", name="Do it").click()
        expect(moderator.locator("#act-msg")).to_have_text(f"Done: Target {tag} is now marked.")
        expect(moderator.locator("#audit")).to_contain_text("the report and the games agree")
        expect(moderator.locator(f'#queue tr[data-account="{target_id}"]')).to_have_count(0)

        target.goto(f"{base_url}/profile?u={target_id}")
        expect(target.locator("#fair-mark")).to_contain_text("bot or engine")
    finally:
        for context in contexts:
            context.close()


def test_the_moderation_page_at_phone_size(browser: Any, base_url: str, server_app: Any) -> None:
    tag = secrets.token_hex(3)
    context = browser.new_context(**PHONE, locale="de-DE")
    try:
        page = context.new_page()
        sign_up(page, base_url, f"mph{tag}", f"Mod Phone {tag}", then="/profile")
        assert grant(server_app.state.store, f"mph{tag}", "moderator")
        evidence(server_app, my_id(page), [110 + i % 40 for i in range(60)], "click")
        with server_app.state.store.engine.begin() as connection:  # reported: a row in the queue
            connection.execute(fp.ReportRow.__table__.insert(), [{
                "reporter_id": my_id(page), "user_id": my_id(page), "category": "bot", "note": None,
                "at_ms": int(time.time() * 1000)}])
        page.goto(f"{base_url}/mod?id={my_id(page)}")
        expect(page.locator("#account-name")).to_have_text(f"Mod Phone {tag}")
        expect(page.locator("#queue-title")).to_have_text("Warteschlange")
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "mod-390.png"), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width} px wide at 390 px"
        # on a phone every column of the queue and of the games is in sight, each cell with its column's name:
        # nothing cut off at the panel's edge
        expect(page.locator(f'#queue tr[data-account="{my_id(page)}"]')).to_be_visible()
        expect(page.locator("#games tbody tr")).to_have_count(1)
        cells = page.evaluate("""(id) => [...document.querySelectorAll(  // its own row (other tests' may be queued)
            `#queue tbody tr[data-account="${id}"] td, #games tbody td`)].map((td) => {
            const r = td.getBoundingClientRect();
            const box = td.closest(".table-scroll").getBoundingClientRect();
            return {text: td.textContent, label: td.dataset.label || "", left: r.left, right: r.right,
                    boxLeft: box.left, boxRight: box.right};
        })""", my_id(page))
        assert len(cells) == 15
        cut = [c for c in cells if c["right"] > c["boxRight"] + 1 or c["left"] < c["boxLeft"] - 1]
        assert not cut, cut
        assert [c["label"] for c in cells[:5]] == ["Spieler", "Wert", "Stand", "Meldungen", "Warum"]
        page.screenshot(path=str(SHOTS / "mod-390-queue.png"))
        assert serious(page) == []
    finally:
        context.close()


def test_after_a_duel_each_player_may_report_the_other_from_the_replay(browser: Any, base_url: str) -> None:
    tag = secrets.token_hex(3)
    contexts = [browser.new_context(**DESKTOP, locale="en-US") for _ in range(2)]
    try:
        anna, bruno = (c.new_page() for c in contexts)
        sent: list[dict[str, Any]] = []
        bruno.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(json.loads(payload))))
        sign_up(anna, base_url, f"rpa{tag}", f"Anna {tag}")
        sign_up(bruno, base_url, f"rpb{tag}", f"Bruno {tag}")
        anna.locator('.pool[data-format="reloaded/standard/600"] .challenge').click()
        link = anna.locator("#challenge-url")
        expect(link).not_to_have_value("")
        bruno.goto(link.input_value())
        bruno.locator("#accept").click()
        for page in (anna, bruno):  # the table is dealt (the countdown opens with it), then the countdown ends
            expect(page.locator("#arena")).to_be_visible()
            page.wait_for_selector(".card.up")
            expect(page.locator("#found")).to_be_hidden(timeout=8000)
        bruno.keyboard.press("d")  # a stock turn by key: said so to the server
        for _ in range(50):  # its frame is sent at once; on a busy machine the page may take a moment
            if any(m["t"] == "stock" for m in sent):
                break
            bruno.wait_for_timeout(100)
        assert any(m["t"] == "stock" and m["d"].get("how") == "key" for m in sent), sent
        for page in (anna, bruno):
            page.locator("#giveup").click()
            page.locator("#confirm-yes").click()
        for page in (anna, bruno):
            expect(page.locator("#result")).to_be_visible()
        anna_id = my_id(anna)
        match_id = anna.evaluate(f"fetch('/api/profile/{anna_id}').then((r) => r.json()).then((d) => d.recent[0].id)")
        anna.goto(f"{base_url}/match?id={match_id}")
        box = anna.locator("#report")
        expect(box).to_be_visible()
        expect(box.locator(".report-open")).to_have_count(1)  # Bruno only, never herself
        box.get_by_role("button", name=f"Report Bruno {tag}").click()
        box.get_by_label("Offensive name").check()
        box.get_by_role("button", name="Send the report").click()
        expect(box.locator(".report-status")).to_contain_text(f"the moderators will look at Bruno {tag}")
        # signed out: no report button on the replay
        contexts[1].clear_cookies()
        bruno.goto(f"{base_url}/match?id={match_id}")
        expect(bruno.locator(".side-name").first).not_to_have_text("")
        expect(bruno.locator("#report")).to_be_hidden()
    finally:
        for context in contexts:
            context.close()
