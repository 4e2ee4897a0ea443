"""A solo move is in the database before it is acknowledged: a crash loses no acknowledged move, and a
move that cannot be written is refused, not acknowledged."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from arena_processes import ServeProcess
from helpers import FakeTime, TestClient
from patience.record import replay
from patience.server import create_app
from patience.server.storage.store import Store
from test_server_app import new_game, reply_to, send


def test_a_move_that_cannot_be_written_is_not_acknowledged(tmp_path: Path, fake_time: FakeTime,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(tmp_path, now=fake_time, tick_seconds=0.02, save_seconds=60)
    with TestClient(app) as client:
        client.get("/")
        with client.websocket_connect("/ws") as ws:
            game = new_game(ws, "reloaded", seed="5")
            send(ws, "stock", {"ack": 1})
            assert reply_to(ws, 1)["t"] == "ev"  # written, then told

            def full_disk(connection: Any, **_: Any) -> None:
                raise OSError(28, "No space left on device")

            monkeypatch.setattr("patience.server.storage.writer.write_games", full_disk)
            monkeypatch.setattr("patience.server.storage.writer.write_moves", full_disk)
            send(ws, "stock", {"ack": 2})
            answer = reply_to(ws, 2)
            assert answer["t"] == "err" and answer["d"]["code"] == "server_error"
            monkeypatch.undo()
            assert game["id"] not in app.state.hub.games  # let go: it comes back as the database has it
        with client.websocket_connect("/ws") as ws:
            send(ws, "join", {"id": game["id"], "v": 0, "cid": "page1"})
            back = ws.receive_json()
            assert back["t"] == "game" and back["d"]["status"]["moves"] == 1  # the refused move never happened
            send(ws, "stock", {"ack": 2})  # sent again: now it is played, once
            assert reply_to(ws, 2)["d"]["status"]["moves"] == 2


@pytest.mark.slow
def test_no_acknowledged_solo_move_is_lost_to_kill_9(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'solo.sqlite3'}"
    server = ServeProcess(url, None, tmp_path, "solo")
    try:
        game_id, acked = _play_and_kill(server)
    finally:
        server.stop()
    store = Store(url)
    try:
        saved = store.load_game(game_id)
    finally:
        store.close()
    assert saved is not None
    assert sum(1 for a in saved.record["actions"] if a["m"] in ("draw", "redeal")) == acked
    assert replay(saved.record, check_result=False).moves_made == acked


def _play_and_kill(server: ServeProcess) -> tuple[str, int]:
    """Forty acknowledged draws, then SIGKILL right after the last answer."""
    server.wait_ready()
    http = httpx.Client(base_url=server.url)
    http.get("/")  # the browser's cookie
    cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
    acked = 0
    with connect(f"ws://127.0.0.1:{server.port}/ws", additional_headers={"Cookie": cookie}) as ws:
        ws.send(json.dumps({"t": "new", "d": {"game": "reloaded", "seed": "5", "cid": "p"}}))
        game_id = json.loads(ws.recv(timeout=10))["d"]["id"]
        for ack in range(1, 41):  # faster than any periodic save
            ws.send(json.dumps({"t": "stock", "d": {"ack": ack}}))
            while True:
                msg = json.loads(ws.recv(timeout=10))
                if msg["d"].get("ack") == ack:
                    break
            assert msg["t"] == "ev"
            acked = ack
        server.proc.send_signal(signal.SIGKILL)  # at once after the last answer
        server.proc.wait(timeout=10)
    return game_id, acked
