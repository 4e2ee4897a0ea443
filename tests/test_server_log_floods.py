"""What a client's faults leave in a real ``patience serve``'s log: text frames that are not UTF-8,
POST bodies cut short, requests that are not HTTP and upgrades to something other than a websocket
are counted in one line per kind (then at most one a minute), never a traceback or a line each."""

from __future__ import annotations

import base64
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from arena_processes import ServeProcess
from patience.server.storage.store import sqlite_url

pytestmark = pytest.mark.slow

FAULTS = 200  # of each kind


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    proc = ServeProcess(sqlite_url(tmp_path / "db.sqlite3"), None, tmp_path, "serve")
    try:
        proc.wait_ready()
        yield proc
    finally:
        proc.stop()


def not_utf8_text_frame(port: int) -> bytes:
    """Open a websocket, send a text frame that is not UTF-8: what the server answers (a close frame)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        key = base64.b64encode(os.urandom(16))
        s.sendall(b"GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
                  b"sec-websocket-key: " + key + b"\r\nsec-websocket-version: 13\r\n\r\n")
        handshake = b""
        while b"\r\n\r\n" not in handshake:
            handshake += s.recv(1000)
        assert handshake.startswith(b"HTTP/1.1 101 ")
        payload, mask = b'{"t":"\xff\xfe"}', os.urandom(4)
        s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        return s.recv(100)


def cut_short_body(port: int, kept_alive: bool) -> None:
    """A sign-in POST whose client leaves after a part of its body: the connection's first request (held
    at the door until its body is in, so the app never sees it), or the next on a kept-alive connection
    (the app's handler reads it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        if kept_alive:
            s.sendall(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
            answer = b""
            while not answer.endswith(b"\r\n\r\nok"):
                answer += s.recv(1000)
        s.sendall(b"POST /account/signin HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\n"
                  b"content-length: 5000\r\n\r\ncsrf=abc&login=someone&password=")


def answer_to(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        return s.recv(100)


def test_a_clients_faults_leave_a_line_per_kind(server: ServeProcess) -> None:
    started = len(server.log().splitlines())
    for n in range(FAULTS):
        assert not_utf8_text_frame(server.port)[:4] == b"\x88\x02\x03\xef"  # closed: 1007, not UTF-8
        cut_short_body(server.port, kept_alive=n % 2 == 1)
        assert answer_to(server.port, b"NOT HTTP AT ALL\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        assert answer_to(server.port, b"GET /healthz HTTP/1.1\r\nhost: x\r\nupgrade: h2c\r\nconnection: upgrade\r\n"
                                      b"\r\n").startswith(b"HTTP/1.1 200 ")
    time.sleep(0.5)  # the last bodies' ends are seen
    assert httpx.get(f"{server.url}/healthz", timeout=5).text == "ok"
    lines = server.log_path.read_text().splitlines()[started:]
    assert len(lines) <= 4, "\n".join(lines[:40])
    for kind in ("UTF-8", "cut short", "not HTTP", "other than a websocket"):
        assert any(kind in line for line in lines), (kind, lines)


def test_a_bus_that_goes_away_is_one_line_a_minute_not_a_traceback_each(tmp_path: Path) -> None:
    """Redis stops under a running arena process: every loop that uses the bus fails twice a second,
    which the log counts in one line (then one a minute), and the process still stops on SIGTERM."""
    import subprocess

    from arena_processes import free_port

    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        proc = ServeProcess(sqlite_url(tmp_path / "db.sqlite3"), f"redis://127.0.0.1:{port}/0", tmp_path, "serve")
        try:
            proc.wait_ready()
        finally:
            redis.terminate()
            redis.wait(timeout=10)
        time.sleep(4)  # some 8 pairing waves, 4 lease renewals, the bus's reader: all fail
        assert proc.proc.poll() is None  # it waits for the bus, it does not die
        proc.stop()
        log = proc.log_path.read_text()
    finally:
        if redis.poll() is None:
            redis.kill()
    assert "Traceback" not in log, log
    lines = [line for line in log.splitlines() if "the bus (Redis) cannot be reached" in line]
    assert len(lines) == 1 and "since the last such line" in lines[0], log
