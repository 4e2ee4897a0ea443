"""The play socket under a hostile client: a flood slows the flooder, not the others; a browser's new
games are capped; malformed frames are answered with ``err`` and the socket stays open; a page
that does not read is let go."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import FakeTime, TestClient
from patience.server import create_app
from patience.server.live import OUTBOX_BYTES, Connection
from patience.server.transport.budget import (
    ADDRESS_BURST,
    ADDRESS_NEW_GAMES,
    ADDRESS_RATE,
    NEW_GAMES,
    SOCKET_BURST,
    SOCKET_RATE,
    Budgets,
    TokenBucket,
)


@pytest.fixture
def client(tmp_path: Path, fake_time: FakeTime) -> Iterator[TestClient]:
    app = create_app(tmp_path, now=fake_time, tick_seconds=0.02, save_seconds=0.05)
    with TestClient(app) as c:
        yield c


def ping(n: int = 0) -> str:
    return json.dumps({"t": "ping", "d": {}})


def test_a_flooding_socket_waits_its_turn(client: TestClient) -> None:
    router = client.app.state.router  # type: ignore[attr-defined]
    handled: list[str] = []
    handle = router.handle

    async def recording(conn: Connection, message: Any) -> None:
        handled.append(conn.browser)
        await handle(conn, message)

    router.handle = recording
    with client.websocket_connect("/ws", headers={"cookie": "patience_id=flooder-flooder-01"}) as flooder, \
            client.websocket_connect("/ws", headers={"cookie": "patience_id=bystander-bystand-1"}) as bystander:
        for n in range(300):
            flooder.send_text(ping(n))
        bystander.send_text(ping(0))
        assert bystander.receive_json()["t"] == "pong"
        first = handled.index("bystander-bystand-1")
        assert first < 100  # not behind the flood: the flooder got its burst, then its rate
    assert handled.count("flooder-flooder-01") < 300  # the rest of the flood was still waiting


def test_the_sockets_of_one_address_share_its_budget() -> None:
    """40 sockets of one address, each asking for its own rate (8 a second), get the address's
    rate between them; a socket of another address is served at once; addresses whose sockets are
    closed and whose buckets are full again, and browsers with no recent game, are forgotten."""
    clock = [0.0]
    budgets = Budgets(now=lambda: clock[0])
    sockets = [(budgets.socket(), budgets.opened("203.0.113.7")) for _ in range(40)]
    ready = [0.0] * len(sockets)
    read = 0
    # 30 s in steps of 10 ms; each socket sends every 120 ms (its own rate), read when its wait is over
    for tick in range(1, 3001):
        clock[0] = tick / 100
        for i, (own, shared) in enumerate(sockets):
            if tick % 12 == i % 12 and ready[i] <= clock[0]:
                ready[i] = clock[0] + max(own.take(), shared.take())
                read += 1 if clock[0] > 10 else 0
    # the last 20 s: the address's rate (50 a second), not the sockets' own (320 a second together)
    assert 19 * ADDRESS_RATE <= read <= 21 * ADDRESS_RATE and ADDRESS_RATE < 40 * SOCKET_RATE / 4
    other = budgets.opened("198.51.100.1")
    assert max(budgets.socket().take(), other.take()) == 0.0
    for _ in sockets:
        budgets.closed("203.0.113.7")
    budgets.closed("198.51.100.1")
    clock[0] += 10.0  # their buckets full again (a burst, and the second or so the address owed): as good as new
    assert budgets.new_game("b1") is None and len(budgets) == 2  # the browser and its address
    clock[0] += 61
    assert budgets.new_game("b2") is None and len(budgets) == 2  # b1 forgotten, the address's bucket new


def test_reconnecting_does_not_renew_an_address_budget() -> None:
    """A client that closes its socket every 40 messages and opens another at once (a fresh socket
    budget each time) gets the address's rate, not a fresh address burst per socket."""
    clock = [0.0]
    budgets = Budgets(now=lambda: clock[0])
    read = 0
    while clock[0] < 20.0:
        own, shared = budgets.socket(), budgets.opened("203.0.113.7")
        for _ in range(SOCKET_BURST):  # each message read once its wait is over, a millisecond apart
            clock[0] += max(own.take(), shared.take()) + 0.001
            read += 1
        budgets.closed("203.0.113.7")
    assert read <= ADDRESS_BURST + 20 * ADDRESS_RATE + SOCKET_BURST
    assert max(budgets.socket().take(), budgets.opened("198.51.100.1").take()) == 0.0  # not another address


