"""A closed account's name in the page's language, on every page that names it: a player who played a
tournament duel and a deal of the day closes the account; then the tournament's standings (and the duel's
label there), the replay, the match history, both players' profiles and the day's board say
"Geschlossenes Konto …" in German and "Account chiuso …" in Italian, and nowhere "Closed account" or the
server's mark, nor the login the account had. A screenshot of the German replay at phone size.

The moderators' page writes the detection's reasons and the server's notes in the audit log in its
language too (the server sends them as keys and figures), a closed account named in one of them included."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import threading
import time
from typing import Any

import pytest
from browser_accounts import sign_up
from playwright.sync_api import expect
from test_browser_daily_past import finished_attempt
from test_browser_fairplay import evidence, my_id
from test_browser_tournament import FORMAT, scripted_opponent

from arena_processes import PASSWORD, Player
from patience.daily import DAILY, daily_commitment
from patience.fairplay import Reason
from patience.rng import new_deal_key
from patience.server.storage import fairplay as fp
from patience.server.storage.daily import choose_deal, start_attempt
from patience.server.storage.roles import grant

pytestmark = pytest.mark.slow

CLOSED = {"de": "Geschlossenes Konto {id}", "it": "Account chiuso {id}"}
# her give-up came before any real attempt: the win is void (patience.tournament.counted)
LABEL = {"de": "Ungewertet (kein ernsthafter Versuch) gegen {name}: 0 Punkte (Wiederholung)",
         "it": "Annullata (nessun vero tentativo) contro {name}: 0 punti (rivedi)"}
GONE = {"de": "gegen Geschlossenes Konto {id}", "it": "contro Account chiuso {id}"}  # the profile's match line


def _played_a_day(server_app: Any, user_id: str, day: str) -> None:
    """A game of the deal of ``day`` (over) by ``user_id``, written as the server writes one."""
    engine = server_app.state.store.engine
    key = new_deal_key()
    deal = choose_deal(engine, day, "reloaded", f"reloaded/{DAILY['reloaded']}", key,
                       daily_commitment("reloaded", key), True)  # the day's deal (another test's, maybe)
    attempt = finished_attempt(deal.deal, day, secrets.token_urlsafe(12))
    assert start_attempt(engine, day, "reloaded", user_id, attempt) == attempt.id


def _no_english_name(page: Any, login: str) -> None:
    text = page.locator("body").inner_text()
    assert "Closed account" not in text and "<closed:" not in text and login not in text.lower(), text
    assert "Closed account" not in page.title() and "<closed:" not in page.title()


def test_a_closed_accounts_name_is_in_the_pages_language_everywhere(page: Any, base_url: str, server_app: Any,
                                                                     browser: Any, shot: Any) -> None:
    tag = secrets.token_hex(3)
    sign_up(page, base_url, f"gus{tag}", f"Gustav{tag}", then="/tournament")
    gustav = my_id(page)
    form = page.locator("#tour-make")
    form.locator("#make-name").fill(f"Farewell cup {tag}")
    form.locator("#make-format").select_option(FORMAT)
    form.locator("#make-minutes").fill("15")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/tournament?id=*")
    tournament_id = page.url.split("id=")[1]
    page.locator("#tour-join").click()
    expect(page.locator("#tour-msg")).to_contain_text("You are in")

    gina = Player(base_url, f"gina{tag}")  # her display name: Gina<tag>
    out: dict[str, Any] = {}
    thread = threading.Thread(target=scripted_opponent, args=(gina, tournament_id, out))
    thread.start()
    page.wait_for_url("**/duel?m=*", timeout=20_000)
    thread.join(timeout=40)
    assert "error" not in out, repr(out.get("error"))
    page.locator("#giveup").click()
    page.locator("#confirm-yes").click()
    expect(page.locator("#result-title")).to_have_text("You won!")
    match_id = out["match"]
    day = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=4)).isoformat()
    _played_a_day(server_app, gina.user_id, day)
    gina.close()

    # she closes her account
    token = gina.http.get("/api/me").json()["csrf"]
    closed = gina.http.post("/account/close", data={"csrf": token, "password": PASSWORD},
                            headers={"accept": "application/json"})
    assert closed.status_code == 200 and closed.json()["closed"] is True, closed.text
    short = gina.user_id[:8]
    old_name = f"Gina{tag}"

    for lang in ("de", "it"):
        name = CLOSED[lang].format(id=short)
        # the tournament's standings, and the label of Gustav's duel against her
        page.goto(f"{base_url}/tournament?id={tournament_id}&lang={lang}")
        expect(page.locator(f'#tour-rows tr[data-id="{gina.user_id}"] a').first).to_have_text(name)
        duel = page.locator(f'#tour-rows tr[data-id="{gustav}"] .tour-duels a').first
        expect(duel).to_have_attribute("aria-label", LABEL[lang].format(name=name))
        _no_english_name(page, gina.login)
        # the replay
        page.goto(f"{base_url}/match?id={match_id}&lang={lang}")
        expect(page.locator(f'.side-name[href="/profile?u={gina.user_id}"]')).to_have_text(name)
        _no_english_name(page, gina.login)
        # the match history the server renders
        page.goto(f"{base_url}/matches?player={gustav}&lang={lang}")
        expect(page.locator(f'tr[data-match="{match_id}"] a[href="/profile?u={gina.user_id}"]')).to_have_text(name)
        _no_english_name(page, gina.login)
        # her profile and his (his match against her)
        page.goto(f"{base_url}/profile?u={gina.user_id}&lang={lang}")
        expect(page.locator("#player-name")).to_have_text(name)
        assert page.title().startswith(name)
        _no_english_name(page, gina.login)
        page.goto(f"{base_url}/profile?u={gustav}&lang={lang}")
        expect(page.locator("#recent")).to_contain_text(GONE[lang].format(id=short))
        _no_english_name(page, gina.login)
        # the day's board
        page.goto(f"{base_url}/daily?game=reloaded&lang={lang}")
        page.locator("#daily-days a", has_text=day).click()
        expect(page.locator("#rows tr", has_text=name)).to_have_count(1)
        _no_english_name(page, gina.login)
        assert old_name not in page.locator("body").inner_text()

    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="de-DE", device_scale_factor=2)
    try:
        small = phone.new_page()
        small.goto(f"{base_url}/match?id={match_id}&lang=de")
        expect(small.locator(f'.side-name[href="/profile?u={gina.user_id}"]')).to_have_text(
            CLOSED["de"].format(id=short))
        shot(small, "closed-name-replay-phone-de")
    finally:
        phone.close()



MOD_WORDS = {  # a series against a closed account (kept with the account's standing), a game at machine speed
    "de": ("6 Duelle gegen denselben Gegner in 24 h: 6 gewonnen, 0 verloren (3 Siege mehr",
           "Geschlossenes Konto {id}, Solitaire Reloaded", "eine ganze Partie in Maschinentempo"),
    "it": ("6 sfide con lo stesso avversario in 24 h: 6 vinte, 0 perse (3 vittorie più",
           "Account chiuso {id}, Solitaire Reloaded", "un’intera partita a velocità da macchina"),
}


AUDIT_WORDS = {  # the server's notes in the audit log
    "de": ("von der Erkennung zur Prüfung vorgelegt: 6 Duelle gegen denselben Gegner",
           "(Geschlossenes Konto {id}, Solitaire Reloaded)", "12,0 Punkte aus Partie m1 zurückgegeben"),
    "it": ("segnalato per verifica dal rilevamento: 6 sfide con lo stesso avversario",
           "(Account chiuso {id}, Solitaire Reloaded)", "12,0 punti dell’incontro m1 restituiti"),
}


def test_the_detections_reasons_are_in_the_moderators_language(browser: Any, base_url: str, server_app: Any,
                                                               shot: Any) -> None:
    tag = secrets.token_hex(3)
    suspect, puppet = Player(base_url, f"sus{tag}"), Player(base_url, f"pup{tag}")
    evidence(server_app, suspect.user_id, [110 + i % 40 for i in range(60)], "click")  # machine speed
    series = Reason("series", {"why": Reason("series_won", {"n": 6, "won": 6, "lost": 0, "excess": 3.0}),
                               "name": f"Pup{tag}", "game": "reloaded", "user": puppet.user_id})
    with server_app.state.store.engine.begin() as connection:  # flagged by a series, as the detection keeps it
        connection.execute(fp.FairPlayRow.__table__.insert(), [{
            "user_id": suspect.user_id, "state": "review", "category": None, "score": 60,
            "reasons": json.dumps([series.to_dict()]), "note": None, "by_id": None,
            "at_ms": int(time.time() * 1000), "since_ms": 0}])
        fp._audit(connection, suspect.user_id, None, "flag", fp.Note("note_flag_series", {"series": series}))
        fp._audit(connection, suspect.user_id, None, "refund", fp.Note("note_refund", {"points": 12.0, "match": "m1"}))
    token = puppet.http.get("/api/me").json()["csrf"]
    assert puppet.http.post("/account/close", data={"csrf": token, "password": PASSWORD},
                            headers={"accept": "application/json"}).status_code == 200
    context = browser.new_context(viewport={"width": 1366, "height": 850}, locale="en-US")
    try:
        page = context.new_page()
        sign_up(page, base_url, f"mod{tag}", f"Moderator{tag}", then="/profile")
        assert grant(server_app.state.store, f"mod{tag}", "moderator")
        for lang, (why, who, machine) in MOD_WORDS.items():
            page.goto(f"{base_url}/mod?lang={lang}")
            row = page.locator(f'#queue tr[data-account="{suspect.user_id}"]')
            expect(row).to_contain_text(why)
            expect(row).to_contain_text(who.format(id=puppet.user_id[:8]))
            row.get_by_role("link").click()
            expect(page.locator("#reasons")).to_contain_text(machine)
            for note in AUDIT_WORDS[lang]:
                expect(page.locator("#audit")).to_contain_text(note.format(id=puppet.user_id[:8]))
            text = page.locator("body").inner_text()
            assert "matches with one opponent" not in text and "machine speed" not in text, text
            assert "by the detection" not in text and "given back" not in text, text
            assert "Closed account" not in text and "<closed:" not in text and f"pup{tag}" not in text.lower(), text
            shot(page, f"mod-reasons-{lang}")
    finally:
        context.close()
