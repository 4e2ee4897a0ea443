"""A listed move is drawn at once, whatever the round trip (docs/protocol.md, ``table.legal``).

The page talks to the server through a proxy that holds every chunk 400 ms each way (an 800 ms round
trip, worse than a slow mobile network): a legal move must be on its target pile in the first frame after
the click while the server's answer takes at least 800 ms; a stock click waits for the answer (the card it
turns up is unknown); a refused move goes back; and a move drawn when the connection goes is put back
and not played behind the player's back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_proxy import Proxy
from playwright.sync_api import expect

from patience.games import Move, State, get_game

pytestmark = pytest.mark.slow

DELAY = 0.4  # seconds each way

# every message of the websocket, with the time it came (before the page's own handler sees it), and a
# hook to change the moves a table lists (to make the page draw a move the server will refuse)
SPY = """
(() => {
  const Orig = window.WebSocket;
  window.__msgs = [];
  window.__sent = [];
  window.__editLegal = null;
  window.WebSocket = class extends Orig {
    constructor(...args) {
      super(...args);
      let handler = null;
      Object.defineProperty(this, "onmessage", {
        get: () => handler,
        set: (fn) => { handler = fn; },
      });
      super.onmessage = (e) => {
        let data = e.data;
        try {
          const m = JSON.parse(data);
          window.__msgs.push({ t: m.t, ack: m.d && m.d.ack, at: performance.now() });
          if (window.__editLegal && m.d && m.d.table && m.d.table.legal) {
            m.d.table.legal = window.__editLegal(m.d.table.legal);
            data = JSON.stringify(m);
          }
        } catch (err) { /* not ours */ }
        if (handler) handler({ data });
      };
    }
    send(text) {
      try {
        const m = JSON.parse(text);
        window.__sent.push({ t: m.t, ack: m.d && m.d.ack, at: performance.now() });
      } catch (err) { /* not ours */ }
      return super.send(text);
    }
  };
  // the click's time, and the first frame in which card __watch.card lies on pile __watch.pile
  window.__watch = null;
  window.addEventListener("pointerup", () => {
    const w = window.__watch;
    if (!w || w.t0) return;
    w.t0 = performance.now();
    w.frames = 0;
    const look = () => {
      w.frames += 1;
      const el = document.querySelector(`.card[data-card="${w.card}"]`);
      if (el && el.dataset.pile === w.pile) {
        w.t1 = performance.now();
        return;
      }
      if (w.frames < 600) requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  }, true);
})();
"""


@pytest.fixture
def proxy_page(browser: Any, base_url: str) -> Iterator[tuple[Any, Proxy]]:
    proxy = Proxy(base_url, DELAY)
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    context.add_init_script(SPY)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(30_000)
    page.proxy_url = proxy.url
    yield page, proxy
    context.close()
    proxy.close()
    assert not errors, f"errors in the page: {errors}"


def first_move(wanted: Any, limit: int = 500) -> tuple[int, State, Move]:
    """A Solitaire Reloaded deal whose first position has a move ``wanted`` picks, and that move."""
    cls = get_game("reloaded")
    for seed in range(1, limit):
        state = cls.deal(seed)
        move = next((m for m in state.legal_moves() if wanted(m)), None)
        if move is not None:
            return seed, state, move
    raise AssertionError("no such deal")


def open_game(page: Any, seed: int) -> None:
    page.goto(f"{page.proxy_url}/play?game=reloaded&seed={seed}")
    page.wait_for_selector(".card.up")
    page.wait_for_function("() => window.__msgs.some((m) => m.t === 'game')")
    page.wait_for_timeout(300)


def pick_and_put(page: Any, src_card: str, dst: str) -> None:
    """Click the card, then its target: the second click is the move, timed from its pointerup."""
    page.locator(f'.card[data-card="{src_card}"]').click()
    page.evaluate("([card, pile]) => { window.__watch = { card, pile }; }", [src_card, dst])
    target = page.locator(f'.card[data-pile="{dst}"]')
    (target.last if target.count() else page.locator(f'.slot[data-pile="{dst}"]')).click()


def test_a_listed_move_is_drawn_in_the_frame_of_the_click(proxy_page: Any) -> None:
    page, _ = proxy_page
    seed, state, move = first_move(lambda m: m.src[0] == "t" and m.dst[0] == "t" and m.n == 1)
    card = state.piles()[move.src][-1][0].text
    open_game(page, seed)
    pick_and_put(page, card, move.dst)
    page.wait_for_function("() => window.__watch.t1 !== undefined")
    ack = page.evaluate("window.__sent.filter((m) => m.t === 'move').at(-1).ack")
    page.wait_for_function(f"() => window.__msgs.some((m) => m.t === 'ev' && m.ack === {ack})")
    watch = page.evaluate("window.__watch")
    answer = page.evaluate(f"window.__msgs.find((m) => m.t === 'ev' && m.ack === {ack}).at")
    drawn_ms, answer_ms = watch["t1"] - watch["t0"], answer - watch["t0"]
    print(f"click to drawn {drawn_ms:.1f} ms in frame {watch['frames']}, click to answer {answer_ms:.0f} ms")
    assert watch["frames"] == 1  # the first frame after the click shows it on its pile (however late it comes)
    assert answer_ms >= 2 * DELAY * 1000  # while the answer takes the whole round trip
    # the answer settles the table: the card turned up under it, the score; the card stays
    expect(page.locator(f'.card[data-card="{card}"]')).to_have_attribute("data-pile", move.dst)
    after = state.copy()
    after.push(move)
    shown = after.piles()[move.src]
    if shown:
        expect(page.locator(f'.card[data-card="{shown[-1][0].text}"]')).to_have_attribute("data-pile", move.src)


def test_a_stock_click_waits_for_the_answer(proxy_page: Any) -> None:
    page, _ = proxy_page
    seed, _, _ = first_move(lambda m: True)
    open_game(page, seed)
    assert page.locator('.card[data-pile="w"]').count() == 0
    page.locator('.slot[data-pile="s"]').click(position={"x": 10, "y": 10}, force=True)
    clicked = page.evaluate("performance.now()")
    page.wait_for_timeout(400)
    assert page.locator('.card[data-pile="w"]').count() == 0  # nothing drawn: the card is unknown
    expect(page.locator("#board")).to_have_attribute("data-waiting", "stock")  # the stock says it waits
    page.wait_for_selector('.card.up[data-pile="w"]')
    expect(page.locator("#board")).not_to_have_attribute("data-waiting", "stock")
    came = page.evaluate("window.__msgs.filter((m) => m.t === 'ev').at(-1).at")
    assert came - clicked >= 2 * DELAY * 1000 - 50


def test_a_refused_move_goes_back(proxy_page: Any) -> None:
    page, _ = proxy_page
    cls = get_game("reloaded")
    seed, state, bad = 0, None, None
    for seed in range(1, 200):  # a face-up card and a pile it may not go on
        state = cls.deal(seed)
        bad = next((Move(f"t{i}", f"t{j}") for i in range(1, 8) for j in range(1, 8)
                    if i != j and state.check(Move(f"t{i}", f"t{j}")) is not None), None)
        if bad:
            break
    assert state is not None and bad is not None
    card = state.piles()[bad.src][-1][0].text
    # the page is told the move is legal (as a list one position old would say): it draws it, the server refuses
    page.add_init_script(f"window.__editLegal = (legal) => [...legal, ['{bad.src}', '{bad.dst}', 1]];")
    open_game(page, seed)
    page.evaluate("window.__editLegal = (legal) => legal")
    pick_and_put(page, card, bad.dst)
    page.wait_for_function("() => window.__watch.t1 !== undefined")  # drawn at once
    page.wait_for_function("() => window.__msgs.some((m) => m.t === 'rej')")
    expect(page.locator(f'.card[data-card="{card}"]')).to_have_attribute("data-pile", bad.src)  # and put back
    expect(page.locator("#toast")).to_be_visible()
    # the list of the position holds again: a listed move is drawn at once
    move = next(m for m in state.legal_moves() if m.src[0] == "t" and m.n == 1 and m.dst[0] in "tf")
    good = state.piles()[move.src][-1][0].text
    dst = move.dst if move.dst != "f" else "f" + good[-1].lower()
    pick_and_put(page, good, dst)
    page.wait_for_function("() => window.__watch.t1 !== undefined")
    assert page.evaluate("window.__watch.frames") == 1


def test_a_move_drawn_when_the_connection_goes_is_put_back(proxy_page: Any) -> None:
    page, proxy = proxy_page
    seed, state, move = first_move(lambda m: m.src[0] == "t" and m.dst[0] == "t" and m.n == 1)
    card = state.piles()[move.src][-1][0].text
    open_game(page, seed)
    pick_and_put(page, card, move.dst)
    page.wait_for_function("() => window.__watch.t1 !== undefined")
    proxy.cut()  # the intent is still held in the proxy: the server never gets it
    expect(page.locator("#banner")).to_be_visible()
    expect(page.locator(f'.card[data-card="{card}"]')).to_have_attribute("data-pile", move.src)
    # back online, the move is not played behind the player's back
    expect(page.locator("#banner")).to_be_hidden(timeout=30_000)
    page.wait_for_timeout(2000)
    expect(page.locator(f'.card[data-card="{card}"]')).to_have_attribute("data-pile", move.src)


def test_a_listed_move_of_a_duel_is_drawn_at_once(browser: Any, base_url: str, monkeypatch: pytest.MonkeyPatch,
                                                  ) -> None:
    import hashlib
    import secrets

    import browser_accounts

    cls = get_game("reloaded")
    found = None
    for number in range(500):  # a deal with an Ace on top of a pile that has cards under it
        key = hashlib.sha256(f"instant {number}".encode()).hexdigest()
        state = cls.deal(key)
        move = next((m for m in state.legal_moves() if m.dst == "f" and m.src[0] == "t"
                     and len(state.piles()[m.src]) > 1), None)
        if move:
            found = key, state.piles()[move.src][-1][0].text, move.src
            break
    assert found
    key, ace, _ = found
    monkeypatch.setattr("patience.server.arena.dealstock.new_deal_key", lambda: key)
    proxy = Proxy(base_url, DELAY)
    slow = proxy.url
    contexts = [browser.new_context(viewport={"width": 1200, "height": 800}, locale="en-US") for _ in range(2)]
    contexts[0].add_init_script(SPY)
    anna, bruno = (c.new_page() for c in contexts)
    errors: list[str] = []
    try:
        for page in (anna, bruno):
            page.set_default_timeout(30_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        tag = secrets.token_hex(3)
        # display names are unique on the session's server (other files make an "Anna" too)
        browser_accounts.sign_up(anna, slow, f"anna{tag}", f"Anna {tag}")
        browser_accounts.sign_up(bruno, base_url, f"bruno{tag}", f"Bruno {tag}")
        anna.locator('.pool[data-format="reloaded/standard/300"] .seek').click()
        expect(anna.locator("#wait-box")).to_be_visible()
        bruno.locator('.pool[data-format="reloaded/standard/300"] .seek').click()
        expect(anna.locator("#arena")).to_be_visible()
        expect(anna.locator("#found")).to_be_hidden(timeout=30_000)  # the countdown is over: both clocks run
        target = f"f{ace[-1].lower()}"
        anna.locator(f'.card[data-card="{ace}"]').click()
        anna.evaluate("([card, pile]) => { window.__watch = { card, pile }; }", [ace, target])
        anna.locator(f'.slot[data-pile="{target}"]').click()
        anna.wait_for_function("() => window.__watch.t1 !== undefined")
        ack = anna.evaluate("window.__sent.filter((m) => m.t === 'move').at(-1).ack")
        anna.wait_for_function(f"() => window.__msgs.some((m) => m.t === 'dev' && m.ack === {ack})")
        watch = anna.evaluate("window.__watch")
        answer = anna.evaluate(f"window.__msgs.find((m) => m.t === 'dev' && m.ack === {ack}).at") - watch["t0"]
        print(f"duel: click to drawn {watch['t1'] - watch['t0']:.1f} ms in frame {watch['frames']}, "
              f"click to answer {answer:.0f} ms")
        assert watch["frames"] == 1 and answer >= 2 * DELAY * 1000  # drawn in the click's frame, long before the answer
        expect(anna.locator("#score")).to_have_text("15")  # the answer's score: 10 × Ace, +5 for the card turned up
        expect(bruno.locator("#opp-found")).to_have_text("1/52")
    finally:
        for context in contexts:
            context.close()
        proxy.close()
    assert not errors, f"errors in the pages: {errors}"


@pytest.mark.parametrize(("game", "seed", "src"), [("faecher", 5, "v5"), ("reloaded", 2, "t4")])
def test_a_move_made_in_a_second_tab_on_a_table_the_first_changed_costs_nothing(
        browser: Any, base_url: str, game: str, seed: int, src: str) -> None:
    """One game in two tabs on a slow network (1 s each way): the first moves a card to its foundation, and
    the second, before it has heard of that, moves the same card on the table it shows. The second's move
    is drawn at once (it is legal there), then refused at no cost, said with the card the player moved, and
    the second tab shows the table as the server has it: the card on its foundation, no −50."""
    state = get_game(game).deal(seed)
    card = state.piles()[src][-1][0].text
    target = f"f{card[-1].lower()}"
    proxy = Proxy(base_url, 1.0)
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="de-DE")
    context.add_init_script(SPY)
    errors: list[str] = []
    try:
        first = context.new_page()
        first.on("pageerror", lambda exc: errors.append(str(exc)))
        first.set_default_timeout(30_000)
        first.goto(f"{proxy.url}/play?game={game}&seed={seed}")
        first.wait_for_selector(".card.up")
        first.wait_for_function("() => window.__msgs.some((m) => m.t === 'game')")
        second = context.new_page()  # the same game's address (with its id) in another tab
        second.on("pageerror", lambda exc: errors.append(str(exc)))
        second.set_default_timeout(30_000)
        second.goto(first.url)
        second.wait_for_selector(".card.up")
        second.wait_for_function("() => window.__msgs.some((m) => m.t === 'game')")
        first.wait_for_timeout(300)
        score = second.locator("#score").inner_text()
        proxy.hold()  # the server's words reach no tab until the second has moved, however slow the machine
        pick_and_put(first, card, target)
        first.wait_for_function("() => window.__sent.some((m) => m.t === 'move')")
        pick_and_put(second, card, target)  # the second tab has not heard of the first's move yet
        expect(second.locator(f'.card[data-card="{card}"]')).to_have_attribute("data-pile", target)  # drawn
        assert second.evaluate("window.__msgs.filter((m) => m.t === 'ev').length") == 0  # before any answer
        proxy.release()
        ack = second.evaluate("window.__sent.filter((m) => m.t === 'move').at(-1).ack")
        second.wait_for_function(f"() => window.__msgs.some((m) => m.t === 'rej' && m.ack === {ack})")
        name = second.evaluate("""async (card) => (await import("/static/js/i18n.js")).cardName(card)""", card)
        expect(second.locator("#toast")).to_have_text(
            f"{name} wurde nicht gezogen: der Tisch war in einem anderen Fenster schon verändert. "
            "Nichts wurde berechnet.")
        expect(second.locator(f'.card[data-card="{card}"]')).to_have_attribute("data-pile", target)  # as it is
        expect(second.locator("#score")).to_have_text(first.locator("#score").inner_text())
        assert "−" not in second.locator("#score").inner_text() or "−" in score  # no charge
        second.locator("#score-btn").click()  # the ledger: no wrong move in it
        expect(second.locator("#ledger")).not_to_contain_text("Falscher Zug")
    finally:
        context.close()
        proxy.close()
    assert not errors, f"errors in the pages: {errors}"
