"""Accounts under hostile load: hashing off the event loop and outside any database session, a
bounded number of hashes at once, limits that parallel guesses cannot race, sign-ups limited, and
a stranger's guesses that never lock the owner out.

On SQLite and PostgreSQL (the ``database_url`` fixture).
"""

from __future__ import annotations

import asyncio
import collections
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy import event, text
from sqlalchemy.exc import IntegrityError

from helpers import FakeTime, run_async
from patience.server.accounts import AccountError, Accounts, Hashing, owasp_hasher
from patience.server.storage.league import find_players
from patience.server.storage.store import Store, name_key

PASSWORD = "correct horse battery"


class WatchedHasher(PasswordHasher):
    """A cheap argon2id that counts its verifications, how many run at once, and whether a database
    connection is held meanwhile."""

    def __init__(self, store: Store | None = None, pause: float = 0.0) -> None:
        super().__init__(time_cost=1, memory_cost=1024, parallelism=1)
        self.store = store
        self.pause = pause
        self.verified = 0
        self.running = 0
        self.most = 0
        self.connections_held: list[int] = []
        self.threads: set[int] = set()
        self.lock = threading.Lock()

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:
        with self.lock:
            self.verified += 1
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.add(threading.get_ident())
        try:
            if self.store is not None:
                self.connections_held.append(self.store.test_held.get(threading.get_ident(), 0))  # type: ignore
            time.sleep(self.pause)  # as long as a real hash takes
            return super().verify(hash, password)
        finally:
            with self.lock:
                self.running -= 1


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    store = Store(database_url)
    store.migrate()
    held: dict[int, int] = {}  # thread -> database connections it holds
    store.test_held = held  # type: ignore[attr-defined]

    def checkout(*_: Any) -> None:
        held[threading.get_ident()] = held.get(threading.get_ident(), 0) + 1

    def checkin(*_: Any) -> None:
        held[threading.get_ident()] = held.get(threading.get_ident(), 0) - 1

    event.listen(store.engine, "checkout", checkout)
    event.listen(store.engine, "checkin", checkin)
    yield store
    store.close()


def make(store: Store, fake_time: FakeTime, hasher: PasswordHasher, **kwargs: Any) -> Accounts:
    return Accounts(store, now=fake_time, hasher=hasher, **kwargs)


async def outcome(coro: Any) -> int:
    try:
        await coro
        return 200
    except AccountError as exc:
        return exc.status


def test_parallel_guesses_cannot_pass_the_limit(store: Store, fake_time: FakeTime) -> None:
    hasher = WatchedHasher(pause=0.01)
    accounts = make(store, fake_time, hasher)

    async def attack() -> list[int]:
        await accounts.sign_up("frank", "Frank", PASSWORD, None)
        return await asyncio.gather(*(outcome(accounts.sign_in("frank", f"guess-{i}", None, "10.0.0.9"))
                                      for i in range(30)))

    answers = run_async(attack)
    assert hasher.verified == 5  # the limit, not one more: the 25 others were refused without a hash
    assert answers.count(401) == 5 and answers.count(429) == 25


def test_hashes_run_a_few_at_once_off_the_loop_and_outside_database_sessions(store: Store,
                                                                             fake_time: FakeTime) -> None:
    hasher = WatchedHasher(store, pause=0.05)
    accounts = make(store, fake_time, hasher, hashes_at_once=2, hashes_waiting=100)

    async def storm() -> list[int]:
        await accounts.sign_up("gina", "Gina", PASSWORD, None)
        return await asyncio.gather(*(outcome(accounts.sign_in("gina", PASSWORD if i % 2 else "wrong-one", None,
                                                               f"10.1.0.{i}")) for i in range(20)))

    answers = run_async(storm)
    assert answers.count(200) == 10 and answers.count(401) == 10
    assert hasher.most <= 2  # never more than two argon2 hashes in memory at once
    assert set(hasher.connections_held) == {0}  # the hashing thread held no database connection
    assert threading.get_ident() not in hasher.threads  # nor was it the event loop's


