"""The bus the server processes share: the same behaviour from the memory bus and from the real
Redis server on this machine (started by the fixture if it is down): messages, hashes, leases
with one holder at a time, locks, and sliding-window rate limits across processes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from helpers import run_async
from patience.server.bus import Bus, BusError, MemoryBus, make_bus, stop_tasks
from patience.server.bus.redisbus import RedisBus

Factory = Callable[[str], Awaitable[Bus]]


def run(test: Callable[[Factory], Awaitable[None]], kind: str, redis_url: str, prefix: str) -> None:
    """Run ``test`` with a factory of buses of ``kind`` that share one arena (memory: one bus for all)."""

    async def main() -> None:
        made: list[Bus] = []
        shared = MemoryBus("solo")

        async def factory(node: str) -> Bus:
            if kind == "memory":
                return shared
            bus = RedisBus(redis_url, node, prefix=prefix)
            await bus.start()
            made.append(bus)
            return bus

        try:
            await test(factory)
        finally:
            for bus in made:
                await bus.close()

    run_async(main)


@pytest.fixture(params=["memory", "redis"])
def arena(request: pytest.FixtureRequest, bus_prefix: str) -> Callable[[Callable[[Factory], Awaitable[None]]], None]:
    kind = request.param
    url = request.getfixturevalue("redis_url") if kind == "redis" else ""
    return lambda test: run(test, kind, url, bus_prefix)


async def until(check: Callable[[], bool], seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not check():
            await asyncio.sleep(0.005)


def test_messages_reach_every_subscriber_in_order(arena: Any) -> None:
    async def test(make: Factory) -> None:
        a, b = await make("a"), await make("b")
        got_a: list[bytes] = []
        got_b: list[bytes] = []
        await a.subscribe("match:m1", got_a.append)
        await b.subscribe("match:m1", got_b.append)
        for i in range(50):
            await a.publish("match:m1", b"%d" % i)
        await until(lambda: len(got_a) == 50 and len(got_b) == 50)
        assert got_a == got_b == [b"%d" % i for i in range(50)]
        await b.unsubscribe("match:m1", got_b.append)
        await a.publish("match:m1", b"last")
        await until(lambda: len(got_a) == 51)
        await asyncio.sleep(0.05)
        assert len(got_b) == 50

    arena(test)


def test_hashes_are_shared(arena: Any) -> None:
    async def test(make: Factory) -> None:
        a, b = await make("a"), await make("b")
        await a.hset("pool:reloaded/standard/300", "u1", b"1500")
        await b.hset("pool:reloaded/standard/300", "u2", b"1620")
        assert await a.hgetall("pool:reloaded/standard/300") == {"u1": b"1500", "u2": b"1620"}
        assert await b.hdel("pool:reloaded/standard/300", "u1", "nobody") == 1
        assert await a.hgetall("pool:reloaded/standard/300") == {"u2": b"1620"}
        assert await a.hgetall("pool:nothing") == {}
        assert await b.hlen("pool:reloaded/standard/300") == 1 and await b.hlen("pool:nothing") == 0
        assert await a.hmget("pool:reloaded/standard/300", ["u2", "u1", "u2"]) == [b"1620", None, b"1620"]
        assert await a.hmget("pool:nothing", ["u2"]) == [None] and await a.hmget("pool:nothing", []) == []
        assert await b.hget("pool:reloaded/standard/300", "u2") == b"1620"
        assert await b.hget("pool:reloaded/standard/300", "u1") is None

    arena(test)


def test_a_lease_has_one_holder_until_it_lapses_or_is_released(arena: Any) -> None:
    async def test(make: Factory) -> None:
        a, b = await make("a"), await make("b")
        token = await a.acquire("lease:match:m1", 0.3)
        assert token is not None and await b.acquire("lease:match:m1", 0.3) is None
        assert await b.holder("lease:match:m1") == a.node
        assert not await b.renew("lease:match:m1", "b/forged", 5.0)  # only with the token
        await b.release("lease:match:m1", "b/forged")
        assert await a.renew("lease:match:m1", token, 0.3)
        await a.release("lease:match:m1", token)
        assert await a.holder("lease:match:m1") is None
        again = await b.acquire("lease:match:m1", 0.2)
        assert again is not None
        if isinstance(a, MemoryBus):
            return  # the memory bus's clock is the process's: the lapse is shown on Redis's
        await asyncio.sleep(0.3)  # b stops renewing (it died, say): the lease lapses
        assert await a.holder("lease:match:m1") is None
        assert not await b.renew("lease:match:m1", again, 1.0)
        assert await a.acquire("lease:match:m1", 1.0) is not None

    arena(test)


def test_many_leases_are_renewed_at_once_and_only_with_their_tokens(arena: Any) -> None:
    async def test(make: Factory) -> None:
        a, b = await make("a"), await make("b")
        mine = {f"lease:m{i}": await a.acquire(f"lease:m{i}", 5.0) for i in range(700)}  # two batches on Redis
        theirs = await b.acquire("lease:other", 5.0)
        assert theirs is not None and all(mine.values())
        asked = {**{k: v for k, v in mine.items() if v}, "lease:other": "a/forged", "lease:none": "a/x"}
        assert await a.renew_many(asked, 5.0) == set(mine)

    arena(test)


def test_a_lock_lets_one_worker_in_at_a_time(arena: Any) -> None:
    async def test(make: Factory) -> None:
        buses = [await make(f"n{i}") for i in range(3)]
        inside = 0
        most = 0
        done = 0

        async def work(bus: Bus) -> None:
            nonlocal inside, most, done
            for _ in range(10):
                async with bus.lock("lock:pool", ttl_s=2.0):
                    inside += 1
                    most = max(most, inside)
                    await asyncio.sleep(0.001)
                    inside -= 1
                    done += 1

        await asyncio.gather(*(work(bus) for bus in buses for _ in range(2)))
        assert most == 1 and done == 60

    arena(test)


def test_a_rate_limit_counts_every_process(arena: Any) -> None:
    async def test(make: Factory) -> None:
        a, b = await make("a"), await make("b")
        waits = [await (a if i % 2 else b).hit("rate:signin:frank", 60.0, 5) for i in range(8)]
        assert waits[:5] == [0.0] * 5
        assert all(55.0 < w <= 60.0 for w in waits[5:])  # told how long to wait, nothing counted
        assert await a.hit("rate:signin:other", 60.0, 5) == 0.0

    arena(test)


def test_a_hit_taken_back_frees_its_place_and_only_its_own(arena: Any) -> None:
    async def test(make: Factory) -> None:
        a, b = await make("a"), await make("b")
        assert [await a.hit("rate:site", 60.0, 2, f"try{i}") for i in range(2)] == [0.0, 0.0]
        assert await b.hit("rate:site", 60.0, 2, "try2") > 0.0  # full: nothing counted
        await b.unhit("rate:site", "try2")  # never counted: takes nothing back
        assert await b.hit("rate:site", 60.0, 2, "try3") > 0.0
        await b.unhit("rate:site", "try0")  # what it was counted for did not happen, on another process
        assert await a.hit("rate:site", 60.0, 2, "try4") == 0.0
        assert await a.hit("rate:site", 60.0, 2, "try5") > 0.0

    arena(test)


def test_concurrent_hits_never_pass_the_limit(arena: Any) -> None:
    async def test(make: Factory) -> None:
        buses = [await make(f"n{i}") for i in range(3)]
        waits = await asyncio.gather(*(buses[i % 3].hit("rate:race", 60.0, 5) for i in range(30)))
        assert sum(1 for w in waits if w == 0.0) == 5

    arena(test)


def test_a_wrong_or_unreachable_bus_is_a_clear_error() -> None:
    with pytest.raises(BusError, match="must start with redis://"):
        make_bus("http://127.0.0.1:6379")
    assert isinstance(make_bus(None), MemoryBus)

    async def main() -> None:
        bus = make_bus("redis://127.0.0.1:1/0")
        with pytest.raises(BusError, match="cannot reach Redis"):
            await bus.start()
        await bus.close()

    run_async(main)


def test_loops_of_bus_commands_stop_when_asked(arena: Any) -> None:
    """A server stopping cancels its loops (the clocks, the leases' renewal) and waits for their end. On
    Redis the client may lose a cancellation that comes during a command (the command finishes, the loop
    goes on): stop_tasks cancels again until each loop has ended, where one cancel and a gather could
    wait for ever."""
    async def test(make: Factory) -> None:
        bus = await make("a")

        async def clock(n: int) -> None:  # as the arena's: commands of the bus in a loop, failures said
            while True:
                try:
                    await bus.acquire(f"lease:loop{n}", 5.0)
                    await bus.holder(f"lease:loop{n}")
                except Exception:  # pragma: no cover - said and tried again
                    pass
                await asyncio.sleep(0)

        loops = [asyncio.create_task(clock(n)) for n in range(20)]
        await asyncio.sleep(0.05)
        async with asyncio.timeout(10):
            await stop_tasks(loops, again_s=0.05)
        assert all(task.cancelled() for task in loops)

    arena(test)


def test_a_name_is_one_key_whatever_holds_it(arena: Any) -> None:
    """On Redis a lease, a hash and a counter of one name are one key: both buses refuse a lease on a
    name a counter or a hash holds (the sign-in lock and rate counter of an address once shared one)."""
    async def test(make: Factory) -> None:
        bus = await make("a")
        assert await bus.hit("x:counted", 60.0, 5) == 0.0
        assert await bus.acquire("x:counted", 5.0) is None
        await bus.hset("x:hash", "f", b"1")
        assert await bus.acquire("x:hash", 5.0) is None
        assert await bus.acquire("x:free", 5.0) is not None
    arena(test)


def test_a_claim_takes_every_field_or_none(arena: Any) -> None:
    """Two processes claiming overlapping pairs of one pool at once: each player is taken once."""
    async def test(make: Factory) -> None:
        a, b = await make("a"), await make("b")
        for user in ("u1", "u2", "u3", "u4"):
            await a.hset("pool:x", user, user.encode())
        assert await a.claim("pool:x", "u1", "nobody") is None
        assert await b.hgetall("pool:x") == {u: u.encode() for u in ("u1", "u2", "u3", "u4")}  # nothing taken
        got = await asyncio.gather(a.claim("pool:x", "u1", "u2"), b.claim("pool:x", "u2", "u3"),
                                   a.claim("pool:x", "u3", "u4"), b.claim("pool:x", "u4", "u1"))
        taken = [user for values in got if values is not None for user in values]
        assert sorted(taken) == sorted(set(taken)) and len(taken) == 4  # two claims won, no player twice
        assert await a.hgetall("pool:x") == {}
    arena(test)


def test_a_claim_leaves_a_player_who_plays_and_clears_the_index(arena: Any) -> None:
    """The pairer's claim: a pair is taken out of its pool and out of the index of who waits where,
    unless one of them plays a match already: that one leaves the pool (and the index), the other
    waits on; the index entry of a player who waits in another pool is left alone."""
    async def test(make: Factory) -> None:
        a, b = await make("a"), await make("b")
        for user in ("u1", "u2", "u3", "u4"):
            await a.hset("pool:x", user, user.encode())
            await a.hset("seeking", user, b"x")
        await a.hset("seeking", "u5", b"y")  # waits in another pool
        await a.hset("busy", "u3", b"m1")
        assert await b.claim("pool:x", "u3", "u4", unless="busy", index=("seeking", b"x")) is None
        assert sorted(await a.hgetall("pool:x")) == ["u1", "u2", "u4"]  # u3 plays: out; u4 waits on
        assert sorted(await a.hgetall("seeking")) == ["u1", "u2", "u4", "u5"]
        assert await a.claim("pool:x", "u1", "u2", unless="busy", index=("seeking", b"x")) == [b"u1", b"u2"]
        assert await b.claim("pool:x", "u2", "u4", unless="busy", index=("seeking", b"x")) is None  # u2 is gone
        assert await a.hgetall("pool:x") == {"u4": b"u4"}
        assert await a.hgetall("seeking") == {"u4": b"x", "u5": b"y"}
        await a.hset("seeking", "u4", b"y")  # u4 has moved to pool y: its index entry is not this pool's
        await a.hset("pool:x", "u6", b"u6")
        assert await a.claim("pool:x", "u4", "u6", unless="busy", index=("seeking", b"x")) == [b"u4", b"u6"]
        assert await a.hgetall("seeking") == {"u4": b"y", "u5": b"y"}
        assert await a.hgetall("busy") == {"u3": b"m1"}  # the claim never touches who plays
    arena(test)


def test_the_commands_of_one_turn_share_one_round_trip_on_redis(redis_url: str, bus_prefix: str) -> None:
    """Leases taken, asked after, renewed and released, hashes read whole and rate limits hit by many
    tasks at once go to Redis together: one round trip (a pipeline) for the commands of a turn of the
    event loop, not a pooled connection and a round trip each (a burst of seeks makes a thousand
    matches, each with its lease)."""

    async def main() -> None:
        bus = RedisBus(redis_url, "a", prefix=bus_prefix)
        await bus.start()
        try:
            await bus.hset("h", "x", b"1")
            before = bus.round_trips
            tokens = await asyncio.gather(*(bus.acquire(f"lease:t{i}", 5.0) for i in range(200)))
            assert all(tokens) and bus.round_trips - before == 1
            before = bus.round_trips
            holders = await asyncio.gather(*(bus.holder(f"lease:t{i}") for i in range(200)), bus.hgetall("h"),
                                           *(bus.hit(f"rate:t{i}", 1.0, 5) for i in range(50)))
            assert holders[:200] == ["a"] * 200 and holders[200] == {"x": b"1"} and holders[201:] == [0.0] * 50
            assert bus.round_trips - before == 1
            before = bus.round_trips
            leases = {f"lease:t{i}": token for i, token in enumerate(tokens) if token is not None}
            kept, *_ = await asyncio.gather(bus.renew_many(leases, 5.0),
                                            *(bus.release(f"lease:t{i}", leases[f"lease:t{i}"]) for i in range(100)))
            assert kept >= {f"lease:t{i}" for i in range(100, 200)} and bus.round_trips - before == 1
            assert await bus.holder("lease:t0") is None and await bus.holder("lease:t100") == "a"
        finally:
            await bus.close()

    run_async(main)


def test_a_redis_that_stops_answering_fails_each_round_trip_in_bounded_time(monkeypatch: pytest.MonkeyPatch,
                                                                             bus_prefix: str) -> None:
    """A Redis that takes commands and never answers (a hung server, a dead link the kernel has not
    noticed yet) fails every command of the round trip with a clear error within the bus's bound,
    rather than leaving the tasks that sent them waiting for ever; the next round trip tries again."""
    import patience.server.bus.redisbus as redisbus

    monkeypatch.setattr(redisbus, "COMMAND_SECONDS", 0.3)

    async def main() -> None:
        got: list[bytes] = []

        async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while data := await reader.read(65536):  # reads every command, answers none
                got.append(data)
            writer.close()

        server = await asyncio.start_server(mute, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        bus = RedisBus(f"redis://127.0.0.1:{port}/0", "a", prefix=bus_prefix)
        try:
            started = asyncio.get_running_loop().time()
            results = await asyncio.gather(bus.hget("h", "x"), bus.acquire("lease:x", 1.0), bus.hgetall("h"),
                                           return_exceptions=True)
            took = asyncio.get_running_loop().time() - started
            assert all(isinstance(r, BusError) and "did not answer" in str(r) for r in results), results
            assert took < 2.0 and got  # the commands were sent, and given up on in bounded time
            with pytest.raises(BusError, match="did not answer"):
                await bus.hset("h", "x", b"1")
        finally:
            await bus.close()
            server.close()

    run_async(main)
