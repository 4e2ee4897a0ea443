"""Real-browser tests: the app under uvicorn on a free port, driven by Chromium through Playwright."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api  # a test dependency: browser tests never skip
import pytest
from browser_settle import settle

CHROMIUM = os.environ.get("PATIENCE_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-gpu"]

# what a page shows is waited for up to 15 s (Playwright's own default is 5 s): on a machine whose cores
# are shared by parallel workers a first answer may take longer, and a wait ends as soon as it holds
playwright_api.expect.set_options(timeout=15_000)

if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def server_app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The app the browsers talk to (``base_url``): a test may write what a player could not make happen
    now, such as a day that is over, into its database through ``server_app.state.store``."""
    from patience.server import create_app

    return create_app(tmp_path_factory.mktemp("data"))


@contextlib.contextmanager
def served(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on a free port of this machine's loopback, on a thread: its base URL."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def base_url(server_app: Any) -> Iterator[str]:
    """The session's server, shared by the tests of a pytest process (of a worker, under ``-n``) in
    whatever order they run: a test must not count on what others left there (players online, matches
    going on); one that does takes ``own_base_url``."""
    # every browser of the session comes from 127.0.0.1, one address: the sign-up limit of an address
    # (20 accounts in 10 minutes, for a person) would refuse the session's players after the first few
    # test files. Each test is a few people; the limit itself is tested in tests/test_server_signin_load.py.
    with served(server_app) as url:
        server_app.state.accounts.signups = 100_000  # made as the app starts
        yield url


@pytest.fixture
def own_base_url(tmp_path: Path) -> Iterator[str]:
    """A server of this test alone, on an empty database: for a test that says what a whole site shows
    (nobody else online, no match going on), which the session's shared server cannot promise."""
    from patience.server import create_app

    with served(create_app(tmp_path)) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield chromium
        chromium.close()


@contextlib.contextmanager
def watched_context(browser: Any, **options: Any) -> Iterator[Any]:
    """A browser context (``new_context``'s options; a 15 s default timeout) that fails the test if any of
    its pages raised an error, once it is closed."""
    context = browser.new_context(**options)
    errors: list[str] = []
    context.on("page", lambda p: p.on("pageerror", lambda exc: errors.append(str(exc))))
    context.set_default_timeout(15_000)
    yield context
    context.close()
    assert not errors, f"errors in the page: {errors}"


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(10_000)
    yield page
    context.close()
    assert not errors, f"errors in the page: {errors}"


@pytest.fixture
def shot() -> Any:
    """``shot(page, name)`` saves a screenshot as a test artifact (test-artifacts/, not kept in git)."""

    def save(page: Any, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        settle(page, 350)  # let the cards finish moving
        page.screenshot(path=str(path))
        return path

    return save