def test_a_full_hashing_queue_answers_429_with_the_wait(store: Store, fake_time: FakeTime) -> None:
    hasher = WatchedHasher(pause=0.05)
    accounts = make(store, fake_time, hasher, hashes_at_once=1, hashes_waiting=3)

    async def storm() -> list[Any]:
        await accounts.sign_up("hugo", "Hugo", PASSWORD, None)
        return await asyncio.gather(*(accounts.sign_in("hugo", PASSWORD, None, f"10.2.0.{i}") for i in range(10)),
                                    return_exceptions=True)

    answers = run_async(storm)
    refused = [a for a in answers if isinstance(a, AccountError)]
    assert refused and all(a.status == 429 and a.code == "busy" and a.retry_after for a in refused)
    assert len(answers) - len(refused) >= 3


def test_a_strangers_guesses_do_not_lock_the_owner_out(store: Store, fake_time: FakeTime) -> None:
    accounts = make(store, fake_time, WatchedHasher())

    async def play() -> None:
        await accounts.sign_up("ines", "Ines", PASSWORD, None)
        for i in range(5):
            assert await outcome(accounts.sign_in("ines", f"guess-{i}", None, "203.0.113.7")) == 401
        assert await outcome(accounts.sign_in("ines", PASSWORD, None, "203.0.113.7")) == 429  # the stranger waits
        assert await outcome(accounts.sign_in("ines", PASSWORD, None, "198.51.100.1")) == 200  # the owner does not

    run_async(play)


def test_sign_ups_are_limited_per_address(store: Store, fake_time: FakeTime) -> None:
    accounts = make(store, fake_time, WatchedHasher(), signups=3)

    async def play() -> list[int]:
        here = [await outcome(accounts.sign_up(f"user{i}", "", PASSWORD, None, "192.0.2.1")) for i in range(4)]
        return [*here, await outcome(accounts.sign_up("elsewhere", "", PASSWORD, None, "192.0.2.2"))]

    assert run_async(play) == [200, 200, 200, 429, 200]


def test_a_login_name_stays_private_and_a_sign_in_opens_a_new_session(store: Store, fake_time: FakeTime) -> None:
    accounts = make(store, fake_time, WatchedHasher())

    async def play() -> None:
        user, first = await accounts.sign_up("jonas.k", "", PASSWORD, None)
        assert "jonas" not in user.name.lower()  # shown to others: not the login that signs in
        again, second = await accounts.sign_in("jonas.k", PASSWORD, None, "192.0.2.3", first)
        assert again.id == user.id and second != first
        assert accounts.user_for(first) is None and accounts.user_for(second) == user

    run_async(play)


def test_the_default_hash_follows_owasp() -> None:
    params = owasp_hasher()
    assert params.memory_cost == 19 * 1024 and params.time_cost == 2 and params.parallelism == 1
    assert owasp_hasher().hash(PASSWORD).startswith("$argon2id$v=19$m=19456,t=2,p=1$")


@pytest.mark.parametrize("name", [
    "\u3164",  # a Hangul filler: shows as nothing
    "Anna\u200b",  # a zero-width space
    "Z" + "\u0301" * 30,  # a flood of combining marks
    "P\u0430ypal",  # a Cyrillic "а" among Latin letters
    "...",
])
def test_invisible_and_look_alike_names_are_refused(store: Store, fake_time: FakeTime, name: str) -> None:
    accounts = make(store, fake_time, WatchedHasher())
    with pytest.raises(AccountError) as refused:
        run_async(lambda: accounts.sign_up("lena", name, PASSWORD, None))
    assert refused.value.code == "bad_name"


def test_display_names_are_normalised_and_name_one_player(store: Store, fake_time: FakeTime) -> None:
    accounts = make(store, fake_time, WatchedHasher())

    async def play() -> None:
        user, _ = await accounts.sign_up("mara", "\uff2d\uff41\uff52\uff41", PASSWORD, None)  # full-width letters
        assert user.name == "Mara"
        for taken in ("mara", "MARA", "\uff4d\uff41\uff52\uff41"):
            with pytest.raises(AccountError) as refused:
                await accounts.sign_up("other", taken, PASSWORD, None)
            assert refused.value.code == "name_taken"
        other, _ = await accounts.sign_up("other", "Nils", PASSWORD, None)
        with pytest.raises(AccountError):
            accounts.rename(other.id, "maRa")
        assert accounts.rename(user.id, "MARA").name == "MARA"  # one's own name, in other letters

    run_async(play)


