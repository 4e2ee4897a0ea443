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

import re
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from conftest import served
from patience.games import get_game
from patience.server.analysis import LINE_MOVES
from patience.server.storage.store import SavedGame
from patience.session import ManualClock, Session

CHANCE_S = 20.0  # the chance stage's CPU budget a game here: its win chance's 17.5 s (the better lines have an
#                  eighth) give the position before the give-up about 12 samples, 8 of which name it a blunder
#                  (the samples a CPU second buys fall on a loaded machine)
QUEUED_S = 600  # how long a test waits for its win chance: the one worker process works the tests' jobs in turn,
#                 each up to CHANCE_S of CPU at a lower priority than the rest of a loaded machine


@pytest.fixture(scope="module")
def analysing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A server of its own with one analysis worker process: its address and its app."""
    from patience.server import create_app

    app = create_app(tmp_path_factory.mktemp("analysis"), analysis_workers=1)
    with served(app) as url:
        app.state.analyst.budgets["chance"] = CHANCE_S
        yield url, app


def given_up_game(browser_id: str, moves: list[str] | None = None) -> SavedGame:
    """A Solitaire Reloaded game of deal 7 (winnable): ``moves`` (three draws by default), then given up."""
    clock = ManualClock()
    session = Session(get_game("reloaded"), 7, {}, clock=clock)
    for move in moves if moves is not None else ["draw"] * 3:
        clock.advance(2.0)
        session.play(move)
    clock.advance(2.0)
    session.give_up()
    return SavedGame(id=secrets.token_urlsafe(12), browser_id=browser_id, game="reloaded", variant="standard",
                     seed="7", record=session.record(), ms=session.elapsed_ms(), moves=session.moves_made,
                     score=session.score, outcome="given_up")


def open_replay(browser: Any, url: str, app: Any, locale: str, viewport: dict[str, int],
                moves: list[str] | None = None) -> tuple[Any, Any]:
    context = browser.new_context(viewport=viewport, locale=locale)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(15_000)
    page.goto(f"{url}/")
    cookie = next(c["value"] for c in context.cookies() if c["name"] == "patience_id")
    game = given_up_game(cookie, moves)
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
    expect(chance).to_contain_text("positions so far", timeout=QUEUED_S * 1000)  # the graph fills as the server works
    expect(page.locator("#analysis-graph polyline.chance-line").first).to_be_attached()
    expect(page.locator("#analysis-graph polygon.chance-band").first).to_be_attached()
    filling = int(page.locator("#analysis-graph svg").get_attribute("data-chance-points") or 0)
    blunder = page.locator("#analysis-graph circle.moment.blunder")
    expect(blunder).to_have_count(1, timeout=QUEUED_S * 1000)  # the give-up threw the deal's chance away
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
    expect(page.locator("#line-step")).to_contain_text(re.compile(r"Better line: move 1 of (\d+)"))
    n = int(re.search(r"of (\d+)", page.locator("#line-step").inner_text()).group(1))  # type: ignore[union-attr]
    assert 1 < n <= LINE_MOVES  # the better move, and what the strong player plays after it
    expect(detail.locator(".line-by")).to_contain_text(f"{n} moves")
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
    # the verdicts of a deal drawn at random (a hard one takes the solver seconds), worked at the worker
    # process's low priority on a loaded machine: the same wait as the win chance's
    expect(page.locator(f"#analysis-graph circle.moment{VERDICT}")).to_have_count(1, timeout=QUEUED_S * 1000)
    expect(sides.first).to_have_attribute("aria-pressed", "true")
    first = page.locator("#analysis-graph svg").inner_html()
    sides.nth(1).click()  # the other player's game: its own analysis, asked for with the first
    expect(sides.nth(1)).to_have_attribute("aria-pressed", "true")
    expect(page.locator(f"#analysis-graph circle.moment{VERDICT}")).to_have_count(1, timeout=QUEUED_S * 1000)
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


def winning_start(moves: int) -> list[str]:
    """The first ``moves`` moves of the solver's win of deal 7: a give-up after them throws a won deal away."""
    from patience.solve import Budget, solve_deal

    line = solve_deal("reloaded", 7, {}, Budget(seconds=10.0, nodes=500_000, memory_mb=64)).moves
    assert len(line) > moves
    return [str(m) for m in line[:moves]]


