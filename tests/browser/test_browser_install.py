"""The app installs (issue 26): a web app manifest with icons that load, a service worker at the site's root
that takes over the pages after a reload and keeps the static files, nothing else (no page, no API answer),
and an offline page in the page's language when there is no network. Chromium itself says the app is
installable (no installability error, the manifest parsed without one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_proxy import Proxy
from playwright.sync_api import expect

from conftest import ARGS, CHROMIUM, watched_context

PLAY = "/play?game=reloaded&seed=3"


@pytest.fixture
def context(browser: Any) -> Any:
    with watched_context(browser, viewport={"width": 1366, "height": 850}, locale="en-US") as context:
        yield context


def controlled(page: Any) -> None:
    """Wait for the worker to be active, then reload: the page is the worker's."""
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.reload()
    page.wait_for_selector(".card.up")
    assert page.evaluate("!!navigator.serviceWorker.controller")


def test_the_manifest_and_its_icons(context: Any, base_url: str) -> None:
    page = context.new_page()
    page.goto(base_url + PLAY)
    page.wait_for_selector(".card.up")
    href = page.locator('link[rel="manifest"]').get_attribute("href")
    assert href == "/manifest.webmanifest"
    answer = page.request.get(base_url + href)
    assert answer.ok and answer.headers["content-type"].startswith("application/manifest+json")
    manifest = answer.json()
    assert manifest["name"] == "Patience Arena" and manifest["short_name"]
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    assert manifest["theme_color"] == "#174f33"
    sizes = {(icon["sizes"], icon.get("purpose", "any")) for icon in manifest["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes
    for icon in manifest["icons"]:
        width = int(icon["sizes"].split("x")[0])
        loaded = page.evaluate("""(src) => new Promise((ok) => {
            const img = new Image(); img.onload = () => ok([img.naturalWidth, img.naturalHeight]);
            img.onerror = () => ok(null); img.src = src; })""", icon["src"])
        assert loaded == [width, width], icon
    # every page links it: the arena's (the shared head) and the start page too
    for path in ("/", "/duel", "/leaderboard"):
        page.goto(base_url + path)
        assert page.locator('link[rel="manifest"]').count() == 1, path
        assert page.locator('script[src="/static/js/prefs.js"]').count() == 1, path


def test_chromium_accepts_the_app_as_installable(browser: Any, base_url: str, tmp_path: Path) -> None:
    # a profile of its own: Chromium installs no app from an incognito window (a new context is one)
    context = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=ARGS,
        viewport={"width": 1366, "height": 850}, locale="en-US")
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(base_url + "/")
        page.wait_for_selector(".game-tile")
        page.evaluate("navigator.serviceWorker.ready.then(() => true)")
        cdp = context.new_cdp_session(page)
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["url"].endswith("/manifest.webmanifest")
        assert not [e for e in manifest["errors"] if e.get("critical")], manifest["errors"]
        installable = cdp.send("Page.getInstallabilityErrors")
        assert installable["installabilityErrors"] == [], installable
    finally:
        context.close()


def test_the_worker_keeps_the_static_files_and_nothing_else(context: Any, base_url: str) -> None:
    page = context.new_page()
    page.goto(base_url + "/")
    page.wait_for_selector(".game-tile")
    worker = page.request.get(base_url + "/sw.js")
    assert worker.ok and "javascript" in worker.headers["content-type"]
    assert worker.headers["service-worker-allowed"] == "/"
    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == base_url + "/"
    page.goto(base_url + PLAY)
    page.wait_for_selector(".card.up")
    controlled(page)
    page.goto(base_url + "/leaderboard")  # pages that ask the API for their data
    page.wait_for_selector("#page-title")
    page.goto(base_url + "/")
    page.wait_for_selector(".game-tile")
    kept = page.evaluate("""async () => {
        const out = [];
        for (const name of await caches.keys()) {
            for (const request of await (await caches.open(name)).keys()) out.push(new URL(request.url).pathname);
        }
        return out;
    }""")
    assert "/static/css/app.css" in kept and "/static/js/play.js" in kept and "/static/offline.html" in kept
    assert all(path.startswith("/static/") for path in kept), [p for p in kept if not p.startswith("/static/")]
    assert not [path for path in kept if path.startswith("/api/")]
    assert page.evaluate("caches.keys()") == [f"patience-{worker.text().split('patience-')[1][:16]}"]
    # the static files come from the worker's cache (no network needed)
    context.set_offline(True)
    try:
        assert page.evaluate("fetch('/static/js/board.js').then((r) => r.status)") == 200
        assert page.evaluate("fetch('/api/games').then(() => 'answered', () => 'no network')") == "no network"
    finally:
        context.set_offline(False)


@pytest.mark.parametrize("locale,words", [("en-US", "You are offline"), ("de-DE", "Keine Verbindung")])
def test_the_offline_page(browser: Any, base_url: str, locale: str, words: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale=locale, is_mobile=True,
                                  has_touch=True, device_scale_factor=2)
    try:
        page = context.new_page()
        page.goto(base_url + PLAY)
        page.wait_for_selector(".card.up")
        controlled(page)
        context.set_offline(True)
        page.goto(base_url + "/leaderboard")
        expect(page.locator("h1")).to_have_text(words)
        expect(page.locator("#retry")).to_be_visible()
        # styled: the style sheet came from the cache
        assert page.evaluate("getComputedStyle(document.body).backgroundImage").startswith("radial-gradient")
        assert words in page.title()
        from test_browser_access import serious  # axe-core: nothing serious on the offline page either

        assert serious(page) == []
        page.locator("#retry").click()  # still no network: the offline page again
        expect(page.locator("h1")).to_have_text(words)
        context.set_offline(False)  # back online: the page is there again
        for _ in range(20):
            try:
                page.goto(base_url + "/leaderboard")
            except Exception:  # the page's own reload on "online" may cut this one short
                continue
            if page.locator("#page-title").count():
                break
            page.wait_for_timeout(250)
        expect(page.locator("#page-title")).to_be_visible()
    finally:
        context.close()


def test_the_offline_page_comes_back_by_itself_when_the_server_does(context: Any, base_url: str) -> None:
    """The server goes away while the network stays up (the browser's "online" event never comes): the offline
    page asks the server again by itself and shows the page as soon as the server answers, with no click."""
    proxy = Proxy(base_url)
    try:
        page = context.new_page()
        page.goto(proxy.url + PLAY)
        page.wait_for_selector(".card.up")
        controlled(page)
        proxy.down()
        page.goto(proxy.url + "/leaderboard")
        expect(page.locator("h1")).to_have_text("You are offline")
        page.wait_for_timeout(2500)  # it has asked at least once, found nobody, and stayed
        expect(page.locator("h1")).to_have_text("You are offline")
        proxy.up()
        expect(page.locator("#page-title")).to_have_text("Leaderboard", timeout=8000)
    finally:
        proxy.close()
