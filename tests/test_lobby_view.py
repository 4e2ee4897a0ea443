"""The lobby's view under a burst (patience.server.arena.view): pages that ask at one time share one
reading begun after they asked; a large pool is counted and named from the pairer's last wave while
that is fresh; a process tells its lobby pages at most one view at a time, the newest, spaced by
how many pages it has; and thousands online are read whole only every few seconds.

Everything runs on one process's memory bus, with the clocks the view and the pools take moved by
the test (and, for the telling, the event loop's own clock)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from helpers import FakeTime, run_async
from patience.duel import Format
from patience.ratings import Rating
from patience.server.accounts import User
from patience.server.arena import view as view_module
from patience.server.arena.nodes import Nodes
from patience.server.arena.pools import FORMAT_KEYS, Pools, Side
from patience.server.arena.view import (
    ONLINE_SECONDS,
    POOL_SHOWN,
    READ_WHOLE,
    SNAPSHOT_SECONDS,
    LobbyView,
    Summary,
)
from patience.server.bus import MemoryBus

NODE = "n1"
BIG = FORMAT_KEYS[0]
SMALL = FORMAT_KEYS[1]


class Lobby:
    """One process's pools and lobby view on a memory bus, its clocks moved by the test."""

    def __init__(self) -> None:
        self.now = FakeTime(1000.0)  # the view's clock (monotonic)
        self.wall = FakeTime(1_700_000_000.0)  # the pools' clock (shared by processes)
        self.bus = MemoryBus(NODE)
        self.nodes = Nodes(self.bus, self.now)
        self.made: list[tuple[str, str]] = []
        self.pools = Pools(self.bus, self.nodes, self.wall, self._paired, self._changed)
        self.view = LobbyView(self.bus, self.nodes, self.pools, self.now)

    async def _paired(self, fmt: Format, a: Side, b: Side) -> None:
        self.made.append((a.user, b.user))

    async def _changed(self) -> None:
        await self.bus.publish("lobby", b"")

    async def seek(self, user: str, rating: float, key: str = BIG) -> None:
        side = Side(user, f"Name {user}", Rating(rating), NODE, f"page-{user}")
        await self.pools.seek(side, Format.from_key(key))


def run(test: Callable[[Lobby], Awaitable[None]]) -> None:
    async def main() -> None:
        await test(Lobby())

    run_async(main)


def pool_in(summary: Summary, key: str) -> dict[str, Any]:
    found: dict[str, Any] = next(p for p in msgspec.json.decode(summary.infos) if p["format"] == key)
    return found


def named(summary: Summary, key: str) -> list[str]:
    return [player["id"] for player in pool_in(summary, key)["players"]]


def spy(owner: Any, name: str) -> list[tuple[Any, ...]]:
    """Record the arguments of every call of the coroutine method ``owner.name`` (still called)."""
    calls: list[tuple[Any, ...]] = []
    original = getattr(owner, name)

    async def recorded(*args: Any) -> Any:
        calls.append(args)
        return await original(*args)

    setattr(owner, name, recorded)
    return calls


async def settle() -> None:
    """Let what is due on the event loop run (timers due, the tasks they start)."""
    for _ in range(5):
        await asyncio.sleep(0)


# -- pages asking at one time share one reading ---------------------------------------------------


