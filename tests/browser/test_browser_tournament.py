"""A tournament in a real browser: a player makes one with the page's form (the password field only
when asked for), joins it (their own line marked), is paired with a scripted player as soon as both are
in, plays the duel on the duel page (which says it is a tournament's and leads back to it), is taken back
to the standings after the result, with the duel's points linking to its replay (none: neither made a real
attempt, docs/protocol.md), and finds the tournament on their profile with their place and points; the pages
in German and Italian; at the end, no winner named (nobody scored); and axe-core finds no serious violation on
the list, the form and the standings."""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

import pytest
from browser_accounts import sign_up
from playwright.sync_api import expect
from sqlalchemy import update
from test_browser_access import serious

from arena_processes import Player
from patience.server.storage.tournaments import TournamentRow

pytestmark = pytest.mark.slow

FORMAT = "faecher/standard/300"


def scripted_opponent(player: Player, tournament_id: str, out: dict[str, Any]) -> None:
    """Join the tournament, then lose the first duel: a wrong move (charged in Der Fächer), then give up."""
    try:
        player.open()
        player.send("tour", {"id": tournament_id})
        player.send("tjoin", {"id": tournament_id})
        player.until(lambda m: m["t"] == "tour" and m["d"]["joined"])
        out["match"] = player.until(lambda m: m["t"] == "duel", timeout=30)["d"]["id"]
        player.intent("move", src="fs", dst="v1", n=1)
        player.intent("giveup")
    except BaseException as exc:
        out["error"] = exc


def test_make_join_and_play_a_tournament_duel(page: Any, base_url: str, server_app: Any, shot: Any) -> None:
    tag = secrets.token_hex(3)
    sign_up(page, base_url, f"anna{tag}", f"Anna{tag}", then="/tournament")
    expect(page.locator("#tour-list tr").first).to_be_visible()  # the site's hourly tournaments are listed
    assert serious(page) == []
    form = page.locator("#tour-make")
    form.locator("#make-name").fill(f"Evening cup {tag}")
    form.locator("#make-format").select_option(FORMAT)
    form.locator("#make-minutes").fill("15")
    expect(form.locator("#make-password")).to_be_hidden()  # asked for only when wanted
    form.locator("#make-locked").check()
    form.locator("#make-password").fill("not sent")
    form.locator("#make-locked").uncheck()  # taken back: the tournament is open to all
    expect(form.locator("#make-password")).to_be_hidden()
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/tournament?id=*")
    tournament_id = page.url.split("id=")[1]
    expect(page.locator("#tour-name")).to_have_text(f"Evening cup {tag}")
    expect(page.locator("#tour-clock")).to_contain_text("Ends in 1")
    page.locator("#tour-join").click()
    expect(page.locator("#tour-msg")).to_contain_text("You are in")
    expect(page.locator("#tour-pause")).to_be_visible()
    expect(page.locator("#tour-rows tr.mine .tour-you")).to_have_text("(you)")
    expect(page.locator('[data-t="tour.rules"]')).to_contain_text("duels still going on are played out and count")

    bruno = Player(base_url, f"bruno{tag}")
    out: dict[str, Any] = {}
    thread = threading.Thread(target=scripted_opponent, args=(bruno, tournament_id, out))
    thread.start()
    page.wait_for_url("**/duel?m=*", timeout=20_000)  # paired: the duel page
    thread.join(timeout=40)
    assert "error" not in out, repr(out.get("error"))
    expect(page.locator("#variant-name")).to_contain_text("Tournament duel")
    expect(page.locator("#home")).to_have_attribute("href", f"/tournament?id={tournament_id}")
    page.locator("#giveup").click()
    page.locator("#confirm-yes").click()
    expect(page.locator("#result-title")).to_have_text("You won!")
    # the tournament points the duel earned each player, as the server's standings say: none, as neither
    # made a real attempt (the rating's rule of no attempt holds for the points: docs/protocol.md)
    expect(page.locator('#result-rows tr[data-side="you"] .result-tour')).to_have_text("+0 points")
    expect(page.locator('#result-rows tr[data-side="opp"] .result-tour')).to_have_text("+0 points")
    expect(page.locator("#rematch-box")).to_be_hidden()  # no rematch in a tournament
    expect(page.locator("#to-lobby")).to_have_text("Back to the tournament")
    expect(page.locator("#tour-next")).to_contain_text("Back to the tournament for your next duel in")
    page.wait_for_url(f"**/tournament?id={tournament_id}", timeout=15_000)  # by itself, for the next pairing
    mine = page.locator(f'#tour-rows tr[data-id="{bruno.user_id}"]')
    expect(mine).to_be_visible()
    first = page.locator("#tour-rows tr.mine")
    expect(first.locator(".tour-points")).to_have_text("0")
    duel = first.locator(".tour-duels a").first
    expect(duel).to_have_attribute("href", f"/match?id={out['match']}")
    # won, as Bruno gave up at once: void, not a loss (the winner's fire is not put out by such a give-up)
    expect(duel).to_have_attribute("aria-label",
                                   f"Void (no real attempt) against {bruno.login.title()}: 0 points (replay)")
    expect(mine.locator(".tour-points")).to_have_text("0")
    shot(page, "tournament-standings")
    assert serious(page) == []
    # a pause, then back in; the page in German and Italian
    page.locator("#tour-pause").click()
    expect(page.locator("#tour-join")).to_have_text("Come back")
    page.goto(f"{base_url}/tournament?id={tournament_id}&lang=de")
    expect(page.locator("#tour-join")).to_have_text("Weiterspielen")
    expect(first.locator(".tour-duels a").first).to_have_attribute(
        "aria-label", f"Ungewertet (kein ernsthafter Versuch) gegen {bruno.login.title()}: 0 Punkte (Wiederholung)")
    page.locator("#tour-join").click()
    expect(page.locator("#tour-msg")).to_contain_text("Du bist dabei")
    page.goto(f"{base_url}/profile?lang=en")  # the tournament on the player's profile, with place and points
    played = page.locator(f'#tournaments a[href="/tournament?id={tournament_id}"]')
    expect(played).to_contain_text(f"Evening cup {tag}")
    expect(played).to_contain_text("place 1 of 2 so far · 0 points")
    page.goto(f"{base_url}/tournament?lang=it")
    expect(page.locator("#page-title")).to_have_text("Tornei")
    expect(page.locator(f'#tour-list a[href="/tournament?id={tournament_id}"]')).to_be_visible()
    # the list marks the tournaments this player joined, and only those
    joined = page.locator("#tour-list tr", has=page.locator(f'a[href="/tournament?id={tournament_id}"]'))
    expect(joined.locator(".tour-joined")).to_have_text("partecipi")
    expect(page.locator("#tour-list .tour-joined")).to_have_count(1)
    # the end, come sooner than a player could wait for: no one joins or pauses
    with server_app.state.store.engine.begin() as connection:
        connection.execute(update(TournamentRow).where(TournamentRow.id == tournament_id)
                           .values(ends_ms=int(time.time() * 1000) - 1000))
    page.goto(f"{base_url}/tournament?id={tournament_id}&lang=en")
    expect(page.locator("#tour-clock")).to_have_text("This tournament is over: the final standings.")
    expect(page.locator("#tour-msg")).to_be_hidden()  # nobody scored a point: no winner is named
    expect(page.locator("#tour-actions button")).to_have_count(0)
    page.goto(f"{base_url}/tournament?lang=en")
    bruno.close()