def test_idle_address_budgets_are_forgotten_once_full_again_and_bounded() -> None:
    clock = [0.0]
    budgets = Budgets(idle_addresses=100, now=lambda: clock[0])
    for i in range(300):  # each address spends its burst and more, then closes its socket
        address = f"198.51.100.{i % 250}" if i < 250 else f"2001:db8:{i}::1"
        shared = budgets.opened(address)
        for _ in range(ADDRESS_BURST + 10):
            shared.take()
        budgets.closed(address)
    assert len(budgets) <= 100  # the least recently used forgotten first, even in debt
    clock[0] += (ADDRESS_BURST + 10) / ADDRESS_RATE + 0.1  # every bucket full again
    budgets.opened("192.0.2.1")
    budgets.closed("192.0.2.1")
    assert len(budgets) == 0  # a full bucket is as good as a new one


def test_the_addresses_of_one_ipv6_64_share_a_budget() -> None:
    budgets = Budgets(now=lambda: 0.0)
    assert budgets.opened("2001:db8:1:2::1") is budgets.opened("2001:db8:1:2:aaaa::7")
    assert budgets.opened("2001:db8:1:3::1") is not budgets.opened("2001:db8:1:2::1")
    for n in range(ADDRESS_NEW_GAMES):
        assert budgets.new_game(f"browser-{n}", f"2001:db8:1:2::{n + 1:x}") is None
    assert budgets.new_game("one-more", "2001:db8:1:2::ffff") is not None


def test_a_new_socket_starts_with_what_its_address_has_left(client: TestClient) -> None:
    client.app.state.router.budgets = Budgets(address_rate=0.01, address_burst=5)  # type: ignore[attr-defined]
    with client.websocket_connect("/ws") as ws:
        for n in range(5):
            ws.send_text(ping(n))
            assert ws.receive_json()["t"] == "pong"
    with client.websocket_connect("/ws") as ws:
        ws.send_text(ping())
        answer = ws.receive_json()
        assert answer["t"] == "err" and answer["d"]["code"] == "too_many"


def test_a_socket_deep_in_debt_is_closed_with_a_reason() -> None:
    clock = [0.0]
    bucket = TokenBucket(rate=10.0, burst=5, now=lambda: clock[0])
    waits = [bucket.take() for _ in range(106)]
    assert waits[:5] == [0.0] * 5 and waits[5] == pytest.approx(0.1) and waits[-1] > 10.0
    clock[0] += 100.0  # paid back, and no more than a burst kept
    assert [bucket.take() for _ in range(6)][-1] > 0.0


def test_a_browser_starts_a_bounded_number_of_games_a_minute(client: TestClient) -> None:
    codes = []
    with client.websocket_connect("/ws") as ws:
        for n in range(NEW_GAMES + 2):
            ws.send_text(json.dumps({"t": "new", "d": {"game": "faecher", "seed": str(n), "cid": "p"}}))
            codes.append(ws.receive_json())
    assert [m["t"] for m in codes[:NEW_GAMES]] == ["game"] * NEW_GAMES
    assert [m["d"].get("code") for m in codes[NEW_GAMES:]] == ["too_many_games"] * 2
    clock = [0.0]
    budgets = Budgets(new_games=2, now=lambda: clock[0])
    assert [budgets.new_game("b") is None for _ in range(3)] == [True, True, False]
    clock[0] += 61
    assert budgets.new_game("b") is None