class GatheringHasher(PasswordHasher):
    """A cheap argon2id whose hashes wait for each other: every sign-up has passed its checks of the
    login and the name before any of them is written."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=1024, parallelism=1)
        self.barrier: threading.Barrier | None = None  # armed by the test (not for the accounts' own hash)

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        if self.barrier is not None:
            self.barrier.wait()
        return super().hash(password, salt=salt)


def test_two_sign_ups_of_one_name_at_the_same_instant_make_one_account(store: Store, fake_time: FakeTime) -> None:
    hasher = GatheringHasher()
    accounts = make(store, fake_time, hasher, hashes_at_once=4)
    names = ("Zoë", "ZOË", "zoë", "Ｚｏë")  # one name in four spellings
    hasher.barrier = threading.Barrier(len(names), timeout=20)

    async def sign_ups() -> list[Any]:
        return await asyncio.gather(*(accounts.sign_up(f"zoe{i}", name, PASSWORD, None, address=f"10.0.0.{i}")
                                      for i, name in enumerate(names)), return_exceptions=True)

    results = run_async(sign_ups)
    made = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BaseException)]
    assert len(made) == 1, results
    assert all(isinstance(r, AccountError) and r.code == "name_taken" and r.status == 409 for r in refused), refused
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM users")).scalar() == 1


def test_the_database_refuses_a_second_account_of_a_name(store: Store, fake_time: FakeTime) -> None:
    accounts = make(store, fake_time, WatchedHasher())
    run_async(lambda: accounts.sign_up("ines", "Inès", PASSWORD, None))
    with pytest.raises(IntegrityError), store.engine.begin() as conn:  # even past the app's own check
        conn.execute(text("INSERT INTO users (id, login, name, name_key, password_hash, created_ms) "
                          "VALUES ('x', 'other', 'INÈS', :key, 'x', 1)"), {"key": name_key("INÈS")})


def test_migration_0006_renames_later_namesakes_and_keeps_their_names(database_url: str) -> None:
    from alembic import command

    from patience.server.storage.store import alembic_config

    config = alembic_config(database_url)
    command.upgrade(config, "0005")
    store = Store(database_url)
    users = [("u1", "anna", "Anna", 1), ("u2", "anna2", "ANNA", 2), ("u3", "anna3", "Anna 2", 3),
             ("u4", "anna4", "ａｎｎａ", 4), ("u5", "bo", "Bo", 5), ("u6", "long", "L" * 40, 6),
             ("u7", "long2", "l" * 40, 7)]
    try:
        with store.engine.begin() as conn:
            for user_id, login, name, at in users:
                conn.execute(text("INSERT INTO users (id, login, name, password_hash, created_ms) "
                                  "VALUES (:id, :login, :name, 'x', :at)"),
                             {"id": user_id, "login": login, "name": name, "at": at})
        command.upgrade(config, "head")
        with store.engine.connect() as conn:
            rows = {r.id: (r.name, r.renamed_from, r.name_key) for r in
                    conn.execute(text("SELECT id, name, renamed_from, name_key FROM users"))}
        # the oldest keeps the name, and "Anna 2" (a name of its own) stays; the later ones take the next free
        assert rows["u1"] == ("Anna", None, "anna")
        assert rows["u3"] == ("Anna 2", None, "anna 2")
        assert rows["u2"] == ("ANNA 3", "ANNA", "anna 3")
        assert rows["u4"] == ("ａｎｎａ 4", "ａｎｎａ", "anna 4")
        assert rows["u5"] == ("Bo", None, "bo")
        assert rows["u7"] == ("l" * 38 + " 2", "l" * 40, "l" * 38 + " 2")  # still 40 characters at most
        assert find_players(store.engine, "anna") == [("u1", "Anna")]  # a name names one account
        assert find_players(store.engine, "ANNA 3") == [("u2", "ANNA 3")]
        command.downgrade(config, "0005")
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM users")).scalar() == len(users)
    finally:
        store.close()


# -- many addresses against one sign-in ------------------------------------------------------------


async def _guessing(accounts: Accounts, login: str, addresses: list[str], stop: asyncio.Event,
                    tally: collections.Counter[int]) -> None:
    """Wrong passwords from each of ``addresses`` without pause (a little pause after a 429), as a
    script of many addresses does, until ``stop``."""

    async def one(address: str) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            status = await outcome(accounts.sign_in(login, f"guess-{address}-{n}", None, address))
            tally[status] += 1
            await asyncio.sleep(0.05 if status == 429 else 0)

    await asyncio.gather(*(one(address) for address in addresses))


ATTACKERS = [f"127.1.{n // 200}.{1 + n % 200}" for n in range(48)]


@pytest.mark.slow
def test_a_real_user_signs_in_while_48_addresses_guess_wrong(store: Store, fake_time: FakeTime) -> None:
    """The real user, on a browser the account has never seen and an address of their own, gets in at
    every try while 48 addresses send wrong passwords (at the production pace: 5 hashes a second, 32
    waiting). The guessers' addresses have failed before: the user's has not, and goes first."""
    accounts = make(store, fake_time, WatchedHasher(pause=0.01), hashes_at_once=1)

    async def play() -> tuple[list[int], collections.Counter[int]]:
        await accounts.sign_up("victim", "Victim", PASSWORD, None)
        stop, tally = asyncio.Event(), collections.Counter[int]()
        attack = asyncio.create_task(_guessing(accounts, "victim", ATTACKERS, stop, tally))
        await asyncio.sleep(2.0)  # the attack is under way, the queue full
        answers = []
        for _ in range(9):
            answers.append(await outcome(accounts.sign_in("victim", PASSWORD, None, "198.51.100.7")))
            await asyncio.sleep(0.3)
        stop.set()
        await attack
        return answers, tally

    answers, tally = run_async(play)
    assert answers == [200] * 9, answers
    assert tally[401] >= 9 and tally[429] > 0, tally  # the guessers went on being answered and refused


@pytest.mark.slow
def test_a_known_browser_signs_in_from_the_first_second_of_an_attack(store: Store, fake_time: FakeTime) -> None:
    """48 fresh addresses fill the queue before any of them has failed: the real user's browser, which
    the account has signed in on before, goes first all the same."""
    accounts = make(store, fake_time, WatchedHasher(pause=0.01), hashes_at_once=1)
    browser = "b" + "x" * 23

    async def play() -> list[int]:
        await accounts.sign_up("victim", "Victim", PASSWORD, browser)
        stop, tally = asyncio.Event(), collections.Counter[int]()
        attack = asyncio.create_task(_guessing(accounts, "victim", ATTACKERS, stop, tally))
        await asyncio.sleep(0.3)
        answers = []
        for _ in range(4):
            answers.append(await outcome(accounts.sign_in("victim", PASSWORD, browser, "198.51.100.8")))
            await asyncio.sleep(0.2)
        stop.set()
        await attack
        return answers

    assert run_async(play) == [200] * 4


def test_the_addresses_of_one_ipv6_64_count_as_one(store: Store, fake_time: FakeTime) -> None:
    """An IPv6 host has a /64 of addresses to pick from: its failures count together."""
    accounts = make(store, fake_time, WatchedHasher())

    async def play() -> list[int]:
        await accounts.sign_up("ines", "Ines", PASSWORD, None)
        here = [await outcome(accounts.sign_in("ines", f"guess-{i}", None, f"2001:db8:1:2::{i + 1:x}"))
                for i in range(5)]
        here.append(await outcome(accounts.sign_in("ines", PASSWORD, None, "2001:db8:1:2:ffff::9")))
        here.append(await outcome(accounts.sign_in("ines", PASSWORD, None, "2001:db8:1:3::1")))  # another /64
        return here

    assert run_async(play) == [401] * 5 + [429, 200]


def test_the_hashing_queues_are_apart_and_fair() -> None:
    """Sign-ins, sign-ups and tournament passwords wait in queues of their own: a flood of one never
    refuses the others. In a queue, one key (an address, an account) holds at most two places, and a
    try of a better rank (fewer failures behind it) takes the place of a worse one when it is full."""
    hashing = Hashing(WatchedHasher(pause=0.02), at_once=1, waiting=8, rate=20.0, max_wait=60.0)
    digest = hashing.hasher.hash(PASSWORD)

    async def play() -> dict[str, list[Any]]:
        def verify(lane: str, key: str, rank: int = 1) -> Any:
            return asyncio.ensure_future(hashing.verify(digest, PASSWORD, lane=lane, key=key, rank=rank))

        one_key = [verify("tournament", "mallory") for _ in range(10)]  # one account over ten sockets
        many_keys = [verify("tournament", f"account{i}") for i in range(20)]
        signups = [asyncio.ensure_future(hashing.hash(PASSWORD, lane="signup", key=f"10.0.0.{i}")) for i in range(20)]
        flood = [verify("signin", f"10.1.0.{i}", rank=9) for i in range(8)]  # addresses that failed often
        fresh = verify("signin", "198.51.100.7", rank=1)  # the queue is full: it takes a guesser's place
        done = await asyncio.gather(*one_key, *many_keys, *signups, *flood, fresh, return_exceptions=True)
        return {"one_key": done[:10], "many_keys": done[10:30], "signups": done[30:50], "flood": done[50:58],
                "fresh": done[58:]}

    got = run_async(play)

    def refused(answers: list[Any]) -> int:
        assert all(a is True or isinstance(a, str) or (isinstance(a, AccountError) and a.code == "busy")
                   for a in answers), answers
        return sum(isinstance(a, AccountError) for a in answers)

    # one hashed at once (the queues were empty), then two places at most (which newer tries of other
    # accounts, as good, may take: the oldest gives way)
    assert refused(got["one_key"]) >= 7
    assert refused(got["fresh"]) == 0
    assert refused(got["flood"]) == 1  # the worst guesser's place went to the fresh try
    assert refused(got["many_keys"]) > 0 and refused(got["signups"]) > 0  # their own queues were full


def test_the_csrf_key_is_made_once_when_processes_start_together(store: Store, fake_time: FakeTime) -> None:
    """The first pages of a fresh database asked at the same moment, on several processes (or threads):
    one key is written, every one of them uses it (the others once answered 500)."""
    many = [make(store, fake_time, WatchedHasher()) for _ in range(8)]
    barrier = threading.Barrier(len(many))
    keys: list[Any] = []

    def first_page(accounts: Accounts) -> None:
        barrier.wait()
        try:
            keys.append(accounts.csrf_key())
        except Exception as exc:  # what a page would have answered 500 for
            keys.append(exc)

    threads = [threading.Thread(target=first_page, args=(accounts,)) for accounts in many]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == len(many) and len(set(keys)) == 1 and isinstance(keys[0], bytes), keys


def test_sign_ups_are_bounded_on_the_whole_site_and_a_newcomer_still_gets_in(store: Store,
                                                                             fake_time: FakeTime) -> None:
    """A storm from 48 addresses, three sign-ups each in turn: past the site's 30 a minute only an address's
    first account is made (the per-address bound alone let 144 in), and a newcomer from an address of
    their own gets in meanwhile; a refused one does not use up the newcomer's first."""
    accounts = make(store, fake_time, WatchedHasher())

    async def play() -> tuple[collections.Counter[int], list[int]]:
        got: collections.Counter[int] = collections.Counter()
        for round_ in range(3):
            for n in range(48):
                got[await outcome(accounts.sign_up(f"bot{round_}x{n}", "", PASSWORD, None, f"198.18.0.{n}"))] += 1
        newcomer = [await outcome(accounts.sign_up("bot0x0", "", PASSWORD, None, "192.0.2.50")),  # a taken login
                    await outcome(accounts.sign_up("nadia", "Nadia", PASSWORD, None, "192.0.2.50"))]
        return got, newcomer

    got, newcomer = run_async(play)
    assert got == {200: 48, 429: 96}, got
    assert newcomer == [409, 200]


