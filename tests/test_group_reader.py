"""The group reader: the asks of a moment read in one query per group, later asks in the next."""

from __future__ import annotations

import asyncio
import threading

import pytest

from helpers import run_async
from patience.server.storage.reader import GroupReader


def test_the_asks_of_one_moment_are_one_reading_per_group_and_a_key_asked_twice_is_read_once() -> None:
    calls: list[tuple[str, list[str]]] = []

    def read(group: str, keys: list[str]) -> dict[str, str]:
        calls.append((group, keys))
        return {key: f"{group}:{key}" for key in keys if key != "nobody"}

    async def main() -> list[str | None]:
        reader = GroupReader(read)
        asks = [("reloaded", "a"), ("reloaded", "b"), ("faecher", "a"), ("reloaded", "a"), ("reloaded", "nobody")]
        return await asyncio.gather(*(reader.get(group, key) for group, key in asks))

    assert run_async(main) == ["reloaded:a", "reloaded:b", "faecher:a", "reloaded:a", None]
    assert sorted(calls) == [("faecher", ["a"]), ("reloaded", ["a", "b", "nobody"])]


def test_asks_made_while_a_reading_runs_wait_for_the_next_one_and_large_groups_are_split() -> None:
    calls: list[list[str]] = []
    running = threading.Event()
    go_on = threading.Event()

    def read(group: str, keys: list[str]) -> dict[str, int]:
        calls.append(keys)
        if len(calls) == 1:
            running.set()
            go_on.wait(10)
        return {key: int(key) for key in keys}

    async def main() -> None:
        reader = GroupReader(read, most=3)
        first = asyncio.ensure_future(reader.get("g", "0"))
        await asyncio.to_thread(running.wait, 10)
        later = [asyncio.ensure_future(reader.get("g", str(n))) for n in range(1, 8)]
        await asyncio.sleep(0.05)
        assert len(calls) == 1  # the later asks wait for the reading that runs
        go_on.set()
        assert await first == 0
        assert await asyncio.gather(*later) == list(range(1, 8))
        assert reader.readings == 4

    run_async(main)
    assert calls == [["0"], ["1", "2", "3"], ["4", "5", "6"], ["7"]]


def test_a_failed_reading_fails_its_own_asks_only() -> None:
    failing = [True]

    def read(group: str, keys: list[str]) -> dict[str, str]:
        if failing[0]:
            failing[0] = False
            raise OSError("the database went away")
        return {key: key.upper() for key in keys}

    async def main() -> None:
        reader = GroupReader(read)
        with pytest.raises(OSError, match="went away"):
            await reader.get("g", "a")
        assert await reader.get("g", "b") == "B"

    run_async(main)


def test_a_stopped_reading_leaves_no_ask_waiting() -> None:
    started = threading.Event()
    release = threading.Event()

    def read(group: str, keys: list[str]) -> dict[str, str]:
        started.set()
        release.wait(10)
        return {}

    async def main() -> None:
        reader = GroupReader(read)
        ask = asyncio.ensure_future(reader.get("g", "a"))
        await asyncio.to_thread(started.wait, 10)
        later = asyncio.ensure_future(reader.get("g", "b"))
        await asyncio.sleep(0)
        assert reader._task is not None
        reader._task.cancel()
        release.set()
        with pytest.raises(RuntimeError, match="stopped"):
            await later
        with pytest.raises((RuntimeError, asyncio.CancelledError)):
            await ask

    run_async(main)
