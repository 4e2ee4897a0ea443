"""A deal of the day that is over, in the browser: its key shown and checked against the commitment on the
page, and a game of that day replayed in the match viewer to its score.

A day that is over cannot be played now, so the test writes one into the server's database through the
store, as the server itself writes a day (its deal, and a player's finished attempt), before the page
reads it: the server and the pages then treat it as any past day."""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any

import httpx
from playwright.sync_api import expect

from patience.daily import DAILY, daily_commitment, daily_options
from patience.games import get_game
from patience.rng import new_deal_key
from patience.server.arena.daily import day_label
from patience.server.storage.daily import choose_deal, start_attempt
from patience.server.storage.store import SavedGame
from patience.session import ManualClock, Session


def finished_attempt(key: str, day: str, browser_id: str) -> SavedGame:
    """A game of ``key`` played a little (cards to the foundations when they can go, else the stock) and
    given up."""
    clock = ManualClock()
    session = Session(get_game("reloaded"), key, daily_options("reloaded"), clock=clock)
    for _ in range(40):
        clock.advance(1.5)
        home = next((m for m in session.state.legal_moves() if m.dst.startswith("f")), None)
        stock = next((m for m in session.state.legal_moves() if m.src == "s"), None)
        if home is None and stock is None:
            break
        session.play(home or stock)  # type: ignore[arg-type]
    clock.advance(2.0)
    session.give_up()
    return SavedGame(id=secrets.token_urlsafe(12), browser_id=browser_id, game="reloaded",
                     variant=DAILY["reloaded"], seed=day_label(day), record=session.record(),
                     ms=session.elapsed_ms(), moves=session.moves_made, score=session.score, outcome="given_up")


def test_a_past_day_shows_its_key_verified_and_replays_its_games(page: Any, base_url: str, server_app: Any,
                                                                   shot: Any) -> None:
    login = f"past{secrets.token_hex(3)}"
    with httpx.Client(base_url=base_url) as http:  # an account, made as any player's
        token = http.get("/api/me").json()["csrf"]
        signed = http.post("/account/signup", data={"csrf": token, "login": login, "name": login.title(),
                                                    "password": "a long enough password"},
                           headers={"accept": "application/json"})
        assert signed.status_code == 200, signed.text
        user_id = signed.json()["user"]["id"]
    today = dt.datetime.now(dt.UTC).date()
    day = (today - dt.timedelta(days=3)).isoformat()  # over, and among the page's earlier days
    engine = server_app.state.store.engine
    # a deal on which that simple play scores (on some, no card reaches a foundation in 40 steps)
    key, attempt = next((k, a) for k in (new_deal_key() for _ in range(100))
                        if (a := finished_attempt(k, day, secrets.token_urlsafe(12))).score > 0)
    deal = choose_deal(engine, day, "reloaded", f"reloaded/{DAILY['reloaded']}", key,
                       daily_commitment("reloaded", key), True)
    assert deal.deal == key  # nobody had played that day on this server
    assert start_attempt(engine, day, "reloaded", user_id, attempt) == attempt.id

    page.goto(f"{base_url}/daily?game=reloaded")
    page.locator("#daily-days a", has_text=day).click()
    expect(page.locator("#daily-day")).to_contain_text(day)
    expect(page.locator("#daily-commitment")).to_have_text(deal.commitment)
    reveal = page.locator("#daily-reveal")
    expect(reveal.locator("code")).to_have_text(key)
    expect(reveal.locator(".verify")).to_have_attribute("data-ok", "true")  # checked in the page, SHA-256
    expect(reveal.locator(".verify")).to_contain_text("opens the commitment")
    expect(page.locator("#daily-actions")).to_be_empty()  # a day that is over is not played
    row = page.locator("#rows tr", has_text=login.title())
    expect(row).to_contain_text("Given up")
    shot(page, "daily-past-desktop")

    row.locator("a.daily-replay").click()
    page.wait_for_url(f"{base_url}/match?*")
    verify = page.locator("#verify")
    expect(verify).to_have_attribute("data-ok", "true")
    expect(verify).to_contain_text(key)
    expect(page.locator(".side[data-side='0'] .side-name")).to_have_text(login.title())
    expect(page.locator(".side[data-side='1']")).to_be_hidden()  # a day's game is shown alone
    expect(page.locator(".side[data-side='0'] .side-score")).to_contain_text(str(attempt.score))  # the end first
    steps = len(attempt.record["actions"]) + 1  # each action, then the end
    expect(page.locator("#step")).to_contain_text(f"{steps} of {steps}")
    page.locator("#first").click()
    expect(page.locator("#step")).to_contain_text(f"0 of {steps}")
    shot(page, "daily-past-replay")
