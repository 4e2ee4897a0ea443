"""Playing in a real browser: clicks, drags, taps and keys on the three games, on a desktop and a phone.

The test knows the deals through the engine (the same seeds give the same deals), so it can
say which card to pick and where to put it; the browser itself holds no rule.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from browser_settle import settle
from playwright.sync_api import expect

from patience.games import Move, State, get_game
from patience.solve import winnable

pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


def top(page: Any, pile: str) -> Any:
    """The element a click on ``pile`` hits: its top card, or its empty place."""
    count = page.locator(f'.card[data-pile="{pile}"]').count()
    if count == 0:
        return page.locator(f'.slot[data-pile="{pile}"]')
    return page.locator(f'.card[data-pile="{pile}"][data-index="{count - 1}"]')


def card(page: Any, text: str) -> Any:
    return page.locator(f'.card[data-card="{text}"]')


def wait_on(page: Any, text: str, pile: str) -> None:
    page.wait_for_selector(f'.card[data-card="{text}"][data-pile="{pile}"]', state="attached")


def foundation_of(text: str) -> str:
    return "f" + text[-1].lower()


def find_seed(game: str, options: dict[str, Any], wanted: Any, limit: int = 2000) -> tuple[int, State]:
    cls = get_game(game)
    for seed in range(1, limit):
        state = cls.deal(seed, options)
        if wanted(state):
            return seed, state
    raise AssertionError("no such deal in range")


def carpet_is_won(state: State) -> bool:
    probe = state.copy()
    while moves := probe.legal_moves():
        probe.push(moves[0])
    return probe.is_won()


def tableau_move(state: State) -> Move | None:
    return next((m for m in state.legal_moves() if m.src[0] == "t" and m.dst[0] == "t" and m.n == 1), None)


def test_a_carpet_deal_played_to_its_end_by_clicks(page: Any, base_url: str, shot: Any) -> None:
    options = {"rows": 5, "cols": 6}
    seed, state = find_seed("teppich", options, carpet_is_won)
    page.goto(f"{base_url}/play?game=teppich&seed={seed}&rows=5&cols=6")
    page.wait_for_selector(".card.up")
    shot(page, "carpet-desktop-start")
    played = 0
    while moves := state.legal_moves():
        move = moves[0]
        text = state.piles()[move.src][0][0].text
        target = foundation_of(text)
        way = played % 4
        if way == 0:  # click the card, click its foundation
            card(page, text).click()
            expect(card(page, text)).to_have_class(re.compile(r"\bselected\b"))
            top(page, target).click()
        elif way == 1:  # keys: Enter picks it, Enter on the foundation puts it there
            card(page, text).focus()
            page.keyboard.press("Enter")
            top(page, target).focus()
            page.keyboard.press("Enter")
        elif way == 2:  # the F key
            card(page, text).focus()
            page.keyboard.press("f")
        else:  # a double click
            card(page, text).dblclick()
        state.push(move)
        wait_on(page, text, target)
        played += 1
        if played == 20:
            shot(page, "carpet-desktop-midgame")
    expect(page.locator("#end")).to_be_visible()
    expect(page.locator("#end-title")).to_have_text("Won!")
    expect(page.locator("#end-score")).to_have_text("52")
    expect(page.locator("#end-stats dt").first).to_have_text("Played")
    expect(page.locator("#end-stats dd").first).to_have_text("1")
    shot(page, "carpet-desktop-won")


def test_a_card_dragged_in_solitaire_reloaded_and_undone(page: Any, base_url: str, shot: Any) -> None:
    seed, state = find_seed("reloaded", {}, lambda s: tableau_move(s) is not None)
    move = tableau_move(state)
    assert move is not None
    text = state.piles()[move.src][-1][0].text
    page.goto(f"{base_url}/play?game=reloaded&seed={seed}")
    page.wait_for_selector(".card.up")
    shot(page, "reloaded-desktop-start")
    start = card(page, text).bounding_box()
    goal = top(page, move.dst).bounding_box()
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + 12)
    page.mouse.down()
    page.mouse.move(start["x"] + start["width"] / 2 + 15, start["y"] + 30, steps=4)
    page.mouse.move(goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] * 0.6, steps=12)
    shot(page, "reloaded-desktop-dragging")
    page.mouse.up()
    wait_on(page, text, move.dst)
    expect(page.locator("#undos-left")).to_have_text("(1 of 3)")
    shot(page, "reloaded-desktop-dragged")
    assert f"seed={seed}" in page.locator("#share-url").input_value()
    page.reload()  # the page comes back to the same game, as the server has it
    wait_on(page, text, move.dst)
    expect(page.locator("#undos-left")).to_have_text("(1 of 3)")
    page.locator("#undo").click()
    wait_on(page, text, move.src)
    expect(page.locator("#undos-left")).to_have_text("(0 of 3)")
    expect(page.locator("#undo")).to_be_disabled()
    page.locator("#score-btn").click()
    expect(page.locator("#ledger")).to_be_visible()
    expect(page.locator("#ledger-lines")).to_contain_text("Undo of Pile")
    shot(page, "reloaded-desktop-ledger")


def test_an_illegal_move_goes_back_and_says_why(page: Any, base_url: str, shot: Any) -> None:
    seed, state = find_seed("reloaded", {}, lambda s: True)
    piles = state.piles()
    src, dst = next((a, b) for a in ("t1", "t2", "t3", "t4") for b in ("t5", "t6", "t7")
                    if state.check(Move(a, b)) is not None)
    text = piles[src][-1][0].text
    page.goto(f"{base_url}/play?game=reloaded&seed={seed}")
    page.wait_for_selector(".card.up")
    before = card(page, text).bounding_box()
    goal = top(page, dst).bounding_box()
    page.mouse.move(before["x"] + 20, before["y"] + 12)
    page.mouse.down()
    page.mouse.move(goal["x"] + 20, goal["y"] + 40, steps=10)
    page.mouse.up()
    toast = page.locator("#toast")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("cannot go on")
    shot(page, "reloaded-desktop-illegal")
    settle(page)  # the card back where it was
    after = card(page, text).bounding_box()
    assert (round(after["x"]), round(after["y"])) == (round(before["x"]), round(before["y"]))  # it went back
    assert card(page, text).get_attribute("data-pile") == src


def test_a_wrong_click_in_der_faecher_costs_50_visibly(page: Any, base_url: str, shot: Any) -> None:
    seed, state = find_seed("faecher", {}, lambda s: any(
        s.check(Move(f"v{i}", f"r{k}")) for i in range(1, 10) for k in range(1, 5)))
    fan, reserve = next((f"v{i}", f"r{k}") for i in range(1, 10) for k in range(1, 5)
                        if state.check(Move(f"v{i}", f"r{k}")) is not None)
    text = state.piles()[fan][0][0].text
    page.goto(f"{base_url}/play?game=faecher&seed={seed}")
    page.wait_for_selector(".card.up")
    expect(page.locator("#undo")).to_be_hidden()  # the standard game has no undo (the status: none in store, ever)
    shot(page, "faecher-desktop-start")
    card(page, text).click()
    shot(page, "faecher-desktop-selected")
    top(page, reserve).click()
    expect(page.locator("#toast")).to_contain_text("−50")
    expect(page.locator("#score")).to_have_text("−50")
    assert card(page, text).get_attribute("data-pile") == fan
    shot(page, "faecher-desktop-wrong-click")


def test_the_language_switches_and_stays(browser: Any, base_url: str, shot: Any) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    page.goto(base_url)
    teppich = page.locator('.game-tile[data-game="teppich"]')
    expect(teppich.locator("h2")).to_have_text("Carpet")
    shot(page, "start-desktop-en")
    page.locator('.lang[data-lang="it"]').click()
    expect(teppich.locator("h2")).to_have_text("Tappeto")
    expect(teppich.locator(".rules")).to_contain_text("I quattro assi")
    expect(page.locator('.game-tile[data-game="faecher"] .play-btn')).to_have_text("Gioca")
    shot(page, "start-desktop-it")
    page.reload()
    expect(teppich.locator("h2")).to_have_text("Tappeto")
    page.locator('.lang[data-lang="de"]').click()
    expect(teppich.locator("h2")).to_have_text("Teppich")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    # the game page speaks the same language, reasons included
    seed, state = find_seed("reloaded", {}, lambda s: True)
    src, dst = next((a, b) for a in ("t1", "t2", "t3") for b in ("t5", "t6", "t7")
                    if state.check(Move(a, b)) is not None)
    page.goto(f"{base_url}/play?game=reloaded&seed={seed}")
    page.wait_for_selector(".card.up")
    expect(page.locator("#new")).to_have_text("Neues Spiel")
    top(page, src).click()
    top(page, dst).click()
    expect(page.locator("#toast")).to_contain_text("passt nicht auf")
    shot(page, "reloaded-desktop-de")
    context.close()
    german = browser.new_context(locale="de-DE")  # the browser's language by default
    page = german.new_page()
    page.goto(base_url)
    expect(page.locator('.game-tile[data-game="teppich"] h2')).to_have_text("Teppich")
    german.close()


def test_the_start_page_shows_each_variants_published_odds_in_three_languages(browser: Any, base_url: str,
                                                                              shot: Any) -> None:
    from patience.solve.rates import rates_by_variant

    rates = rates_by_variant()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    page.goto(base_url)
    teppich = page.locator('.game-tile[data-game="teppich"]')
    odds = teppich.locator(".tile-odds")
    assert rates["teppich"]["4x5"]["one_in"] == 87
    expect(odds).to_have_text("Won with perfect play: about 1 deal in 87: pure luck, no play changes the result")
    teppich.locator("select").select_option("waste")
    expect(odds).to_have_text("Won with perfect play: about 88 % of deals")
    expect(page.locator('.game-tile[data-game="faecher"] .tile-odds')).to_have_text(
        "Won with perfect play: about 99.9 % of deals")  # 9,988 won of 10,000
    assert round(100 * rates["reloaded"]["untimed"]["rate"]) == 89  # 892 won of the 997 decided
    expect(page.locator('.game-tile[data-game="reloaded"] .tile-odds')).to_have_text(
        "Won with perfect play: about 89 % of deals")
    shot(page, "start-desktop-odds")
    page.locator('.lang[data-lang="de"]').click()
    expect(odds).to_have_text("Mit bester Spielweise gewonnen: etwa 88 % der Spiele")
    expect(page.locator('.game-tile[data-game="faecher"] .tile-odds')).to_have_text(
        "Mit bester Spielweise gewonnen: etwa 99,9 % der Spiele")
    page.locator('.lang[data-lang="it"]').click()
    teppich.locator("select").select_option("4x5")
    expect(odds).to_have_text("Vinte con il gioco perfetto: circa 1 partita su 87: pura fortuna, nessuna mossa cambia "
                              "il risultato")
    expect(odds).to_have_attribute("title", re.compile(r"10\.000\.000 partite"))
    context.close()


def test_a_phone_sized_screen_with_touch(browser: Any, base_url: str, shot: Any) -> None:
    def wanted(s: State) -> bool:
        return tableau_move(s) is not None and any(m.dst == "f" and m.src[0] == "t" for m in s.legal_moves())

    seed, state = find_seed("reloaded", {}, wanted)
    context = browser.new_context(locale="en-US", **PHONE)
    page = context.new_page()
    page.goto(base_url)
    page.wait_for_selector(".game-tile")
    shot(page, "start-phone")
    page.goto(f"{base_url}/play?game=reloaded&seed={seed}")
    page.wait_for_selector(".card.up")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    for box in page.locator(".slot").evaluate_all("els => els.map(e => e.getBoundingClientRect().toJSON())"):
        assert box["left"] >= 0 and box["right"] <= 390 and box["bottom"] <= 844
    shot(page, "reloaded-phone-start")
    move = tableau_move(state)
    assert move is not None
    text = state.piles()[move.src][-1][0].text
    card(page, text).tap()
    shot(page, "reloaded-phone-selected")
    top(page, move.dst).tap()
    wait_on(page, text, move.dst)
    state.push(move)
    ace = next(m for m in state.legal_moves() if m.dst == "f" and m.src[0] == "t")
    ace_text = state.piles()[ace.src][-1][0].text
    ace_card = card(page, ace_text)
    ace_card.tap()
    ace_card.tap()  # a double tap sends it to its foundation
    wait_on(page, ace_text, foundation_of(ace_text))
    expect(page.locator("#score")).not_to_have_text("0")
    shot(page, "reloaded-phone-played")
    page.locator("#menu-btn").tap()
    shot(page, "menu-phone")
    page.locator("#menu .close").tap()
    page.goto(f"{base_url}/play?game=faecher&seed=7")
    page.wait_for_selector(".card.up")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    fan_box = page.locator('.card[data-pile="v1"]').bounding_box()
    last_box = page.locator('.card[data-pile="v9"]').bounding_box()
    assert fan_box["x"] >= 0 and last_box["x"] + last_box["width"] <= 390
    page.locator('.card[data-pile="v5"]').tap()
    shot(page, "faecher-phone")
    page.locator("#menu-btn").tap()
    page.locator("#m-giveup").tap()
    page.locator("#confirm-yes").tap()
    expect(page.locator("#end-title")).to_have_text("Given up")
    shot(page, "faecher-phone-end")
    page.goto(f"{base_url}/play?game=teppich&seed=7")
    page.wait_for_selector(".card.up")
    shot(page, "carpet-phone")
    context.close()


def test_giving_up_ends_the_game_with_its_score(page: Any, base_url: str, shot: Any) -> None:
    page.goto(f"{base_url}/play?game=faecher&seed=12")
    page.wait_for_selector(".card.up")
    page.locator('.slot[data-pile="s"]').click(position={"x": 10, "y": 10}, force=True)
    wait_ok = page.locator('.card[data-pile="w"]')
    expect(wait_ok).to_have_count(1)
    page.locator("#menu-btn").click()
    page.locator("#m-giveup").click()
    page.locator("#confirm-yes").click()
    expect(page.locator("#end-title")).to_have_text("Given up")
    expect(page.locator("#end-breakdown")).to_contain_text("Pool left")
    shot(page, "faecher-desktop-given-up")
    page.locator("#same").click()
    expect(page.locator("#end")).not_to_be_visible()
    expect(page.locator('.card[data-pile="w"]')).to_have_count(0)  # the same deal, fresh
    assert "seed=12" in page.url


def test_time_runs_out_on_its_own(page: Any, base_url: str, shot: Any) -> None:
    page.goto(f"{base_url}/play?game=reloaded&seed=5&time_limit=3")
    page.wait_for_selector(".card.up")
    expect(page.locator("#clock-label")).to_have_text("Time left")
    expect(page.locator("#end-title")).to_have_text("Time is up", timeout=8000)
    expect(page.locator("#clock")).to_have_text("0:00")
    shot(page, "reloaded-desktop-time-out")


def test_winnable_deals_only_is_one_choice_the_pages_keep(page: Any, base_url: str, shot: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # the server runs in this process: it reads a list of Der Fächer only, so Solitaire Reloaded has none
    shipped = json.loads(winnable.default_path().read_text(encoding="utf-8"))
    path = tmp_path / "winnable.json"
    path.write_text(json.dumps({**shipped, "lists": {"faecher": shipped["lists"]["faecher"]}}), encoding="utf-8")
    monkeypatch.setattr(winnable, "default_path", lambda: path)
    listed = {str(seed) for seed in winnable.seeds("faecher", {})}

    page.goto(base_url)
    faecher = page.locator('.game-tile[data-game="faecher"]')
    box = faecher.get_by_label("Winnable deals only")
    expect(box).not_to_be_checked()
    box.check()
    expect(page.locator('.game-tile[data-game="reloaded"] input[name=winnable]')).to_be_checked()  # one choice
    faecher.scroll_into_view_if_needed()
    shot(page, "start-desktop-winnable")
    faecher.locator(".play-btn").click()
    page.wait_for_selector(".card.up")
    seed = re.search(r"[?&]seed=(\d+)", page.url)[1]  # type: ignore[index]
    assert seed in listed
    expect(page.locator("#variant-name")).to_have_text(f"Standard · #{seed}")
    # a winnable deal is an ordinary seed: the share link is the plain deal
    assert page.locator("#share-url").input_value() == f"{base_url}/play?game=faecher&seed={seed}"

    page.locator("#menu-btn").click()
    expect(page.locator("#winnable")).to_be_checked()  # kept by the browser
    shot(page, "menu-desktop-winnable")
    first = re.search(r"[?&]id=([\w-]+)", page.url)[1]  # type: ignore[index]
    page.locator("#m-new").click()
    page.wait_for_url(lambda url: first not in url)  # checked here: the page's CSP forbids eval
    assert re.search(r"[?&]seed=(\d+)", page.url)[1] in listed  # type: ignore[index]

    # no list for the variant: the server says so in the page's language, and no game is dealt
    page.goto(f"{base_url}/play?game=reloaded&lang=de")
    expect(page.locator("#toast")).to_have_text("Für reloaded sind noch keine lösbaren Spiele bekannt")
    shot(page, "reloaded-desktop-no-winnable-de")
    expect(page.locator(".card")).to_have_count(0)
    page.wait_for_url(f"{base_url}/")
    expect(page.locator('.game-tile[data-game="faecher"] input[name=winnable]')).to_be_checked()
    expect(page.locator('.game-tile[data-game="faecher"] .winnable-label')).to_have_text("Nur lösbare Spiele")


def test_a_silent_connection_is_noticed_within_seconds_and_the_move_sent_once(page: Any, base_url: str,
                                                                              shot: Any) -> None:
    """The socket stays open but nothing comes back (the network gone without a close): the page
    says so within seconds, connects again when it can, and the move whose answer was lost is
    played exactly once."""
    through = {"on": True}
    sockets: list[Any] = []

    def socket(route: Any) -> None:
        if not through["on"]:
            route.close()  # no new connection while the network is down
            return
        server = route.connect_to_server()
        sockets.append(route)
        server.on_message(lambda message: through["on"] and route.send(message))  # answers are lost

    page.route_web_socket(re.compile(r"/ws$"), socket)
    page.goto(f"{base_url}/play?game=reloaded&seed=5")
    page.wait_for_selector(".card.up")
    expect(page.locator("#banner")).to_be_hidden()
    expect(page.locator(".badge")).to_have_text("24 cards")
    through["on"] = False  # nothing comes back; the socket itself stays open
    started = time.monotonic()
    page.keyboard.press("d")  # a draw the server plays, whose answer never arrives
    expect(page.locator("#banner")).to_be_visible(timeout=15_000)
    noticed = time.monotonic() - started
    assert noticed < 12, f"the silent connection was noticed after {noticed:.1f} s"
    shot(page, "reloaded-silent-connection")
    through["on"] = True  # the next connection goes through
    expect(page.locator("#banner")).to_be_hidden(timeout=15_000)
    assert len(sockets) >= 2
    expect(page.locator('.card[data-pile="w"]')).to_have_count(1)
    expect(page.locator(".badge")).to_have_text("23 cards")  # the draw was sent again, but played once: 24 - 1
    page.reload()
    page.wait_for_selector(".card.up")
    expect(page.locator(".badge")).to_have_text("23 cards")


def test_going_offline_shows_the_banner_at_once(browser: Any, base_url: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{base_url}/play?game=teppich&seed=3")
        page.wait_for_selector(".card.up")
        context.set_offline(True)
        expect(page.locator("#banner")).to_be_visible(timeout=3_000)
        context.set_offline(False)
        expect(page.locator("#banner")).to_be_hidden(timeout=15_000)
    finally:
        context.close()
