"""What a player feels at the table: a sloppy drag or a drifting tap costs nothing, and the stock
draws at every click however fast the clicks come."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from browser_settle import settle
from playwright.sync_api import expect

from patience.games import Move, State, get_game

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


def fan_and_wrong_reserve(seed_limit: int = 500) -> tuple[int, State, str, str]:
    """A Der Fächer deal where a fan card put on a reserve would be a wrong click."""
    cls = get_game("faecher")
    for seed in range(1, seed_limit):
        state = cls.deal(seed, {})
        for i in range(2, 9):
            for k in range(1, 5):
                if state.check(Move(f"v{i}", f"r{k}")) is not None:
                    return seed, state, f"v{i}", f"r{k}"
    raise AssertionError("no such deal in range")


def fan_card(page: Any, pile: str) -> Any:
    return page.locator(f'.card[data-pile="{pile}"]')


def visible_point(page: Any, pile: str) -> tuple[float, float]:
    """A point where the fan card of ``pile`` is the element on top (its neighbours cover part of it)."""
    return page.evaluate(
        """(pile) => {
          const el = document.querySelector(`.card[data-pile="${pile}"]`);
          const r = el.getBoundingClientRect();
          for (let fx = 0.15; fx < 0.9; fx += 0.05) {
            const x = r.left + r.width * fx, y = r.top + r.height * 0.45;
            if (document.elementFromPoint(x, y)?.closest(".card") === el) return [x, y];
          }
          return null;
        }""",
        pile,
    )


def test_a_sloppy_drag_on_the_fan_snaps_back_free(page: Any, base_url: str, shot: Any) -> None:
    seed, state, fan, reserve = fan_and_wrong_reserve()
    page.goto(f"{base_url}/play?game=faecher&seed={seed}")
    page.wait_for_selector(".card.up")
    settle(page)
    before = fan_card(page, fan).bounding_box()
    for dx, dy in ((9, 0), (-9, 2), (14, -6)):  # towards either neighbour, a little more than a click's slip
        x, y = visible_point(page, fan)
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + dx, y + dy, steps=3)
        page.mouse.up()
        page.wait_for_timeout(600)  # apart: two clicks in 400 ms are a double click
        expect(page.locator("#score")).to_have_text("0")
        assert fan_card(page, fan).get_attribute("data-pile") == fan
    after = fan_card(page, fan).bounding_box()
    assert (round(after["x"]), round(after["y"])) == (round(before["x"]), round(before["y"]))
    expect(page.locator("#toast")).not_to_contain_text("−50")
    # a drag that stays on its card is a click: the card is picked, as a click would pick it
    expect(fan_card(page, fan)).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("Escape")
    shot(page, "faecher-desktop-sloppy-drag")
    # a deliberate drag onto a reserve that cannot take the card is still a wrong click
    x, y = visible_point(page, fan)
    goal = page.locator(f'.slot[data-pile="{reserve}"]').bounding_box()
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] / 2, steps=12)
    page.mouse.up()
    expect(page.locator("#score")).to_have_text("−50")
    assert fan_card(page, fan).get_attribute("data-pile") == fan
    assert state.check(Move(fan, reserve)) is not None


def test_a_drifting_tap_on_the_phone_costs_nothing(browser: Any, base_url: str, shot: Any) -> None:
    seed, _, fan, _ = fan_and_wrong_reserve()
    context = browser.new_context(locale="en-US", **PHONE)
    page = context.new_page()
    try:
        page.goto(f"{base_url}/play?game=faecher&seed={seed}")
        page.wait_for_selector(".card.up")
        settle(page)
        cdp = context.new_cdp_session(page)
        for drift in (8, -8, 12):
            x, y = visible_point(page, fan)
            for kind, px in (("touchStart", x), ("touchMove", x + drift / 2), ("touchMove", x + drift),
                             ("touchEnd", None)):
                points = [] if px is None else [{"x": px, "y": y}]
                cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})
            page.wait_for_timeout(600)  # apart: two clicks in 400 ms are a double click
            expect(page.locator("#score")).to_have_text("0")
            assert fan_card(page, fan).get_attribute("data-pile") == fan
        shot(page, "faecher-phone-drifting-tap")
    finally:
        context.close()


@pytest.mark.parametrize("game", ["reloaded", "faecher"])
def test_every_fast_click_on_the_stock_draws(page: Any, base_url: str, game: str) -> None:
    """The card just drawn flies out over the stock: a click landing on it still draws."""
    page.goto(f"{base_url}/play?game={game}&seed=5")
    page.wait_for_selector(".card.up")
    badge = page.locator(".badge")
    start = int(badge.inner_text().split()[0])
    stock = page.locator('.slot[data-pile="s"]').bounding_box()
    x, y = stock["x"] + stock["width"] / 2, stock["y"] + stock["height"] / 2
    for _ in range(10):
        page.mouse.click(x, y)
        page.wait_for_timeout(40)
    expect(page.locator('.card[data-pile="w"]')).to_have_count(10)
    assert int(badge.inner_text().split()[0]) == start - 10
    expect(page.locator("#score")).to_have_text("0")
    expect(page.locator("#toast")).to_be_hidden()


def test_a_card_filling_a_carpets_gap_is_the_players_while_it_still_flies_over_the_stock(
    page: Any, base_url: str
) -> None:
    """The card that fills a carpet's gap flies there from the stock. A double click on it while it is
    still over the stock (its flight held there: a busy page may not have moved it yet) sends it home;
    the stock, which a carpet without a waste never turns, does not take the press."""
    cls = get_game("teppich")
    state = cls.deal(1, {})
    first = next(m for m in state.legal_moves() if len(state.piles()["s"]) and m.dst[0] == "f")
    state.push(first)
    gap = state.piles()[first.src]
    assert len(gap) == 1, "the gap is filled from the stock"
    text = gap[0][0].text
    page.goto(f"{base_url}/play?game=teppich&seed=1")
    page.wait_for_selector(".card.up")
    settle(page)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Animation.enable")
    cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})  # every flight stays where it starts
    moved = page.locator(f'.card[data-pile="{first.src}"]').get_attribute("data-card")
    page.locator(f'.card[data-card="{moved}"]').dblclick()
    page.wait_for_selector(f'.card[data-card="{moved}"][data-pile^="f"]', state="attached")
    filler = page.locator(f'.card[data-card="{text}"]')
    expect(filler).to_have_attribute("data-pile", first.src)
    stock = page.locator('.slot[data-pile="s"]').bounding_box()
    box = filler.bounding_box()
    assert box is not None and stock is not None
    assert abs(box["x"] - stock["x"]) < 1 and abs(box["y"] - stock["y"]) < 1, "the card still over the stock"
    badge = page.locator(".badge")
    left = int(badge.inner_text().split()[0])
    filler.dblclick()
    page.wait_for_selector(f'.card[data-card="{text}"][data-pile^="f"]', state="attached")
    expect(badge).to_have_text(re.compile(rf"^{left - 1}\b"))  # its own gap filled, nothing else
    expect(page.locator("#toast")).to_be_hidden()


RUN = ["KS", "QH", "JS", "10H", "9S", "8H", "7S", "6H", "5S", "4H", "3S", "2H", "AS"]


def with_long_pile(message: str, pile: str, downs: int) -> str:
    """The server's game message with ``pile`` holding ``downs`` face-down cards and the whole run
    K♠ … A♠ (those cards taken from wherever they lay): a longer pile than any deal starts with."""
    data = json.loads(message)
    if data.get("t") != "game":
        return message
    piles = data["d"]["table"]["piles"]
    for name, cards in piles.items():
        piles[name] = [c for c in cards if c not in RUN]
    piles[pile] = [None] * downs + RUN
    return json.dumps(data)


def index_hidden(page: Any, pile: str) -> list[str]:
    """The cards of ``pile`` whose index (rank and suit in the top corners) the next card covers."""
    return page.evaluate(
        """(pile) => {
          const cards = [...document.querySelectorAll(`.card.up[data-pile="${pile}"]`)]
            .sort((a, b) => a.dataset.index - b.dataset.index);
          const board = document.querySelector("#board").getBoundingClientRect();
          const bad = [];
          cards.forEach((el, i) => {
            const box = el.getBoundingClientRect();
            if (box.bottom > board.bottom + 1) bad.push(`${el.dataset.card} off the table`);
            const next = cards[i + 1];
            if (!next) return;
            const cover = next.getBoundingClientRect().top;
            const rank = el.querySelector("text.rank").getBoundingClientRect();
            const suit = el.querySelector("svg > use").getBoundingClientRect();
            if (rank.bottom > cover + 0.5 || suit.bottom > cover + 0.5) bad.push(el.dataset.card);
          });
          return bad;
        }""",
        pile,
    )


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize(("game", "pile", "downs"), [("reloaded", "t7", 6), ("faecher", "r1", 0)])
def test_every_overlapped_card_shows_its_rank_and_suit(browser: Any, base_url: str, shot: Any, size: str,
                                                       game: str, pile: str, downs: int) -> None:
    look = PHONE if size == "phone" else {"viewport": {"width": 1366, "height": 850}}
    context = browser.new_context(locale="en-US", **look)
    page = context.new_page()
    try:
        def socket(route: Any) -> None:
            server = route.connect_to_server()
            route.on_message(server.send)
            server.on_message(lambda message: route.send(with_long_pile(message, pile, downs)))

        page.route_web_socket(re.compile(r"/ws$"), socket)
        page.goto(f"{base_url}/play?game={game}&seed=3")
        page.wait_for_selector(f'.card[data-card="AS"][data-pile="{pile}"]')
        settle(page)
        assert index_hidden(page, pile) == []
        shot(page, f"{game}-{size}-long-pile")
    finally:
        context.close()


def test_the_clock_runs_from_the_deal_and_the_ledger_explains_the_floor(page: Any, base_url: str, shot: Any) -> None:
    page.goto(f"{base_url}/play?game=reloaded&seed=5&time_penalty_seconds=1")
    page.wait_for_selector(".card.up")
    clock = page.locator("#clock")
    expect(clock).to_have_text("5:00")
    # no move yet: the clock runs all the same, and says so
    expect(clock).not_to_have_text("5:00", timeout=3000)
    expect(page.locator(".figure", has=clock)).to_have_attribute("title", "The clock runs from the deal, not from the "
                                                                           "first move.")
    page.wait_for_timeout(1200)
    page.keyboard.press("d")  # an action brings the score up to the clock: the charges of the periods played
    expect(page.locator("#score")).to_have_text("0")
    page.locator("#score-btn").click()
    lines = page.locator("#ledger-lines")
    expect(lines).to_contain_text("−2 → 0")
    notes = page.locator("#ledger-notes")
    expect(notes).to_contain_text("The clock runs from the deal")
    expect(notes).to_contain_text("−2 → 0: the score never goes below 0")
    shot(page, "reloaded-desktop-ledger-floor")
    page.locator("#ledger .close").click()
    page.locator("#menu-btn").click()
    page.locator('#langs [data-lang="de"]').click()
    page.locator("#menu .close").click()
    page.locator("#score-btn").click()
    expect(notes).to_contain_text("−2 → 0: Der Punktestand fällt nie unter 0")
    expect(notes).to_contain_text("Die Uhr läuft ab dem Austeilen")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_addresses_that_lead_nowhere_say_so_with_a_way_back(browser: Any, base_url: str, shot: Any, size: str) -> None:
    look = PHONE if size == "phone" else {"viewport": {"width": 1366, "height": 850}}
    context = browser.new_context(locale="de-DE", **look)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        response = page.goto(f"{base_url}/nonexistent")
        assert response is not None and response.status == 404
        lost = page.locator(".lost")
        expect(lost).to_contain_text("Unter dieser Adresse gibt es keine Seite.")
        expect(page.locator("#page-title")).to_have_text("Seite nicht gefunden")
        expect(page.locator("#nav a").first).to_be_visible()  # the site's navigation
        shot(page, f"lost-page-{size}")
        lost.get_by_role("link", name="Alle Spiele").click()
        page.wait_for_url(f"{base_url}/")

        page.goto(f"{base_url}/match?id=999999")
        expect(lost).to_contain_text("Eine Partie mit der Nummer 999999 gibt es nicht.")
        expect(page.locator("#sides")).to_be_hidden()
        expect(page.locator(".replay-controls")).to_be_hidden()
        shot(page, f"lost-match-{size}")
        lost.get_by_role("link", name="Alle Partien").click()
        page.wait_for_url(f"{base_url}/matches")

        page.goto(f"{base_url}/play?game=nope&lang=it")
        expect(lost).to_contain_text("Non esiste un gioco chiamato «nope».")
        expect(page.locator("#game-name")).to_have_text("Pagina non trovata")
        expect(page.locator(".toolbar")).to_be_hidden()  # no game, nothing to undo or deal
        shot(page, f"lost-game-{size}")
        page.wait_for_timeout(3000)  # it stays: the player reads it and goes back when ready
        assert "/play?game=nope" in page.url
        lost.get_by_role("link", name="Tutti i giochi").click()
        page.wait_for_url(f"{base_url}/")
    finally:
        context.close()
    assert not errors, errors


WORDS = {  # key, values: what a player reads
    "de": [("pile.f_any", {}, "Ablage"), ("why.never_leave_foundation", {}, "Karten verlassen die Ablagen nie"),
           ("why.l_foundation_reserve", {"card": "7♥"}, "7♥ vom Hilfsstapel auf die Ablage"),
           ("pile.w", {}, "Abwurf"), ("variants.teppich.waste", {}, "Mit Abwurfstapel"),
           ("undo", {}, "Zurücknehmen"), ("kind.undo", {}, "Rücknahmen"),
           ("duel.waiting_n", {"n": 1}, "Wartend: 1"), ("duel.commitment", {}, "Siegel (SHA-256)"),
           ("nav.duel", {}, "Duell"), ("nav.matches", {}, "Partien")],
    "it": [("nav.duel", {}, "Sfida"), ("nav.matches", {}, "Incontri"), ("duel.commitment", {}, "Sigillo (SHA-256)")],
}


@pytest.mark.parametrize("lang", sorted(WORDS))
def test_one_word_for_one_thing(page: Any, base_url: str, lang: str) -> None:
    """The foundations have one name in every game, the waste another; the duel lobby and the match
    history are told apart; the commitment is a seal."""
    page.goto(f"{base_url}/matches?lang={lang}")
    said = page.evaluate(
        """async (words) => {
          const i18n = await import("/static/js/i18n.js");
          return words.map(([key, params]) => i18n.t(key, params));
        }""",
        [[key, params] for key, params, _ in WORDS[lang]],
    )
    assert said == [text for _, _, text in WORDS[lang]]
    expect(page.locator("#page-title")).to_have_text(WORDS[lang][-1][2] if lang == "de" else "Incontri")


@pytest.mark.parametrize(("lang", "shown"), [("en", "33.3 %"), ("de", "33,3 %"), ("it", "33,3 %")])
def test_a_share_is_written_as_the_language_writes_it(page: Any, base_url: str, lang: str, shown: str) -> None:
    page.goto(f"{base_url}/play?game=reloaded&seed=5&lang={lang}")
    page.wait_for_selector(".card.up")
    figures = page.evaluate(
        """async () => {
          const ui = await import("/static/js/ui.js");
          const box = document.createElement("div");
          ui.renderStats(box, { played: 3, won: 1, win_percent: 33.3, best: 52, streak: 0, best_streak: 1 });
          return [...box.querySelectorAll("dd")].map((dd) => dd.textContent);
        }"""
    )
    assert figures[2] == shown


def test_nothing_pulses_for_a_player_who_asked_for_less_motion(browser: Any, base_url: str) -> None:
    context = browser.new_context(reduced_motion="reduce", locale="en-US")
    page = context.new_page()
    try:
        page.goto(f"{base_url}/play?game=reloaded&seed=5&time_limit=20")  # under 30 s left: the clock is urgent
        page.wait_for_selector(".card.up")
        expect(page.locator("#clock")).to_have_class(re.compile(r"\burgent\b"))
        page.keyboard.press("h")
        marked = page.locator(".mark-hint").first
        expect(marked).to_be_attached()
        animations = page.evaluate(
            """() => [document.querySelector("#clock"), ...document.querySelectorAll(".mark-hint")].map((el) =>
                 [getComputedStyle(el).animationName, getComputedStyle(el, "::after").animationName])"""
        )
        assert animations and all(names == ["none", "none"] for names in animations), animations
    finally:
        context.close()


def test_a_negative_score_is_written_with_a_minus_sign(page: Any, base_url: str) -> None:
    seed, _, fan, reserve = fan_and_wrong_reserve()
    page.goto(f"{base_url}/play?game=faecher&seed={seed}")
    page.wait_for_selector(".card.up")
    fan_card(page, fan).click()
    on_reserve = page.locator(f'.card[data-pile="{reserve}"]')
    (on_reserve.last if on_reserve.count() else page.locator(f'.slot[data-pile="{reserve}"]')).click()
    expect(page.locator("#score")).to_have_text("−50")
    page.locator("#score-btn").click()
    expect(page.locator("#ledger-total")).to_have_text("−50")
    ledger = page.locator("#ledger-lines").inner_text()
    assert "−50" in ledger and "-" not in ledger, ledger  # one minus sign, never a hyphen
