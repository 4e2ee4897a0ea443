"""A real ``patience serve`` whose connection cap an attacker fills with slow request bodies (POSTs
whose bodies trickle in, from a few addresses, reopened as soon as the server closes one): the
others still get ``/healthz`` and new websockets, and the log says so in a few lines."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

from arena_processes import free_port
from helpers import run_async
from patience.server.storage.store import sqlite_url

pytestmark = pytest.mark.slow

DESCRIPTORS = 256  # the server's: three quarters of them, 192, are its cap on open connections
ATTACKERS = 240  # slow bodies at once, from 4 addresses: past the cap in all, far within the cap per address


@contextlib.contextmanager
def serve_with_few_descriptors(folder: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    log = folder / "serve.log"

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))

    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "patience", "serve", "--port", str(port), "--database-url",
                                 sqlite_url(folder / "db.sqlite3"), "--deal-stock", "0"],
                                stdout=out, stderr=subprocess.STDOUT, preexec_fn=few_descriptors,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=1).text == "ok":
                    break
            time.sleep(0.1)
        yield url, log
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


async def slow_body(port: int, number: int, stop: threading.Event, tally: collections.Counter[str]) -> None:
    """A sign-in POST of 5,000 bytes sent a byte every half second; another as soon as the server ends one."""
    address = f"127.0.7.{1 + number % 4}"
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
        except OSError:
            await asyncio.sleep(0.1)
            continue
        writer.write(b"POST /account/signin HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded"
                     b"\r\ncontent-length: 5000\r\n\r\ncsrf=")
        tally["opened"] += 1
        try:
            while not stop.is_set():
                try:
                    async with asyncio.timeout(0.5):
                        got = await reader.read(1000)
                except TimeoutError:
                    writer.write(b"a")
                    continue
                tally["answered" if got else "closed by the server"] += 1
                break
        except OSError:
            tally["closed by the server"] += 1
        writer.close()


def attack(port: int, stop: threading.Event, tally: collections.Counter[str]) -> None:
    async def all_of_them() -> None:
        tasks = [asyncio.create_task(slow_body(port, i, stop, tally)) for i in range(ATTACKERS)]
        await asyncio.gather(*tasks)

    run_async(all_of_them)


def test_slow_bodies_past_the_connection_cap_leave_room_for_the_others(tmp_path: Path) -> None:
    with serve_with_few_descriptors(tmp_path) as (url, log):
        port = int(url.rsplit(":", 1)[1])
        stop = threading.Event()
        tally: collections.Counter[str] = collections.Counter()
        attacker = threading.Thread(target=attack, args=(port, stop, tally))
        attacker.start()
        try:
            time.sleep(2.0)  # every slow body sent its headers: more than the server takes at once
            health, sockets = 0, 0
            for n in range(10):
                address = f"127.0.8.{1 + n}"
                with contextlib.suppress(httpx.HTTPError), \
                        httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=5) as client:
                    health += client.get(f"{url}/healthz").text == "ok"
                with contextlib.suppress(OSError, TimeoutError, WebSocketException), \
                        connect(f"ws://127.0.0.1:{port}/ws", open_timeout=5) as ws:
                    ws.send(json.dumps({"t": "ping", "d": {}}))
                    sockets += json.loads(ws.recv(5))["t"] == "pong"
                time.sleep(0.2)
            opened_during = tally["opened"]
        finally:
            stop.set()
            attacker.join(30)
        assert (health, sockets) == (10, 10)
        assert opened_during > ATTACKERS  # the cap in all was full: the attackers' oldest made room
        overloads = [line for line in log.read_text().splitlines() if line.strip()]
        assert len(overloads) <= 6, overloads  # a line per kind of overload, not one per connection