def test_pages_asking_during_a_reading_share_the_next_one_which_sees_what_changed_meanwhile() -> None:
    async def test(lobby: Lobby) -> None:
        view = lobby.view
        original = view._summary
        began = [asyncio.Event() for _ in range(4)]
        release = [asyncio.Event() for _ in range(4)]
        readings: list[int] = []

        async def held() -> Summary:  # reads the arena, then stays "going on" until released
            n = len(readings)
            readings.append(n)
            summary = await original()
            began[n].set()
            await release[n].wait()
            return summary

        view._summary = held  # type: ignore[method-assign]

        first = asyncio.create_task(view.read())
        await asyncio.wait_for(began[0].wait(), 2)  # the first reading has read the arena (nobody waits) and goes on
        await lobby.seek("ua", 1500)
        batch1 = [asyncio.create_task(view.read()) for _ in range(50)]
        await settle()
        assert len(readings) == 1  # none of the 50 started a reading of its own
        batch1[0].cancel()  # a page that goes away does not cancel the reading the others share

        release[0].set()
        await asyncio.wait_for(began[1].wait(), 2)  # the one reading of the 50 began after the first ended
        await lobby.seek("ub", 3000)  # comes during the second reading: not in it
        batch2 = [asyncio.create_task(view.read()) for _ in range(30)]
        await settle()
        assert len(readings) == 2

        release[1].set()
        release[2].set()
        before, got1, got2 = await asyncio.wait_for(asyncio.gather(
            first, asyncio.gather(*batch1[1:]), asyncio.gather(*batch2)), 2)
        assert batch1[0].cancelled()
        assert len(readings) == 3  # 81 callers, three readings

        assert pool_in(before, BIG)["waiting"] == 0
        assert all(summary is got1[0] for summary in got1)  # one reading shared
        assert pool_in(got1[0], BIG)["waiting"] == 1 and named(got1[0], BIG) == ["ua"]
        assert all(summary is got2[0] for summary in got2)
        assert pool_in(got2[0], BIG)["waiting"] == 2 and named(got2[0], BIG) == ["ua", "ub"]

        release[3].set()
        again = await asyncio.wait_for(view.read(), 2)  # nobody reading: a caller alone starts a reading at once
        assert len(readings) == 4 and again is not got2[0]

    run(test)


def test_one_caller_alone_gets_a_reading_of_its_own_each_time() -> None:
    async def test(lobby: Lobby) -> None:
        readings = spy(lobby.view, "_summary")
        a = await lobby.view.read()
        await lobby.seek("ua", 1500)
        b = await lobby.view.read()
        assert len(readings) == 2
        assert pool_in(a, BIG)["waiting"] == 0 and pool_in(b, BIG)["waiting"] == 1

    run(test)


# -- a large pool named from the pairer's last wave -----------------------------------------------


async def burst(lobby: Lobby) -> list[str]:
    """100 seekers in BIG, none in reach of another (400 apart; a second's wait reaches 175), each
    a moment after the last in an order unlike their names or ratings; READ_WHOLE in SMALL. The
    pairer's wave leaves them all waiting. Returns BIG's seekers, longest waiting first."""
    users = [f"u{i:03}" for i in range(100)]
    random.Random(7).shuffle(users)
    for n, user in enumerate(users):
        await lobby.seek(user, 100 + 400 * ((n * 37) % 100))
        lobby.wall.t += 0.01
    for i in range(READ_WHOLE):
        await lobby.seek(f"s{i:02}", 100 + 400 * i, SMALL)
        lobby.wall.t += 0.01
    assert await lobby.pools.wave() == 0  # this process holds the pairer's lease; nobody in reach
    assert lobby.pools.pairing_here and lobby.made == []
    at, left = lobby.pools.left[BIG]
    assert at == lobby.wall() and [side.user for side in left] == users
    return users


def test_a_large_pool_is_counted_and_named_from_a_fresh_wave_without_reading_it_whole() -> None:
    async def test(lobby: Lobby) -> None:
        users = await burst(lobby)
        await lobby.pools.unseek(users[0])  # gone since the wave: counted out at once, still named
        await lobby.pools.unseek("s00")  # the small pool: one out, another in (READ_WHOLE again)
        await lobby.seek("s-new", 99_000, SMALL)
        lobby.wall.t += SNAPSHOT_SECONDS - 0.01  # the wave is not quite too old
        read_whole = spy(lobby.pools, "waiting")

        summary = await lobby.view.read()
        assert (BIG,) not in read_whole  # the large pool: counted (HLEN), not read
        assert pool_in(summary, BIG)["waiting"] == 99
        assert named(summary, BIG) == users[:POOL_SHOWN]  # the wave's, longest waiting first
        assert len(named(summary, BIG)) == POOL_SHOWN

        assert (SMALL,) in read_whole  # READ_WHOLE entries: read whole, though the wave is fresh
        assert pool_in(summary, SMALL)["waiting"] == READ_WHOLE
        assert named(summary, SMALL) == [f"s{i:02}" for i in range(1, POOL_SHOWN + 1)]

    run(test)


