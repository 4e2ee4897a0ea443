"""Accounts on an arena of two ``patience serve`` processes (PostgreSQL and Redis): sign up on one,
sign in on either, sign out on one and be signed out on both, a wrong password then the right one,
sign-ins of one address on both processes at once. Sign-in once answered 429 "busy" to everyone
here, with no attack at all: the rate counter and the lock of an address shared a Redis key."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator

import httpx
import pytest

from arena_processes import PASSWORD, Player, ServeProcess, fresh_redis, serving

pytestmark = pytest.mark.slow


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
