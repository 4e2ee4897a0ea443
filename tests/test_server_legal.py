"""The legal moves sent with every table (``table.legal``): exactly the engine's legal moves, each
foundation move named by the card's own pile, no stock turn, no hidden card; the same after a restart;
in a duel each side gets the list of its own game."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from helpers import FakeTime, TestClient
from patience.games import DRAW, REDEAL, Move, State
from patience.server import create_app
from patience.server.identity import COOKIE
from test_server_app import hub_of, new_game, recv, reply_to, send
from test_server_duel import app, arena_of, finish, pair, seeds  # noqa: F401 - fixtures of the duel tests


def expected(state: State) -> list[list[Any]]:
    """The engine's legal moves as the page may know them (foundation: the suit's pile)."""
    out: list[list[Any]] = []
    piles = state.piles()
    for move in state.legal_moves():
        if move in (DRAW, REDEAL):
            continue
        dst = move.dst
        if dst == "f":
            dst = "f" + piles[move.src][-1][0].text[-1].lower()
        if [move.src, dst, move.n] not in out:
            out.append([move.src, dst, move.n])
    return out


def check_table(table: dict[str, Any], state: State, over: bool = False) -> None:
    legal = table["legal"]
    assert legal == ([] if over else expected(state))
    for src, dst, n in legal:
        assert state.check(Move(src, dst, n)) is None, (src, dst, n)  # the server would take it as listed
        shown = table["piles"][src]
        assert len(shown) >= n and all(card is not None for card in shown[-n:])  # the page knows these cards
        assert src not in ("s",)


def random_intent(state: State, rng: random.Random) -> tuple[str, dict[str, Any]]:
    moves = state.useful_moves() or state.legal_moves()
    move = rng.choice(moves)
    if move in (DRAW, REDEAL):
        return "stock", {}
    return "move", {"src": move.src, "dst": move.dst, "n": move.n}


@pytest.mark.parametrize(("game", "seed", "options"), [("reloaded", 7, None), ("faecher", 7, None),
                                                       ("teppich", 53, None), ("teppich", 7, {"waste": True})])
def test_every_table_lists_the_engines_legal_moves(tmp_path: Path, fake_time: FakeTime, game: str, seed: int,
                                                   options: dict[str, Any] | None) -> None:
    with TestClient(create_app(tmp_path, now=fake_time, tick_seconds=0.02, save_seconds=0.05)) as client:
        client.get("/")
        with client.websocket_connect("/ws") as ws:
            extra = {"options": options} if options else {}
            d = new_game(ws, game, seed=str(seed), **extra)
            live = hub_of(client).games[d["id"]]
            check_table(d["table"], live.session.state)
            rng = random.Random(5)
            tables = 0
            for ack in range(1, 80):
                if live.session.is_over:
                    break
                kind, data = random_intent(live.session.state, rng)
                send(ws, kind, {"ack": ack, **data})
                answer = reply_to(ws, ack)["d"]
                if answer.get("table"):
                    check_table(answer["table"], live.session.state, live.session.is_over)
                    tables += 1
            assert tables > 5 or live.session.is_over
            # a move off the list is refused as the rules say (in Der Fächer: charged, never blocked)
            if not live.session.is_over:
                state = live.session.state
                bad = next(([p, q] for p in state.piles() for q in state.piles()
                            if p != q and p not in ("s",) and not q.startswith("f")
                            and state.check(Move(p, q)) is not None and state.piles()[p]), None)
                if bad:
                    send(ws, "move", {"ack": 200, "src": bad[0], "dst": bad[1], "n": 1})
                    answer = reply_to(ws, 200)
                    assert answer["t"] == "rej" or answer["d"]["ok"] is False


def test_the_list_is_the_same_after_a_restart(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as c:
        c.get("/")
        cookie = c.cookies[COOKIE]
        with c.websocket_connect("/ws") as ws:
            d = new_game(ws, "reloaded", seed="12")
            game = hub_of(c).games[d["id"]]
            rng = random.Random(3)
            for ack in range(1, 9):
                kind, data = random_intent(game.session.state, rng)
                send(ws, kind, {"ack": ack, **data})
                reply_to(ws, ack)
            before = json.loads(json.dumps(game.snapshot().table.legal))
            assert before == expected(game.session.state)
    with TestClient(create_app(tmp_path)) as c:
        c.cookies.set(COOKIE, cookie)
        with c.websocket_connect("/ws") as ws:
            send(ws, "join", {"id": d["id"], "cid": "again"})
            snap = recv(ws)["d"]
    assert snap["table"]["legal"] == before


def test_a_finished_game_lists_nothing(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as c:
        c.get("/")
        with c.websocket_connect("/ws") as ws:
            new_game(ws, "reloaded", seed="3")
            send(ws, "giveup", {"ack": 1})
            reply_to(ws, 1)
            send(ws, "undo", {"ack": 2})
            reply_to(ws, 2)
            send(ws, "join", {"id": next(iter(hub_of(c).games)), "cid": "page1"})
            snap = recv(ws)["d"]
    assert snap["status"]["outcome"] == "given_up" and snap["table"]["legal"] == []


@pytest.mark.parametrize("fmt", ["reloaded/standard/300", "faecher/standard/300", "teppich/waste/300"])
def test_each_side_of_a_duel_gets_its_own_list(app: Any, fmt: str) -> None:  # noqa: F811
    a, b, live = pair(app, fmt=fmt)
    for page in (a, b):
        snap = live.snapshot(page.side)
        check_table(json.loads(msgspec.json.encode(snap.table)), live.match.sessions[page.side].state)
    rng = random.Random(8)
    for _ in range(12):
        for page in (a, b):
            session = live.match.sessions[page.side]
            if session.is_over:
                continue
            kind, data = random_intent(session.state, rng)
            answer = page.intent(kind, **data)["d"]
            if answer.get("table"):
                check_table(answer["table"], session.state, session.is_over)
    # a page that comes back gets the same list in the whole match
    a.join(live.id, 0)
    snap = a.until(lambda m: m["t"] == "duel")["d"]
    check_table(snap["table"], live.match.sessions[a.side].state)
    finish(a, b, live, rng, moves=2)
    a.close()
    b.close()
