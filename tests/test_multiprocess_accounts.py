"""Accounts on an arena of two ``patience serve`` processes (PostgreSQL and Redis): sign up on one,
sign in on either, sign out on one and be signed out on both, a wrong password then the right one, a new password on
one ending the other sessions (and their play sockets) on the other,
sign-ins of one address on both processes at once. Sign-in once answered 429 "busy" to everyone
here, with no attack at all: the rate counter and the lock of an address shared a Redis key."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from arena_processes import PASSWORD, Player, ServeProcess, fresh_redis, serving

pytestmark = pytest.mark.slow
NEW_PASSWORD = "purple staple orbit"


@pytest.fixture(scope="module")
def two(module_postgres_url: str, redis_server: str,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    with serving(module_postgres_url, fresh_redis(redis_server, 13), tmp_path_factory.mktemp("accounts")) as procs:
        yield procs[0], procs[1]


def signed_in_as(client: httpx.Client) -> str | None:
    user = client.get("/api/me").json()["user"]
    return None if user is None else str(user["login"])


def sign_in(url: str, login: str, password: str = PASSWORD) -> tuple[httpx.Client, httpx.Response]:
    client = httpx.Client(base_url=url, timeout=20.0)
    csrf = client.get("/api/me").json()["csrf"]
    answer = client.post("/account/signin", data={"csrf": csrf, "login": login, "password": password},
                         headers={"accept": "application/json"})
    return client, answer


def sign_out(client: httpx.Client) -> None:
    csrf = client.get("/api/me").json()["csrf"]
    answer = client.post("/account/signout", data={"csrf": csrf}, headers={"accept": "application/json"})
    assert answer.status_code == 200, answer.text


def test_an_account_made_on_one_process_signs_in_on_both(two: tuple[ServeProcess, ServeProcess]) -> None:
    one, other = two
    login = f"carla{secrets.token_hex(3)}"
    player = Player(one.url, login)
    assert signed_in_as(player.http) == login
    sign_out(player.http)
    assert signed_in_as(player.http) is None
    for proc in (other, one, other):  # again and again: nothing of a sign-in stays behind to block the next
        client, answer = sign_in(proc.url, login)
        assert answer.status_code == 200, (proc.name, answer.status_code, answer.text)
        assert answer.json()["user"]["login"] == login
        assert signed_in_as(client) == login
        # the session opened here is known on the other process too
        client_elsewhere = httpx.Client(base_url=(one if proc is other else other).url, cookies=client.cookies)
        assert signed_in_as(client_elsewhere) == login
        sign_out(client_elsewhere)  # signed out there: signed out here too
        assert signed_in_as(client) is None
        client.close()
        client_elsewhere.close()


def test_a_wrong_password_then_the_right_one(two: tuple[ServeProcess, ServeProcess]) -> None:
    one, other = two
    login = f"dario{secrets.token_hex(3)}"
    Player(one.url, login).http.close()
    client, answer = sign_in(other.url, login, "not the password")
    assert answer.status_code == 401 and answer.json()["error"] == "wrong_password", answer.text
    client.close()
    client, answer = sign_in(one.url, login)
    assert answer.status_code == 200, answer.text
    client.close()


def test_sign_ins_of_one_address_at_once_on_both_processes(two: tuple[ServeProcess, ServeProcess]) -> None:
    """They take turns under the address's lock across processes; each gets in."""
    logins = [f"elsa{secrets.token_hex(3)}" for _ in range(6)]
    for i, login in enumerate(logins):
        Player(two[i % 2].url, login).http.close()
    answers: list[int] = []

    def go(i: int) -> None:
        client, answer = sign_in(two[i % 2].url, logins[i])
        answers.append(answer.status_code)
        client.close()

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(logins))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert answers == [200] * len(logins)


def test_a_new_password_on_one_process_ends_the_other_sessions_on_the_other(
        two: tuple[ServeProcess, ServeProcess]) -> None:
    """The sessions end in the database, and the play socket of another session, open on the other
    process, closes at once (the bus's ``signout`` channel)."""
    one, other = two
    login = f"frida{secrets.token_hex(3)}"
    player = Player(one.url, login)
    elsewhere, answer = sign_in(other.url, login)
    assert answer.status_code == 200, answer.text
    cookie = "; ".join(f"{name}={value}" for name, value in elsewhere.cookies.items())
    with connect(other.url.replace("http://", "ws://") + "/ws", additional_headers={"Cookie": cookie},
                 open_timeout=10) as ws:
        ws.send(json.dumps({"t": "lobby", "d": {}}))
        csrf = player.http.get("/api/me").json()["csrf"]
        changed = player.http.post("/account/password", data={"csrf": csrf, "old": PASSWORD, "new": NEW_PASSWORD},
                                   headers={"accept": "application/json"})
        assert changed.status_code == 200, changed.text
        deadline = time.monotonic() + 10
        with pytest.raises(ConnectionClosed):
            while time.monotonic() < deadline:
                try:
                    ws.recv(timeout=1)
                except TimeoutError:
                    continue
        assert time.monotonic() < deadline, "the other process kept the socket of an ended session open"
    assert signed_in_as(elsewhere) is None
    assert signed_in_as(player.http) == login  # the session that changed it goes on, on both processes
    assert signed_in_as(httpx.Client(base_url=other.url, cookies=player.http.cookies)) == login
    assert sign_in(other.url, login)[1].status_code == 401
    assert sign_in(other.url, login, NEW_PASSWORD)[1].status_code == 200
    player.http.close()
    elsewhere.close()
