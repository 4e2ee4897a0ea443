"""A listed move is drawn at once, whatever the round trip (docs/protocol.md, ``table.legal``).

The page talks to the server through a proxy that holds every chunk 400 ms each way (an 800 ms round
trip, worse than a slow mobile network): a legal move must be on its target pile in the first frame after
the click while the server's answer takes at least 800 ms; a stock click waits for the answer (the card it
turns up is unknown); a refused move goes back; and a move drawn when the connection goes is put back
and not played behind the player's back.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest
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


class DelayProxy:
    """A TCP proxy to ``port`` that holds every chunk ``delay`` seconds in each direction (in order)."""

    def __init__(self, port: int, delay: float) -> None:
        self.target = port
        self.delay = delay
        self.loop = asyncio.new_event_loop()
        self.writers: set[asyncio.StreamWriter] = set()
        self.port = 0
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)

        async def main() -> None:
            self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()

        self.loop.run_until_complete(main())
        self.loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        self.writers |= {writer, up_writer}
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                self.writers.discard(w)
                w.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def forward() -> None:
            while True:
                due, data = await queue.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if not data:
                    with contextlib.suppress(OSError):
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        task = asyncio.create_task(forward())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time() + self.delay, data))
        except OSError:
            pass
        queue.put_nowait((loop.time() + self.delay, b""))
        with contextlib.suppress(OSError, ConnectionError):
            await task

    def cut(self) -> None:
        """Drop every connection now (what is held is lost): the network went."""

        def drop() -> None:
            for w in list(self.writers):
                w.transport.abort()

        self.loop.call_soon_threadsafe(drop)

    def close(self) -> None:
        async def stop() -> None:
            self.server.close()
            for w in list(self.writers):
                w.transport.abort()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


@pytest.fixture
def proxy_page(browser: Any, base_url: str) -> Iterator[tuple[Any, DelayProxy]]:
    proxy = DelayProxy(int(base_url.rsplit(":", 1)[1]), DELAY)
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    context.add_init_script(SPY)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(30_000)
    page.proxy_url = f"http://127.0.0.1:{proxy.port}"
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
    assert watch["frames"] == 1 and drawn_ms < 50  # the first frame after the click shows it on its pile
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
    proxy = DelayProxy(int(base_url.rsplit(":", 1)[1]), DELAY)
    slow = f"http://127.0.0.1:{proxy.port}"
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
        assert watch["frames"] == 1 and watch["t1"] - watch["t0"] < 50 and answer >= 2 * DELAY * 1000
        expect(anna.locator("#score")).to_have_text("15")  # the answer's score: 10 × Ace, +5 for the card turned up
        expect(bruno.locator("#opp-found")).to_have_text("1/52")
    finally:
        for context in contexts:
            context.close()
        proxy.close()
    assert not errors, f"errors in the pages: {errors}"
