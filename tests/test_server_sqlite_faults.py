"""SQLite files hurt under a running server, or unusable at its start: the server fails clearly, in one
line, and goes on serving what it can.

A server that owns its SQLite file (no shared arena) keeps the write-ahead log's index in its own
memory: there is no ``-shm`` file whose truncation or loss of write permission would end the process
with SIGBUS (exit 135, no log line, every live game lost)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from arena_processes import ServeProcess


def _draws(ws: ClientConnection, first: int, count: int) -> int:
    """``count`` draws (redeals once the stock is out) acknowledged from ack ``first`` on; the last ack."""
    for ack in range(first, first + count):
        ws.send(json.dumps({"t": "stock", "d": {"ack": ack}}))
        while True:
            msg = json.loads(ws.recv(timeout=10))
            if msg["d"].get("ack") == ack:
                break
        assert msg["t"] in ("ev", "rej"), msg
    return first + count - 1


def test_a_truncated_or_read_only_shm_file_does_not_kill_the_server(tmp_path: Path) -> None:
    path = tmp_path / "patience.sqlite3"
    server = ServeProcess(f"sqlite:///{path}", None, tmp_path, "shm")
    try:
        server.wait_ready()
        http = httpx.Client(base_url=server.url)
        http.get("/")
        cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        with connect(f"ws://127.0.0.1:{server.port}/ws", additional_headers={"Cookie": cookie}) as ws:
            ws.send(json.dumps({"t": "new", "d": {"game": "reloaded", "seed": "7", "cid": "p"}}))
            assert json.loads(ws.recv(timeout=10))["t"] == "game"
            last = _draws(ws, 1, 20)
            shm = Path(f"{path}-shm")
            if shm.exists():  # what the hostile test did: the shared-memory file cut short and read-only
                shm.write_bytes(b"")
                shm.chmod(0o444)
            # enough writes for the log's index to need more room, and a checkpoint or two
            last = _draws(ws, last + 1, 40)
            assert server.proc.poll() is None, server.log()
        assert http.get("/healthz").text == "ok"
        assert not Path(f"{path}-shm").exists()
    finally:
        server.stop()
    assert server.proc.returncode in (0, -15), server.log()


def _immutable(path: Path) -> None:
    """Make ``path`` refuse every write, even root's (chattr +i), or skip where that cannot be done."""
    path.chmod(0o444)
    if os.geteuid() != 0:
        return
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot make a file immutable here: {done.stderr.strip()}")


def _mutable(path: Path) -> None:
    subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
    path.chmod(0o600)  # as the store makes its files


def test_a_read_only_database_at_start_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "patience.sqlite3"
    with socket.socket() as taken:  # a port in use: the database is made and migrated, then serve stops
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        made = subprocess.run([sys.executable, "-m", "patience", "serve", "--data-dir", str(tmp_path), "--port",
                               str(taken.getsockname()[1]), "--deal-stock", "0"], capture_output=True, text=True,
                              timeout=60, check=False)
    assert made.returncode == 2 and path.exists(), made.stderr
    _immutable(path)
    try:
        ran: Any = subprocess.run([sys.executable, "-m", "patience", "serve", "--data-dir", str(tmp_path),
                                   "--port", "0", "--deal-stock", "0"], capture_output=True, text=True,
                                  timeout=60, check=False)
    finally:
        _mutable(path)
    lines = [line for line in (ran.stdout + ran.stderr).splitlines() if line.strip()]
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert len(lines) == 1 and "Traceback" not in ran.stderr, lines
    assert "accepts no write" in lines[0] and str(path) in lines[0], lines[0]


def test_a_database_that_stops_taking_writes_refuses_moves_and_says_so_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "patience.sqlite3"
    server = ServeProcess(f"sqlite:///{path}", None, tmp_path, "frozen")
    files = [path, Path(f"{path}-wal")]
    try:
        server.wait_ready()
        http = httpx.Client(base_url=server.url)
        http.get("/")
        cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        with connect(f"ws://127.0.0.1:{server.port}/ws", additional_headers={"Cookie": cookie}) as ws:
            ws.send(json.dumps({"t": "new", "d": {"game": "reloaded", "seed": "7", "cid": "p"}}))
            game_id = json.loads(ws.recv(timeout=10))["d"]["id"]
            last = _draws(ws, 1, 5)
            for file in files:
                _immutable(file)
            try:
                time.sleep(1.5)  # the health check's answer is kept a second
                health = http.get("/healthz")
                assert health.status_code == 503 and "accepts no write" in health.text, health.text
                for ack in range(last + 1, last + 4):  # refused, never acknowledged
                    ws.send(json.dumps({"t": "stock", "d": {"ack": ack}}))
                    while True:
                        msg = json.loads(ws.recv(timeout=10))
                        if msg["d"].get("ack") == ack or msg["t"] == "err":
                            break
                    # the first says the move could not be saved; the page is let go, and must join again
                    assert msg["t"] == "err" and msg["d"]["code"] == ("server_error" if ack == last + 1 else
                                                                      "no_game"), msg
                assert server.proc.poll() is None
            finally:
                for file in files:
                    _mutable(file)
        time.sleep(1.5)
        assert http.get("/healthz").text == "ok"
        with connect(f"ws://127.0.0.1:{server.port}/ws", additional_headers={"Cookie": cookie}) as ws:
            ws.send(json.dumps({"t": "join", "d": {"id": game_id, "v": 0, "cid": "p2"}}))
            back = json.loads(ws.recv(timeout=10))
            assert back["t"] == "game" and back["d"]["status"]["moves"] == 5  # the refused draws never happened
            _draws(ws, 1, 5)  # and play goes on
    finally:
        server.stop()
    log = server.log_path.read_text()
    assert "Traceback" not in log, log
    said = [line for line in log.splitlines() if "takes no write" in line]
    assert len(said) == 1 and "moves and results are refused" in said[0], log
    assert "takes writes again" in log