def test_a_sign_up_without_a_name_draws_another_player_name_while_its_is_taken(
        store: Store, fake_time: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sign-up without a display name is "Player" and a drawn number; a number another account has is
    drawn again (before, the sign-up failed with "the name is another player's": at 100,000 accounts, one
    draw in nine), also when another sign-up takes it between the check and the insert. A name the player
    chose and another has is still refused."""
    from patience.server.accounts import service

    accounts = make(store, fake_time, WatchedHasher())
    draws = iter(["Player 111111", "Player 111111", "Player 222222", "Player 222222", "Player 333333"])
    monkeypatch.setattr(service, "_player_name", lambda: next(draws))
    name_free = accounts.rows.name_free

    async def play() -> list[Any]:
        first, _ = await accounts.sign_up("first", "", PASSWORD, None, "192.0.2.1")
        second, _ = await accounts.sign_up("second", "", PASSWORD, None, "192.0.2.2")
        # the third's draw passes the check (as if another sign-up took it just after), and the insert refuses it
        accounts.rows.name_free = lambda name: None  # type: ignore[method-assign]
        third, _ = await accounts.sign_up("third", "", PASSWORD, None, "192.0.2.3")
        accounts.rows.name_free = name_free  # type: ignore[method-assign]
        chosen = await outcome(accounts.sign_up("fourth", "Player 333333", PASSWORD, None, "192.0.2.4"))
        return [first.name, second.name, third.name, chosen]

    assert run_async(play) == ["Player 111111", "Player 222222", "Player 333333", 409]


def test_a_storm_refused_by_the_busy_hashing_does_not_spend_the_newcomers_share(store: Store,
                                                                                 fake_time: FakeTime) -> None:
    """Past the site's bound, a storm's sign-ups from addresses still new each pass the site's count, then
    are refused by the hashing queue (busy): the count is given back with the address's newness, so the
    storm cannot spend the newcomers' share with sign-ups that make no account (before, 96 busy refusals
    of 48 addresses left every newcomer after them refused for a minute)."""
    accounts = make(store, fake_time, WatchedHasher(), newcomers=20)
    hash_for_real = accounts.hashing.hash

    async def hash_busy_for_the_storm(password: str, *, lane: str, key: str) -> str:
        if key.startswith("198.18."):
            raise AccountError("busy", "the server is busy checking passwords: try again in 1 s", 429, 1)
        return await hash_for_real(password, lane=lane, key=key)

    accounts.hashing.hash = hash_busy_for_the_storm  # type: ignore[method-assign]

    async def play() -> tuple[list[int], collections.Counter[int], list[int]]:
        first = [await outcome(accounts.sign_up(f"early{n}", "", PASSWORD, None, f"203.0.113.{n}"))
                 for n in range(30)]  # the site's 30 of this minute
        storm: collections.Counter[int] = collections.Counter()
        for round_ in range(2):
            for n in range(48):
                storm[await outcome(accounts.sign_up(f"bot{round_}x{n}", "", PASSWORD, None, f"198.18.0.{n}"))] += 1
        newcomers = [await outcome(accounts.sign_up(f"newcomer{n}", "", PASSWORD, None, f"192.0.2.{n}"))
                     for n in range(5)]
        return first, storm, newcomers

    first, storm, newcomers = run_async(play)
    assert first == [200] * 30 and storm == {429: 96}, (first, storm)
    assert newcomers == [200] * 5


def test_hashes_run_ten_nicer_than_a_server_started_with_nice() -> None:
    """A server started with ``nice`` (as the benchmarks are) still has its hashing threads yield to its
    event loop: their priority is the process's own plus 10, not a fixed 10."""
    script = ("import os, threading; os.nice(4)\n"
              "from patience.server.accounts import Hashing, owasp_hasher\n"
              "hashing = Hashing(owasp_hasher())\n"
              "tid = hashing.threads.submit(threading.get_native_id).result()\n"
              "print(os.getpriority(os.PRIO_PROCESS, 0), os.getpriority(os.PRIO_PROCESS, tid))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    process, thread = map(int, done.stdout.split())
    assert thread == min(19, process + 10), done.stdout