def test_an_address_starts_a_bounded_number_of_games_a_minute(client: TestClient) -> None:
    """A script that leaves out the cookie is a new browser on every socket: its address's cap holds
    it, refuses with the reason and changes nothing; the games come back at the address's rate."""
    clock = [0.0]
    budgets = Budgets(address_new_games=6, address_new_games_burst=3, now=lambda: clock[0])
    client.app.state.router.budgets = budgets  # type: ignore[attr-defined]
    hub = client.app.state.hub  # type: ignore[attr-defined]
    answers = []
    for n in range(4):  # no cookie: a browser of its own each time
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"t": "new", "d": {"game": "faecher", "seed": str(n), "cid": "p"}}))
            answers.append(ws.receive_json())
    assert [m["t"] for m in answers] == ["game"] * 3 + ["err"]
    refused = answers[3]["d"]
    assert refused["code"] == "too_many_games" and "6 new games a minute from one address" in refused["msg"]
    assert len(hub.games) == 3 and len(budgets._games) == 3  # no game made, the new browser's count untouched
    assert budgets.new_game("other-browser", "203.0.113.9") is None  # another address is not held
    clock[0] += 10.0  # a game a 10 s back
    with client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"t": "new", "d": {"game": "faecher", "seed": "9", "cid": "p"}}))
        assert ws.receive_json()["t"] == "game"
        ws.send_text(json.dumps({"t": "new", "d": {"game": "faecher", "seed": "10", "cid": "p"}}))
        assert ws.receive_json()["d"]["code"] == "too_many_games"


@pytest.mark.parametrize("frame", [
    b'{"t":"ping","d":' + b"[" * 1000 + b"]" * 1000 + b"}",
    b'{"t":"new","d":{"game":"' + b"\xff\xfe" + b'"}}',
    b'{"t":"\xff","d":{}}',
])
def test_malformed_frames_are_answered_and_the_socket_stays(client: TestClient, frame: bytes) -> None:
    with client.websocket_connect("/ws") as ws:
        ws.send_bytes(frame)
        answer = ws.receive_json()
        assert answer["t"] == "err" and answer["d"]["code"] == "bad_message"
        ws.send_text(ping(0))
        assert ws.receive_json()["t"] == "pong"


def test_a_page_that_does_not_read_is_let_go_early() -> None:
    let_go = []
    conn = Connection("b", on_overflow=lambda: let_go.append(True))
    big = b"x" * 50_000
    for _ in range(OUTBOX_BYTES // len(big) + 1):
        conn.send(big)
    assert let_go == [True] and conn.dropped
    assert conn.outbox.qsize() <= OUTBOX_BYTES // len(big) + 1  # about a megabyte, not a thousand messages


def test_signing_out_closes_the_pages_signed_in(tmp_path: Path, fake_time: FakeTime) -> None:
    from argon2 import PasswordHasher
    from starlette.websockets import WebSocketDisconnect

    app = create_app(tmp_path, now=fake_time, wall=fake_time, tick_seconds=0.02, save_seconds=0.05,
                     password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    with TestClient(app) as client:
        csrf = client.get("/api/me").json()["csrf"]
        json_ = {"accept": "application/json"}
        assert client.post("/account/signup", data={"csrf": csrf, "login": "kira", "password": "long enough pw"},
                           headers=json_).status_code == 200
        with client.websocket_connect("/ws") as ws:
            ws.send_text(ping())
            assert ws.receive_json()["t"] == "pong"
            assert client.post("/account/signout", data={"csrf": csrf}, headers=json_).status_code == 200
            with pytest.raises(WebSocketDisconnect):
                while True:  # the page is told nothing more as the account: its socket is closed
                    ws.receive_json()


@pytest.mark.parametrize("before", ["²", "9" * 40, "-1", "1e9"])
def test_a_bad_before_is_a_400_with_a_reason(client: TestClient, before: str) -> None:
    answer = client.get("/api/matches", params={"before": before})
    assert answer.status_code == 400 and answer.json()["error"] == "bad_before"


def test_pages_cannot_be_framed_and_https_gets_hsts(client: TestClient) -> None:
    plain = client.get("/")
    assert plain.headers["x-frame-options"] == "DENY" and "strict-transport-security" not in plain.headers
    secure = TestClient(client.app, base_url="https://testserver").get("/healthz")
    assert secure.headers["strict-transport-security"].startswith("max-age=")


def test_healthz_says_when_the_database_takes_no_write(client: TestClient) -> None:
    from sqlalchemy import event

    assert client.get("/healthz").text == "ok"
    engine = client.app.state.store.engine  # type: ignore[attr-defined]

    def disk_full(*_: Any) -> None:
        raise OSError("database or disk is full")

    event.listen(engine, "before_cursor_execute", disk_full)
    client.app.state.health_checked = None  # type: ignore[attr-defined]
    try:
        answer = client.get("/healthz")
    finally:
        event.remove(engine, "before_cursor_execute", disk_full)
    assert answer.status_code == 503 and "disk is full" in answer.text and "\n" not in answer.text
