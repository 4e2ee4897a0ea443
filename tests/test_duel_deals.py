"""Duel deals nobody can compute: the keyed shuffle, the commitment to a deal key, the attack of
a player who deals every published and every small seed to find the match's deal from the first
message, and the server's private stock of deals proved winnable."""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import secrets
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_processes import Player as RealPlayer
from arena_processes import ServeProcess
from helpers import FakeTime, run_async
from patience.duel import FORMATS, LIMITS, Format, Match, commitment, verify_commitment, verify_match
from patience.errors import BadInputError, RecordError
from patience.games import get_game
from patience.rng import KeyedStream, check_seed, is_deal_key, new_deal_key, shuffled
from patience.server import create_app
from patience.server.arena.dealstock import DealStock, add_deal, prove, stock_counts, take_deal, variant_of
from patience.server.storage.store import Store
from patience.session import ManualClock
from patience.solve import solve_deal
from patience.solve.search import Budget, Status
from patience.solve.winnable import seeds as listed_seeds
from test_server_duel import FAST_HASH, arena_of, end_of, pair, running

DUEL_VARIANTS = [(game, variant) for game, variants in FORMATS.items() for variant in variants]
LOW_SEEDS = 3000  # every game number below this is tried by the attack (and every listed one)


# -- the keyed shuffle ---------------------------------------------------------------------------


def test_the_keyed_stream_is_blake2b_of_the_salt_and_a_counter() -> None:
    key = bytes(range(32))
    stream = KeyedStream(key, "reloaded")
    words = [stream.next64() for _ in range(17)]  # three blocks
    expected = []
    for counter in range(3):
        block = hashlib.blake2b(b"reloaded|" + counter.to_bytes(8, "big"), key=key).digest()
        expected += [int.from_bytes(block[i:i + 8], "big") for i in range(0, 64, 8)]
    assert words == expected[:17]


def test_deal_keys_are_256_random_bits_and_read_as_seeds() -> None:
    keys = {new_deal_key() for _ in range(100)}
    assert len(keys) == 100 and all(is_deal_key(k) for k in keys)
    key = next(iter(keys))
    assert check_seed(key.upper()) == key and check_seed(f" {key} ") == key
    assert check_seed("12") == 12 and check_seed(7) == 7
    for bad in (key[:-1], key + "0", "g" * 64, "-" + key[1:], "0x" + key[2:]):
        with pytest.raises(BadInputError, match="deal key of 64 hex digits"):
            check_seed(bad)


def test_a_key_deals_the_same_everywhere_and_other_keys_deal_otherwise() -> None:
    key = new_deal_key()
    for game, variant in DUEL_VARIANTS:
        options = Format(game, variant, 300).options()
        assert str(get_game(game).deal(key, options)) == str(get_game(game).deal(key, options))
    deals = {tuple(shuffled(list(range(52)), new_deal_key(), "reloaded")) for _ in range(200)}
    assert len(deals) == 200


def test_the_keyed_shuffle_puts_every_card_everywhere_alike() -> None:
    """Where card 0 of 8 lands over 8,000 keys: a chi-square test at the 0.1 % level (7 degrees of freedom)."""
    counts = collections.Counter(shuffled(list(range(8)), hashlib.sha256(b"%d" % i).hexdigest()).index(0)
                                 for i in range(8000))
    chi2 = sum((counts[k] - 1000) ** 2 / 1000 for k in range(8))
    assert chi2 < 24.3, counts


@settings(max_examples=30, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.sampled_from(["teppich", "reloaded", "faecher"]))
def test_a_keyed_shuffle_is_a_permutation(key: bytes, salt: str) -> None:
    assert sorted(shuffled(list(range(52)), key.hex(), salt)) == list(range(52))


# -- the commitment to a deal key ----------------------------------------------------------------


def test_the_commitment_binds_game_options_and_deal_key() -> None:
    key = new_deal_key()
    digest = commitment("reloaded", {"time_limit": 600}, key)
    text = f'patience-duel-v2|reloaded|{{"time_limit":600}}|{key}'.encode()
    assert digest == hashlib.sha256(text).hexdigest()  # what the README tells players to check by hand
    assert verify_commitment(digest, "reloaded", {"time_limit": 600}, key)
    other_key = key[:-1] + ("1" if key[-1] == "0" else "0")
    for other in [("faecher", {"time_limit": 600}, key), ("reloaded", {"time_limit": 300}, key),
                  ("reloaded", {"time_limit": 600}, other_key)]:
        assert not verify_commitment(digest, *other)