def test_a_large_pool_is_read_whole_once_the_wave_is_too_old() -> None:
    async def test(lobby: Lobby) -> None:
        users = await burst(lobby)
        await lobby.pools.unseek(users[0])
        lobby.wall.t += SNAPSHOT_SECONDS  # the wave is too old to name anyone from
        read_whole = spy(lobby.pools, "waiting")

        summary = await lobby.view.read()
        assert (BIG,) in read_whole
        assert pool_in(summary, BIG)["waiting"] == 99
        assert named(summary, BIG) == users[1:POOL_SHOWN + 1]  # as the pool is now

    run(test)


def test_a_large_pool_is_read_whole_when_no_wave_was_made_here() -> None:
    async def test(lobby: Lobby) -> None:
        for i in range(READ_WHOLE + 1):
            await lobby.seek(f"u{i:03}", 100 + 400 * (READ_WHOLE - i))
            lobby.wall.t += 0.01
        assert BIG not in lobby.pools.left
        read_whole = spy(lobby.pools, "waiting")

        summary = await lobby.view.read()
        assert (BIG,) in read_whole
        assert pool_in(summary, BIG)["waiting"] == READ_WHOLE + 1
        assert named(summary, BIG) == [f"u{i:03}" for i in range(POOL_SHOWN)]

    run(test)


# -- a process tells its lobby pages at most one view at a time -----------------------------------


class Page:
    """A lobby page as the telling sees it: who, whether it has gone, what it was sent."""

    def __init__(self, i: int) -> None:
        self.id = f"p{i}"
        self.user = User(f"u{i}", f"login{i}", f"Name {i}")
        self.dropped = False
        self.got: list[dict[str, Any]] = []

    def send(self, data: bytes) -> None:
        self.got.append(json.loads(data)["d"])


def view_numbered(n: int) -> bytes:
    """A view as the pairer publishes it, told apart by its count of matches going on."""
    empty = msgspec.Raw(b"[]")
    return msgspec.json.encode(Summary(empty, empty, n, 0, {}, float(n)))


@pytest.mark.parametrize(("pages", "gap"), [(1500, 1.5), (3000, 2.0), (10, 0.01)])
def test_views_close_together_are_told_once_the_newest_spaced_by_the_pages_told(pages: int, gap: float) -> None:
    async def test(lobby: Lobby) -> None:
        view = lobby.view
        await view.start()
        loop = asyncio.get_running_loop()
        clock = [loop.time()]
        loop.time = lambda: clock[0]  # type: ignore[method-assign]  # the telling waits on this clock
        try:
            watchers = [Page(i) for i in range(pages)]
            view.watchers.update(watchers)  # type: ignore[arg-type]
            await lobby.bus.hset("seeking", "u1", BIG.encode())
            tellings = spy(view, "_tell")
            commands = spy(lobby.bus, "hmget")

            await lobby.bus.publish("lobby_view", view_numbered(1))
            await settle()  # the first view is told at once
            assert len(tellings) == 1 and len(commands) == 2  # what is each player's own: two commands
            assert all(len(page.got) == 1 and page.got[0]["playing"] == 1 for page in watchers)
            assert watchers[1].got[0]["seeking"] == BIG and watchers[0].got[0]["seeking"] is None
            told = clock[0]

            for n in range(2, 7):
                clock[0] += gap / 10
                await lobby.bus.publish("lobby_view", view_numbered(n))
                await settle()
            assert len(tellings) == 1 and all(len(page.got) == 1 for page in watchers)
            clock[0] = told + gap - gap / 100
            await settle()
            assert len(tellings) == 1  # not before pages / PAGES_TOLD_PER_SECOND (2 s at most)

            clock[0] = told + gap
            await settle()
            assert len(tellings) == 2 and len(commands) == 4  # five views: one telling, of the newest
            assert all([msg["playing"] for msg in page.got] == [1, 6] for page in watchers)

            clock[0] += 10 * gap
            await settle()
            assert len(tellings) == 2  # no new view: nothing told
        finally:
            del loop.time  # type: ignore[method-assign]

    run(test)


