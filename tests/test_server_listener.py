"""The guards at the door (patience.server.transport.listener) under a real uvicorn on loopback:
half-open connections are closed after the header time limit, connections past the per-address cap
at once (open websockets count), and each kind of overload is logged in one line, not one per
connection."""

from __future__ import annotations

import contextlib
import functools
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from websockets.sync.client import connect

from patience.server.transport.listener import OVERLOADS, GuardedH11, GuardedLoop, HeaderGate


class QuickGuard(GuardedH11):
    header_seconds = 0.5


class QuickGate(HeaderGate):
    header_seconds = 0.5
    protocol = QuickGuard


class SmallLoop(GuardedLoop):
    max_per_address = 6


async def hello(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "websocket":  # accepted, then open until the client leaves
        await receive()
        await send({"type": "websocket.accept"})
        while (await receive())["type"] != "websocket.disconnect":
            pass
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@contextlib.contextmanager
def serving_hello(loop: Any, http: Any) -> Iterator[tuple[int, uvicorn.Server, threading.Thread]]:
    """The hello app under uvicorn with ``loop`` and ``http``, on a thread: its port, the server (set
    ``should_exit`` to stop it) and the thread; stopped at the end."""
    listening = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(hello, fd=listening.fileno(), loop=loop, http=http, log_level="warning",
                            lifespan="off")
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield listening.getsockname()[1], runner, thread
    finally:
        runner.should_exit = True
        thread.join(10)
        listening.close()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[int]:
    loop = functools.partial(SmallLoop, proxies=getattr(request, "param", None))
    with serving_hello(loop, QuickGate) as (port, _, _):
        yield port


def get(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        return s.recv(1000)


def closed(s: socket.socket, within: float) -> bool:
    s.settimeout(within)
    try:
        return s.recv(100) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_half_open_connections_are_closed_after_the_header_time_limit(server: int,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "patience.server")
    slow = [socket.create_connection(("127.0.0.1", server)) for _ in range(4)]
    for s in slow:
        s.sendall(b"GET / HTTP/1.1\r\nhost: x\r\n")  # and never the end of the headers
    time.sleep(0.3)
    for s in slow:
        s.sendall(b"x-more: 1\r\n")  # dribbling bytes does not keep it open
    assert all(closed(s, 3.0) for s in slow)
    assert get(server).startswith(b"HTTP/1.1 200")  # the others are served
    lines = [r.getMessage() for r in caplog.records if "overload" in r.getMessage()]
    assert len(lines) == 1 and "headers" in lines[0]
    for s in slow:
        s.close()


def test_a_kept_alive_connection_owes_the_next_headers_in_time(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as s:
        s.sendall(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        assert s.recv(1000).startswith(b"HTTP/1.1 200")  # served, and the connection kept
        s.sendall(b"GET / HTTP/1.1\r\nhost: x\r\n")  # the next request's headers, never finished
        assert not closed(s, 0.2) and closed(s, 2.0)


def test_connections_past_the_per_address_cap_are_closed_at_once(server: int,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "patience.server")
    held = [socket.create_connection(("127.0.0.1", server)) for _ in range(10)]
    time.sleep(0.2)
    shut = [closed(s, 0.01) for s in held]  # well before the header time limit
    assert shut == [False] * 6 + [True] * 4
    lines = [r.getMessage() for r in caplog.records if "overload" in r.getMessage()]
    assert len(lines) == 1 and "from one address" in lines[0]
    for s in held:
        s.close()
    time.sleep(0.2)
    assert get(server).startswith(b"HTTP/1.1 200")  # closed ones are counted out


@pytest.mark.parametrize("server", ["10.0.0.0/8, 127.0.0.1"], indirect=True)
def test_a_trusted_proxys_connections_are_held_by_the_cap_in_all_only(server: int) -> None:
    held = [socket.create_connection(("127.0.0.1", server)) for _ in range(10)]  # every player behind it
    time.sleep(0.2)
    assert [closed(s, 0.01) for s in held] == [False] * 10
    for s in held:
        s.close()


def test_open_websockets_count_against_their_address(server: int) -> None:
    refused = OVERLOADS.counts.get("address", 0)
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(connect(f"ws://127.0.0.1:{server}/ws", open_timeout=5)) for _ in range(6)]
        time.sleep(0.7)  # past the header time limit: an upgraded socket owes no headers
        for ws in sockets:
            ws.ping().wait(2)  # all open
        with socket.create_connection(("127.0.0.1", server)) as one_more:
            assert closed(one_more, 1.0)  # the address's six open websockets fill its cap
        assert OVERLOADS.counts["address"] == refused + 1
        sockets.pop().close()
        time.sleep(0.2)
        assert get(server).startswith(b"HTTP/1.1 200")  # a closed websocket is counted out


def test_stopping_the_server_closes_the_connections_still_owing_their_headers() -> None:
    with serving_hello(GuardedLoop, HeaderGate) as (port, runner, thread):
        with socket.create_connection(("127.0.0.1", port)) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\nhost: x\r\n")
            time.sleep(0.1)
            runner.should_exit = True
            assert closed(slow, 3.0)  # at the stop, not after the 10 s header time limit
        thread.join(10)
        assert not thread.is_alive()
