"""A finished game's analysis in the replay viewer, in a real browser: the player opens their solo game's
replay, asks for the analysis, sees the graph fill in (worked by the server's analysis worker process), picks
the key moment (by mouse, and by keyboard), reads the move played and the better one, and steps through the
better line — in German and in Italian, at desktop and at phone width; then the win chance with what the
player could see fills the graph (line and band), names the give-up a blunder with its better move, and tells
luck against play in one line.

The finished game is written into the server's database through its store, as the server writes a solo game
that has ended, for the browser that then opens it (its cookie): a Solitaire Reloaded deal of the winnable
list, three cards drawn, then given up — so the give-up lost a deal that could be won."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from conftest import _free_port
from patience.games import get_game
from patience.server.storage.store import SavedGame
from patience.session import ManualClock, Session

CHANCE_S = 12.0  # the win chance's CPU budget a game here: enough for the give-up's samples to name it


@pytest.fixture(scope="module")
def analysing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A server of its own with one analysis worker process: its address and its app."""
    import uvicorn

    from patience.server import create_app

    app = create_app(tmp_path_factory.mktemp("analysis"), analysis_workers=1)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=_free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    app.state.analyst.budgets["chance"] = CHANCE_S
    yield f"http://127.0.0.1:{server.config.port}", app
    server.should_exit = True
    thread.join(timeout=15)


def given_up_game(browser_id: str) -> SavedGame:
    clock = ManualClock()
    session = Session(get_game("reloaded"), 7, {}, clock=clock)
    for _ in range(3):
        clock.advance(2.0)
        session.play("draw")
    clock.advance(2.0)
    session.give_up()
    return SavedGame(id=secrets.token_urlsafe(12), browser_id=browser_id, game="reloaded", variant="standard",
                     seed="7", record=session.record(), ms=session.elapsed_ms(), moves=session.moves_made,
                     score=session.score, outcome="given_up")


def open_replay(browser: Any, url: str, app: Any, locale: str, viewport: dict[str, int]) -> tuple[Any, Any]:
    context = browser.new_context(viewport=viewport, locale=locale)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(15_000)
    page.goto(f"{url}/")
    cookie = next(c["value"] for c in context.cookies() if c["name"] == "patience_id")
    game = given_up_game(cookie)
    app.state.store.save_games([game])
    page.goto(f"{url}/match?game={game.id}")
    page.errors = errors
    return context, page


def board_text(page: Any) -> str:
    """The cards face up on the board, pile by pile."""
    return str(page.locator("#board0 .card[data-card]:not([hidden])").evaluate_all(
        "cards => cards.map((c) => `${c.dataset.pile}:${c.dataset.card}`).sort().join(' ')"))


@pytest.mark.parametrize(("locale", "words"), [
    ("de-DE", {"ask": "Dieses Spiel analysieren", "better": "Besser:", "step": "Bessere Zugfolge: Zug 1 von"}),
    ("it-IT", {"ask": "Analizza questa partita", "better": "Meglio:", "step": "Linea migliore: mossa 1 di"}),
])
def test_the_replay_shows_the_analysis_and_steps_through_the_better_line(
        browser: Any, analysing: tuple[str, Any], shot: Any, locale: str, words: dict[str, str]) -> None:
    url, app = analysing
    context, page = open_replay(browser, url, app, locale, {"width": 1280, "height": 900})
    ask = page.locator("#analysis-ask")
    expect(ask).to_have_text(words["ask"])
    ask.click()
    moment = page.locator("#analysis-graph circle.moment.losing")
    expect(moment).to_have_count(1, timeout=90_000)  # the worker process analysed it
    assert moment.get_attribute("tabindex") == "0" and moment.get_attribute("aria-label")
    step = page.locator('.side[data-side="0"] .side-step')
    end = step.inner_text()
    if locale.startswith("it"):  # by keyboard: the moment takes the focus, Enter opens it
        moment.focus()
        page.keyboard.press("Enter")
    else:
        moment.click()
    detail = page.locator("#analysis-detail")
    expect(detail).to_be_visible()
    expect(detail.locator(".moment-better")).to_contain_text(words["better"])
    assert step.inner_text() != end  # the position where the move was played, not the game's end
    before, shown = board_text(page), step.inner_text()
    shot(page, f"analysis-moment-{locale}")
    page.locator("#line-next").click()  # the better line: its first position is the one the move was played in
    page.locator("#line-next").click()
    expect(page.locator("#line-step")).to_contain_text(words["step"])
    stepped = board_text(page)
    assert stepped != before  # the better line's first move is on the board
    page.keyboard.press("Enter")  # the focus stays on "next": the keyboard goes on stepping
    expect(page.locator("#line-step")).to_contain_text(words["step"].replace(" 1 ", " 2 "))
    shot(page, f"analysis-line-{locale}")
    page.locator("#line-back").click()
    assert board_text(page) == before and step.inner_text() == shown
    assert not page.errors, page.errors
    context.close()


def test_the_analysis_fits_a_phone(browser: Any, analysing: tuple[str, Any], shot: Any) -> None:
    url, app = analysing
    context, page = open_replay(browser, url, app, "de-DE", {"width": 390, "height": 844})
    page.locator("#analysis-ask").click()
    moment = page.locator("#analysis-graph circle.moment.losing")
    expect(moment).to_have_count(1, timeout=90_000)
    page.locator(".moment-button").first.click()
    page.locator("#line-next").click()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"
    page.locator("#analysis").scroll_into_view_if_needed()
    shot(page, "analysis-phone-de")
    assert not page.errors, page.errors
    context.close()