def test_pages_gone_are_not_told_and_no_pages_nothing_is_scheduled() -> None:
    async def test(lobby: Lobby) -> None:
        view = lobby.view
        await view.start()
        tellings = spy(view, "_tell")
        await lobby.bus.publish("lobby_view", view_numbered(1))
        await settle()
        assert tellings == [] and view._last is not None  # kept for pages that open the lobby

        here, gone = Page(1), Page(2)
        gone.dropped = True
        view.watchers.update([here, gone])  # type: ignore[arg-type]
        await lobby.bus.publish("lobby_view", view_numbered(2))
        await settle()
        assert len(tellings) == 1
        assert [msg["playing"] for msg in here.got] == [2] and gone.got == []
        assert view.watchers == {here}

    run(test)


# -- how many are online -------------------------------------------------------------------------


def test_many_online_are_read_whole_every_few_seconds_and_counted_on_in_between() -> None:
    async def test(lobby: Lobby) -> None:
        bus = lobby.bus
        reads = spy(bus, "hgetall")

        def whole_reads() -> int:
            return sum(args == ("online",) for args in reads)

        for i in range(100):
            await bus.hset("online", f"u{i}/p{i}", NODE.encode())
        await bus.hset("online", "u0/second-page", NODE.encode())  # one player, two pages
        assert await lobby.view._online() == 100  # players, not pages
        assert whole_reads() == 1

        for i in range(100, 105):
            await bus.hset("online", f"u{i}/p{i}", NODE.encode())
        assert await lobby.view._online() == 105
        await bus.hdel("online", "u1/p1", "u2/p2", "u3/p3")
        assert await lobby.view._online() == 102
        await bus.hset("online", "u4/second-page", NODE.encode())
        lobby.now.t += ONLINE_SECONDS - 0.01
        assert await lobby.view._online() == 103  # moved on by the entries: a second page counts
        assert whole_reads() == 1

        lobby.now.t += 0.01
        assert await lobby.view._online() == 102  # read whole again: players
        assert whole_reads() == 2
        assert await lobby.view._online() == 102
        assert whole_reads() == 2

    run(test)


def test_few_online_are_read_whole_every_time() -> None:
    async def test(lobby: Lobby) -> None:
        bus = lobby.bus
        reads = spy(bus, "hgetall")
        for i in range(READ_WHOLE):
            await bus.hset("online", f"u{i}/p{i}", NODE.encode())
        assert await lobby.view._online() == READ_WHOLE
        await bus.hset("online", "u0/second-page", NODE.encode())  # READ_WHOLE + 1 entries now
        assert await lobby.view._online() == READ_WHOLE + 1  # moved on from the whole reading
        await bus.hdel("online", "u0/second-page", "u1/p1")
        assert await lobby.view._online() == READ_WHOLE - 1
        await bus.hset("online", "u0/third-page", NODE.encode())
        assert await lobby.view._online() == READ_WHOLE - 1  # read whole: the same player twice
        assert sum(args == ("online",) for args in reads) == 3

    run(test)


def test_a_wave_pairs_nobody_who_plays_already_and_the_other_waits_on() -> None:
    """A player who plays a match (a challenge accepted after their seek) is left out of the wave's
    pair and out of the pool; the one they would have met waits on and is paired in the next wave."""
    async def test(lobby: Lobby) -> None:
        await lobby.seek("u1", 1500)
        await lobby.seek("u2", 1500)
        await lobby.bus.hset("busy", "u1", b"m1")
        await lobby.pools.wave()
        assert lobby.made == []
        assert await lobby.pools.seeking("u1") is None and await lobby.pools.seeking("u2") == BIG
        assert sorted(await lobby.bus.hgetall(f"pool:{BIG}")) == ["u2"]
        await lobby.seek("u3", 1500)
        await lobby.pools.wave()
        assert sorted(lobby.made[0]) == ["u2", "u3"]
        assert await lobby.bus.hgetall(f"pool:{BIG}") == {} and await lobby.bus.hgetall("seeking") == {}
    run(test)


def test_the_changes_of_a_moment_are_one_word_to_the_pairer_said_after_them() -> None:
    from patience.server.arena.view import CHANGED_GATHER_SECONDS

    async def main() -> list[int]:
        lobby = Lobby()
        said: list[int] = []
        await lobby.bus.subscribe("lobby", lambda _: said.append(len(said)))
        for _ in range(50):  # a burst of seeks and of matches made: one word
            await lobby.view.changed()
        assert said == []  # not before the changes of the moment are made
        await asyncio.sleep(CHANGED_GATHER_SECONDS * 3)
        first = len(said)
        await lobby.view.changed()  # a change after that word: another one
        await asyncio.sleep(CHANGED_GATHER_SECONDS * 3)
        return [first, len(said)]

    assert run_async(main) == [1, 2]