@pytest.mark.parametrize(("name", "viewport"), [("desktop", {"width": 1280, "height": 800}),
                                                ("phone", {"width": 390, "height": 844})])
def test_the_graph_grows_while_the_analysis_runs_and_the_chosen_moment_keeps_its_line_and_focus(
        browser: Any, analysing: tuple[str, Any], shot: Any, name: str, viewport: dict[str, int]) -> None:
    """The page polls while the job runs and draws each new figure of the graph; the moment the player chose
    stays chosen, its better line where they stepped it, the focus on the button they pressed; the line steps
    by keys (→, ←, Esc) too."""
    url, app = analysing
    context, page = open_replay(browser, url, app, "en-US", viewport, winning_start(30))
    page.locator("#analysis-ask").click()
    expect(page.locator("#analysis-graph circle.moment.losing")).to_have_count(1, timeout=90_000)
    page.locator('.moment-button[data-kind="losing"]').click()
    detail = page.locator("#analysis-detail")
    expect(detail.locator(".line-by")).to_contain_text(f"the solver's winning line with every card known: "
                                                       f"{LINE_MOVES} moves")
    page.locator("#line-next").click()
    page.locator("#line-next").click()  # the better line's first move, on the board
    step = page.locator("#line-step")
    expect(step).to_contain_text(f"Better line: move 1 of {LINE_MOVES}")
    stepped = board_text(page)
    svg = page.locator("#analysis-graph svg")
    chance = page.locator("#analysis-chance")
    counts: list[int] = []
    deadline = time.monotonic() + QUEUED_S  # the one worker process may first finish the tests' jobs before
    while len(counts) < 3 and "deal gave" not in chance.inner_text().lower():  # it grew twice, or it is done
        assert time.monotonic() < deadline, counts
        count = int(svg.get_attribute("data-chance-points") or 0)
        if count and (not counts or count != counts[-1]):
            counts.append(count)
            assert page.evaluate("document.activeElement.id") == "line-next"  # redrawn: the focus stays
            assert "move 1 of" in step.inner_text() and board_text(page) == stepped  # and the line where it was
            expect(page.locator('.moment-button[data-kind="losing"]')).to_have_attribute("aria-pressed", "true")
        page.wait_for_timeout(100)  # a poll of the page's figures (the page itself polls every second)
    assert len(counts) >= 2 and counts == sorted(counts), counts  # the graph grew while the job ran
    page.keyboard.press("ArrowRight")
    expect(step).to_contain_text(f"Better line: move 2 of {LINE_MOVES}")
    assert board_text(page) != stepped
    page.keyboard.press("ArrowLeft")
    expect(step).to_contain_text("Better line: move 1 of")
    assert board_text(page) == stepped
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(step).to_contain_text(f"Better line: move 3 of {LINE_MOVES}")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"the page is {width} px wide at {viewport['width']} px"
    page.locator("#analysis-graph").scroll_into_view_if_needed()
    shot(page, f"analysis-line-stepped-{name}")
    page.keyboard.press("Escape")
    expect(step).to_have_text("")
    expect(page.locator("#line-next")).to_be_focused()
    assert not page.errors, page.errors
    context.close()


def test_the_analysis_words_have_the_same_keys_and_blanks_in_every_language(page: Any, base_url: str) -> None:
    """analysis-text.js: a key said in one language is said in all three, with the same blanks ({n}, {move}…);
    a word missing in one would show its key to that language's players."""
    page.goto(f"{base_url}/")
    tables = page.evaluate("""async () => {
      const { ANALYSIS_TEXT } = await import("/static/js/analysis-text.js");
      const flat = (node, at, out) => {
        for (const [k, v] of Object.entries(node)) {
          if (typeof v === "string") out[at + k] = [...v.matchAll(/\\{(\\w+)\\}/g)].map((m) => m[1]).sort();
          else flat(v, `${at}${k}.`, out);
        }
        return out;
      };
      return Object.fromEntries(Object.entries(ANALYSIS_TEXT).map(([code, words]) => [code, flat(words, "", {})]));
    }""")
    assert set(tables) == {"de", "en", "it"}
    english = tables["en"]
    assert "analysis.line_by.solver" in english and len(english) > 50
    for code in ("de", "it"):
        assert set(tables[code]) == set(english), (code, set(english) ^ set(tables[code]))
        assert {k: v for k, v in tables[code].items() if v != english[k]} == {}, code