VERDICT = ":not(.inaccuracy):not(.mistake):not(.blunder)"  # the moments of the verdict, with every card known


def test_the_win_chance_fills_the_graph_and_names_the_blunder_at_phone_width(
        browser: Any, analysing: tuple[str, Any], shot: Any) -> None:
    url, app = analysing
    context, page = open_replay(browser, url, app, "en-US", {"width": 390, "height": 844})
    page.locator("#analysis-ask").click()
    chance = page.locator("#analysis-chance")
    expect(chance).to_contain_text("positions so far", timeout=90_000)  # the graph fills as the server works
    expect(page.locator("#analysis-graph polyline.chance-line").first).to_be_attached()
    expect(page.locator("#analysis-graph polygon.chance-band").first).to_be_attached()
    filling = int(page.locator("#analysis-graph svg").get_attribute("data-chance-points") or 0)
    blunder = page.locator("#analysis-graph circle.moment.blunder")
    expect(blunder).to_have_count(1, timeout=120_000)  # the give-up threw the deal's chance away
    expect(chance).to_contain_text("Luck against play: the deal gave")
    expect(chance).to_contain_text("the game was lost")
    assert int(page.locator("#analysis-graph svg").get_attribute("data-chance-points") or 0) == 5 >= filling
    assert "Blunder: the win chance fell by" in (blunder.get_attribute("aria-label") or "")
    step = page.locator('.side[data-side="0"] .side-step')
    blunder.focus()  # by keyboard
    page.keyboard.press("Enter")
    detail = page.locator("#analysis-detail")
    expect(detail.locator(".moment-what")).to_contain_text("Blunder: the win chance fell by")
    expect(detail.locator(".moment-played")).to_contain_text("Played:")
    expect(detail.locator(".moment-better")).to_contain_text("Better:")
    before = board_text(page)
    assert "Draw a card" in step.inner_text()  # the position the give-up was made in: after the draws
    page.locator("#line-next").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    expect(page.locator("#line-step")).to_contain_text("Better line: move 1 of 1")
    assert board_text(page) != before  # the better move is on the board
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"
    page.locator("#analysis").scroll_into_view_if_needed()
    shot(page, "analysis-chance-phone-en")
    assert not page.errors, page.errors
    context.close()


def test_a_duels_replay_analyses_both_games_one_at_a_time(browser: Any, analysing: tuple[str, Any], shot: Any) -> None:
    from arena_processes import Player, meet

    url, _ = analysing
    anna, bruno = Player(url, f"anna{secrets.token_hex(2)}", "127.0.36.1"), \
        Player(url, f"bruno{secrets.token_hex(2)}", "127.0.36.2")
    match_id = meet(anna, bruno, "reloaded/standard/300")
    for player, draws in ((anna, 2), (bruno, 3)):
        for _ in range(draws):
            player.intent("stock")
        player.intent("giveup")
    for player in (anna, bruno):
        player.close()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{url}/match?id={match_id}")
    sides = page.locator("#analysis-sides button")
    expect(sides).to_have_count(2)
    expect(page.locator("#analysis-status")).not_to_be_empty()  # the page has read the analysis
    expect(page.locator("#analysis-ask")).to_be_hidden()  # a rated match is queued at its end: nothing to ask
    expect(page.locator(f"#analysis-graph circle.moment{VERDICT}")).to_have_count(1, timeout=90_000)
    expect(sides.first).to_have_attribute("aria-pressed", "true")
    first = page.locator("#analysis-graph svg").inner_html()
    sides.nth(1).click()  # the other player's game: its own analysis, asked for with the first
    expect(sides.nth(1)).to_have_attribute("aria-pressed", "true")
    expect(page.locator(f"#analysis-graph circle.moment{VERDICT}")).to_have_count(1, timeout=90_000)
    assert page.locator("#analysis-graph svg").inner_html() != first  # 3 draws, not 2: another game
    page.locator(".moment-button").first.click()
    expect(page.locator('.side[data-side="1"] .side-step')).to_contain_text("0:")
    shot(page, "analysis-duel-en")
    context.close()


def test_a_solo_games_end_leads_to_its_replay_and_analysis(browser: Any, analysing: tuple[str, Any]) -> None:
    url, _ = analysing
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="it-IT")
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{url}/play?game=faecher&seed=12")
    page.wait_for_selector(".card.up")
    page.locator('.slot[data-pile="s"]').click(position={"x": 10, "y": 10}, force=True)
    expect(page.locator('.card[data-pile="w"]')).to_have_count(1)
    page.locator("#menu-btn").click()
    page.locator("#m-giveup").click()
    page.locator("#confirm-yes").click()
    link = page.locator("#end-replay")
    expect(link).to_have_text("Replay e analisi")
    link.click()
    page.wait_for_url(f"{url}/match?game=*")
    page.locator("#analysis-ask").click()
    expect(page.locator("#analysis-graph svg")).to_have_count(1, timeout=90_000)
    expect(page.locator('.side[data-side="0"] .side-step')).to_contain_text("Abbandona")
    context.close()