def test_a_seekers_own_lobby_is_the_last_view_with_their_pool_and_reads_nothing_of_theirs() -> None:
    """The answer to a seek is the last view published, with the pool the player was just put in and
    no match (the seek checked both): no reading of where they wait or what they play. With no view yet
    it is read afresh, what is theirs too."""

    async def test(lobby: Lobby) -> None:
        view = lobby.view
        await view.start()
        page = Page(1)
        await lobby.bus.hset("busy", "u1", b"m-old")  # what the bus says is not asked when it is known
        reads = [spy(lobby.bus, name) for name in ("hget", "hmget", "hgetall", "hlen")]
        await lobby.bus.publish("lobby_view", view_numbered(3))
        await settle()
        told = json.loads(await view.for_seeker(page, SMALL))["d"]  # type: ignore[arg-type]
        assert told["seeking"] == SMALL and told["match"] is None and told["playing"] == 3
        assert all(calls == [] for calls in reads)

        fresh = LobbyView(lobby.bus, lobby.nodes, lobby.pools, lobby.now)  # a process that has seen no view
        told = json.loads(await fresh.for_seeker(page, SMALL))["d"]  # type: ignore[arg-type]
        assert told["match"] == "m-old" and any(calls for calls in reads)

    run(test)


def test_a_stopped_view_leaves_no_timer_and_no_work_for_a_closing_loop() -> None:
    """The server stops with a change to say, a view to publish, a view to tell and a reading going on:
    the view's stop ends them all, and nothing of it runs afterwards."""

    async def test(lobby: Lobby) -> None:
        view = lobby.view
        await view.start()
        await lobby.pools.wave()  # this process pairs: it publishes the views
        view.watchers.add(Page(1))  # type: ignore[arg-type]
        await view.changed()
        await lobby.bus.publish("lobby", b"")
        await lobby.bus.publish("lobby_view", view_numbered(1))
        reading = asyncio.ensure_future(view.read())
        await asyncio.sleep(0)
        assert view._saying is not None and view._later is not None
        published = view.published
        await view.stop()
        assert view._saying is None and view._later is None and view._telling is None and not view._tasks
        assert view._reading is None and view._next is None
        await asyncio.sleep(0.1)  # past every delay: nothing said, published or read afterwards
        assert view.published == published and not view._tasks
        assert reading.done()

    run(test)


def test_a_view_lost_on_the_way_is_mended_without_another_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seek whose view could not be published (the bus swamped) is still shown to the other pages:
    the pairer tries again, and publishes a view at least every REFRESH_SECONDS even with no change
    (a word on the bus can be lost with its connection)."""
    monkeypatch.setattr(view_module, "REFRESH_SECONDS", 0.2)
    monkeypatch.setattr(view_module, "RETRY_SECONDS", 0.05)
    monkeypatch.setattr(view_module, "TELL_SECONDS", 0.01)

    async def test(lobby: Lobby) -> None:
        view = lobby.view
        await view.start()
        await lobby.pools.wave()  # this process pairs: it publishes the views
        page = Page(1)
        view.watchers.add(page)  # type: ignore[arg-type]
        publish = lobby.bus.publish
        failed: list[str] = []

        async def swamped(channel: str, data: bytes) -> None:
            if channel == "lobby_view" and not failed:
                failed.append(channel)
                raise ConnectionError("the bus did not answer")
            await publish(channel, data)

        lobby.bus.publish = swamped  # type: ignore[method-assign]
        await lobby.seek("anna", 1500)
        await lobby.bus.publish("lobby", b"")
        for _ in range(50):
            await asyncio.sleep(0.02)
            if page.got:
                break
        assert failed and page.got and [p["id"] for p in next(
            pool for pool in page.got[-1]["pools"] if pool["format"] == BIG)["players"]] == ["anna"]
        published = view.published
        await asyncio.sleep(0.6)  # no change at all: the refresh publishes anyway
        assert view.published > published
        await view.stop()

    run(test)