@pytest.mark.parametrize(("game", "variant"), DUEL_VARIANTS)
def test_a_match_dealt_from_a_key_verifies_and_a_wrong_key_does_not(game: str, variant: str) -> None:
    clock = ManualClock()
    key = new_deal_key()
    match = Match("m-key", Format(game, variant, 300), key, clock=clock)
    assert match.nonce == ""
    assert match.sessions[0].state.position() == get_game(game).deal(key, match.options).position()
    match.act(0, "giveup")
    clock.advance(1)
    match.act(1, "giveup")
    record = match.record()
    assert record["version"] == 2 and record["seed"] == key and record["nonce"] == ""
    assert verify_match(record) == match.result()
    forged = {**record, "seed": new_deal_key()}
    with pytest.raises(RecordError, match="does not open the commitment"):
        verify_match(forged)
    live = Match("m-live", Format(game, variant, 300), key, clock=clock).record()
    assert "seed" not in live and key not in str(live)
    with pytest.raises(RecordError, match="no deal key yet"):
        verify_match(live)


# -- the attack: find the deal from the first message -------------------------------------------


def candidates(game: str, options: dict[str, Any]) -> list[int]:
    """Every seed an attacker would try first: the published winnable list and all small numbers."""
    try:
        listed = listed_seeds(game, options)
    except BadInputError:
        listed = []
    return sorted(set(listed) | set(range(LOW_SEEDS)))


@pytest.fixture
def real_app(tmp_path: Path, fake_time: FakeTime) -> Any:
    """The app as it deals in earnest: fresh secret keys (no stock, so no solver process)."""
    with running(create_app(data_dir=tmp_path, now=fake_time, wall=fake_time, tick_seconds=0.02,
                            save_seconds=0.05, password_hasher=FAST_HASH)) as application:
        yield application


@pytest.mark.slow
@pytest.mark.parametrize(("game", "variant"), DUEL_VARIANTS)
def test_no_listed_or_low_seed_reproduces_the_table_of_the_first_duel_message(
        real_app: Any, game: str, variant: str) -> None:
    fmt = Format(game, variant, LIMITS[0])
    a, b, live = pair(real_app, f"{game[:4]}{variant[:4]}a", f"{game[:4]}{variant[:4]}b", fmt.key)
    start = next(m for m in map(json.loads, a.raw) if m["t"] == "duel")["d"]
    seen = start["table"]["piles"]
    assert "seed" not in start and start["end"] is None
    cls = get_game(game)
    options = fmt.options()
    tried = candidates(game, options)
    assert len(tried) >= LOW_SEEDS
    for seed in tried:
        assert cls.deal(seed, options).view()["piles"] != seen, f"seed {seed} reproduces the duel's deal"
    # the deal is the one its key opens at the end, and nothing the players saw told them the key
    key = live.match.seed
    assert is_deal_key(key) and not any(key in text for text in a.raw + b.raw)
    assert cls.deal(key, options).view()["piles"] == seen


# -- the private stock of proved deals -----------------------------------------------------------


