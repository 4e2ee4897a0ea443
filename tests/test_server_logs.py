"""``patience serve --log-format json``: a real server's log lines on stderr are JSON objects, one a line,
with the time, level, process and event (and the request's id where one is served), and hold no secret."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from arena_processes import PASSWORD, Player, free_port
from patience.server.logs import scrub
from patience.server.storage.store import sqlite_url


def test_scrub_blanks_secrets_and_keeps_the_rest() -> None:
    key = "0123456789abcdef" * 4
    said = scrub(f'GET /x?token=abc123&page=2 password: "p w" deal {key} cookie=s3cr3t; session_token=zz ok')
    assert "abc123" not in said and "p w" not in said and key not in said and "s3cr3t" not in said
    assert "zz" not in said and "page=2" in said and said.endswith(" ok")


def test_a_json_line_names_the_request_and_the_user_where_known() -> None:
    from patience.server.logs import REQUEST, USER, JsonFormatter

    record = logging.LogRecord("patience.server", logging.ERROR, __file__, 1, "move failed: %s", ("x",), None)
    assert set(json.loads(JsonFormatter().format(record))) == {"time", "level", "process", "logger", "event"}
    request, user = REQUEST.set("ws-1234"), USER.set("u-42")
    try:
        line = json.loads(JsonFormatter().format(record))
    finally:
        REQUEST.reset(request)
        USER.reset(user)
    assert line["request"] == "ws-1234" and line["user"] == "u-42" and line["event"] == "move failed: x"
    assert line["level"] == "error"


@pytest.mark.slow
def test_a_real_server_logs_json_lines_without_secrets(tmp_path: Path) -> None:
    port = free_port()
    stderr_path = tmp_path / "stderr.log"
    command = [sys.executable, "-m", "patience", "serve", "--port", str(port), "--database-url",
               sqlite_url(tmp_path / "db.sqlite3"), "--deal-stock", "0", "--log-format", "json", "--log-level", "info"]
    with stderr_path.open("w") as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, stderr_path.read_text()
            try:
                if httpx.get(f"{url}/healthz", timeout=1.0).text == "ok":
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        player = Player(url, "logger_one")
        cookie = dict(player.http.cookies.items())
        csrf = player.http.get("/api/me").json()["csrf"]
        wrong = httpx.post(f"{url}/account/signin", data={"csrf": csrf, "login": "logger_one", "password": "nope-123"},
                           headers={"accept": "application/json"})
        assert wrong.status_code in (401, 403)
        assert httpx.get(f"{url}/no/such/page?token=hushhush").status_code == 404
        player.open()
        player.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    lines = [line for line in stderr_path.read_text().splitlines() if line.strip()]
    assert len(lines) >= 5, lines
    parsed = [json.loads(line) for line in lines]  # every line is one JSON object
    for line in parsed:
        assert {"time", "level", "process", "event"} <= set(line), line
        assert line["level"] in ("debug", "info", "warning", "error", "critical")
        assert line["process"].endswith(f"-{proc.pid}")
    requests = [line for line in parsed if "request" in line]
    assert any("/no/such/page" in line["event"] for line in requests), parsed
    assert any("/account/signup" in line["event"] for line in requests)
    assert len({line["request"] for line in requests}) >= 3
    text = stderr_path.read_text()
    for secret in (PASSWORD, "nope-123", "hushhush", *cookie.values()):
        assert secret not in text