def test_taking_a_deal_deletes_it_and_two_takers_never_share_one(database_url: str) -> None:
    store = Store(database_url)
    store.migrate()
    try:
        keys = [new_deal_key() for _ in range(40)]
        for key in keys:
            add_deal(store.engine, "faecher/standard", key, 1)
        add_deal(store.engine, "faecher/standard", keys[0], 1)  # the same key again is kept once
        assert stock_counts(store.engine)["faecher/standard"] == 40
        taken: list[str | None] = []
        lock = threading.Lock()

        def taker() -> None:
            while True:
                key = take_deal(store.engine, "faecher/standard")
                with lock:
                    taken.append(key)
                if key is None:
                    return

        threads = [threading.Thread(target=taker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        got = [k for k in taken if k is not None]
        assert sorted(got) == sorted(keys)  # every key once, none twice, none lost
        assert stock_counts(store.engine)["faecher/standard"] == 0
        assert take_deal(store.engine, "faecher/standard") is None
    finally:
        store.close()


def test_prove_tells_winnable_keys_from_the_others() -> None:
    key = new_deal_key()
    proved, nodes = prove("faecher/standard", key, 5.0)
    solution = solve_deal("faecher", key, {}, Budget(seconds=5.0))
    assert proved == (solution.status is Status.WON) and nodes > 0


@pytest.mark.slow
def test_the_stock_fills_with_proved_deals_in_the_background(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'stock.sqlite3'}")
    store.migrate()
    stock = DealStock(store, 3, variants=["faecher/standard"])

    async def fill() -> None:
        task = asyncio.create_task(stock.run())
        try:
            async with asyncio.timeout(120):
                while stock_counts(store.engine)["faecher/standard"] < 3:
                    await asyncio.sleep(0.1)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    try:
        run_async(fill)
        assert stock.proved >= 3 and stock_counts(store.engine)["teppich/waste"] == 0  # only what it was asked
        fmt = Format("faecher", "standard", 300)
        for _ in range(3):
            key, proved = run_async(lambda: stock.take(fmt))
            assert proved and is_deal_key(key)
            assert solve_deal("faecher", key, {}, Budget(seconds=10.0)).status is Status.WON  # really winnable
        key, proved = run_async(lambda: stock.take(fmt))  # the stock is empty: a fresh key, not proved
        assert not proved and is_deal_key(key)
    finally:
        store.close()


@pytest.mark.slow
def test_a_match_is_dealt_from_the_stock_and_says_so(tmp_path: Path, fake_time: FakeTime) -> None:
    stored = Store(f"sqlite:///{tmp_path / 'patience.sqlite3'}")
    stored.migrate()
    key = new_deal_key()
    add_deal(stored.engine, variant_of(Format("faecher", "standard", 300)), key, 1)
    stored.close()
    app = create_app(data_dir=tmp_path, now=fake_time, wall=fake_time, tick_seconds=0.02, save_seconds=0.05,
                     password_hasher=FAST_HASH, deal_stock=1)
    with running(app) as application:
        a, b, live = pair(application, "stocka", "stockb", "faecher/standard/300")
        assert live.match.seed == key and live.match.proved
        for page in (a, b):
            page.intent("giveup")
        end = end_of(a)["end"]
        assert end["seed"] == key and end["proved"] is True
        record = a.client.get(f"/api/matches/{live.id}").json()["record"]
        assert record["proved"] is True and verify_match(record)
        assert arena_of(application).deals.target == 1


@pytest.mark.slow
def test_the_attack_fails_against_a_running_patience_serve(tmp_path: Path) -> None:
    """The same attack on a real ``patience serve`` process, as a player's script would make it."""
    server = ServeProcess(f"sqlite:///{tmp_path / 'arena.sqlite3'}", None, tmp_path, "attacked")
    try:
        server.wait_ready()
        tag = secrets.token_hex(3)
        anna, bruno = RealPlayer(server.url, f"anna{tag}"), RealPlayer(server.url, f"bruno{tag}")
        for player in (anna, bruno):
            player.open()
        fmt = Format("reloaded", "standard", LIMITS[0])
        anna.seek(fmt.key)
        anna.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == fmt.key)
        bruno.seek(fmt.key)
        start = bruno.until(lambda m: m["t"] == "duel")["d"]
        anna.until(lambda m: m["t"] == "duel")  # her page counts down too
        seen = start["table"]["piles"]
        options = fmt.options()
        for seed in candidates("reloaded", options):
            assert get_game("reloaded").deal(seed, options).view()["piles"] != seen, f"seed {seed} found the deal"
        anna.intent("giveup")
        end = bruno.intent("giveup")["d"]["end"]  # the last give-up ends the match
        key = end["seed"]  # revealed at the end: now it opens the commitment and deals what was seen
        assert is_deal_key(key) and verify_commitment(start["commitment"], "reloaded", start["options"], key)
        assert get_game("reloaded").deal(key, options).view()["piles"] == seen
        for player in (anna, bruno):
            player.close()
    finally:
        server.stop()
