"""Hostile text from outside: every route of the app, walked with NUL and lone surrogates in its address,
its query, its form fields and its socket's messages, answers a clear 4xx (or its page) and never a
server error, and the server's log holds no traceback: on two ``patience serve`` processes on
PostgreSQL + Redis (which refuses a NUL in text), and on one on SQLite.

The routes are the app's own (``create_app().routes``), the query keys and form fields those the web
handlers read (found in their source), the socket's messages every type the protocol knows: a route or
a field added later is walked too.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
from starlette.routing import Route, WebSocketRoute
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

import patience.server.web
from arena_processes import PASSWORD, ServeProcess, fresh_redis, serving
from patience.server.app import create_app
from patience.server.protocol import CLIENT_MESSAGES

pytestmark = pytest.mark.slow

# percent-encoded: NUL alone and inside text, a lone high and a lone low surrogate in UTF-8
HOSTILE = ["%00", "carl%00", "%ED%A0%80", "x%ED%B0%80y"]
WEB = Path(patience.server.web.__file__).parent
SOURCE = "\n".join(path.read_text() for path in WEB.glob("*.py"))
QUERY_KEYS = sorted(set(re.findall(r"query_params\.get\(\"(\w+)\"", SOURCE)))
FORM_FIELDS = sorted(set(re.findall(r"fields\.get\(\"(\w+)\"", SOURCE)) | set(re.findall(r"fields\[\"(\w+)\"\]",
                                                                                          SOURCE)))


def routes() -> list[Route | WebSocketRoute]:
    return [r for r in create_app(database_url="sqlite://").routes if isinstance(r, Route | WebSocketRoute)]


def fill(path: str, value: str) -> str:
    return re.sub(r"\{\w+\}", value, path)


def browser(url: str, login: str | None) -> httpx.Client:
    http = httpx.Client(base_url=url, timeout=30.0)
    if login is not None:
        csrf = http.get("/api/me").json()["csrf"]
        answer = http.post("/account/signup", data={"csrf": csrf, "login": login, "name": login.title(),
                                                    "password": PASSWORD}, headers={"accept": "application/json"})
        assert answer.status_code == 200, answer.text
    return http


def walk_http(http: httpx.Client) -> list[str]:
    """Every route with hostile text in each place; the answers that were server errors."""
    failed = []
    csrf = http.get("/api/me").json()["csrf"]

    def ask(method: str, target: str, body: str | None = None) -> None:
        headers = {"accept": "application/json", "origin": str(http.base_url).rstrip("/")}
        if body is not None:
            headers["content-type"] = "application/x-www-form-urlencoded"
        try:
            answer = http.request(method, target, content=body, headers=headers)
        except httpx.TransportError as exc:
            failed.append(f"{method} {target} {body or ''}: {exc!r}")
            return
        if answer.status_code >= 500:
            failed.append(f"{method} {target} {body or ''}: {answer.status_code}")

    for route, value in itertools.product(routes(), HOSTILE):
        if not isinstance(route, Route):
            continue
        for method in sorted((route.methods or {"GET"}) - {"HEAD"}):
            if "{" in route.path:
                ask(method, fill(route.path, value))
            plain = fill(route.path, "carl")
            ask(method, plain + "?" + "&".join(f"{key}={value}" for key in QUERY_KEYS))
            if method == "POST":
                for field in FORM_FIELDS:
                    fields = {name: "carl" for name in FORM_FIELDS} | {"csrf": csrf}
                    fields[field] = value
                    ask(method, plain, "&".join(f"{k}={v}" for k, v in fields.items()))
    return failed


def walk_socket(url: str, http: httpx.Client) -> list[str]:
    """Every message type with NUL in each of its fields, and a socket opened at a hostile address."""
    failed = []
    base = url.replace("http://", "ws://")
    cookie = "; ".join(f"{name}={value}" for name, value in http.cookies.items())
    with connect(f"{base}/ws", additional_headers={"Cookie": cookie}, open_timeout=10) as ws:
        sent = 0
        for kind, cls in CLIENT_MESSAGES.items():
            for field in msgspec.structs.fields(cls):
                for text in ("a\x00b", "\x00"):
                    ws.send(json.dumps({"t": kind, "d": {"ack": 1, field.name: text}}))
                    sent += 1
        ws.send(json.dumps({"t": "ping", "d": {}}))
        answers = []
        with contextlib.suppress(TimeoutError):
            while True:
                answers.append(json.loads(ws.recv(timeout=10)))
                if answers[-1]["t"] == "pong":
                    break
        failed += [json.dumps(a) for a in answers if a["t"] == "err" and a["d"].get("code") == "server_error"]
        assert answers and answers[-1]["t"] == "pong", answers[-3:]
    for value in HOSTILE:
        with contextlib.suppress(ConnectionClosed, InvalidStatus), \
                connect(f"{base}/ws?cid={value}", additional_headers={"Cookie": cookie}, open_timeout=10) as ws:
            ws.send(json.dumps({"t": "ping", "d": {}}))
            ws.recv(timeout=10)
    return failed


def tracebacks(proc: ServeProcess) -> list[str]:
    text = proc.log_path.read_text()
    return [part[:400] for part in text.split("Traceback")[1:]]


@contextlib.contextmanager
def sqlite_server(tmp_path: Path) -> Iterator[list[ServeProcess]]:
    proc = ServeProcess(f"sqlite:///{tmp_path / 'site.sqlite3'}", None, tmp_path, "sqlite")
    try:
        proc.wait_ready()
        yield [proc]
    finally:
        proc.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql+redis"])
def test_every_route_refuses_hostile_text_cleanly(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if backend == "sqlite":
        database_url = f"sqlite:///{tmp_path / 'site.sqlite3'}"
        servers = sqlite_server(tmp_path)
    else:
        database_url = request.getfixturevalue("postgres_url")
        servers = serving(database_url, fresh_redis(request.getfixturevalue("redis_server"), 12), tmp_path)
    with servers as procs:
        failed = []
        for number, proc in enumerate(procs):
            for login in (None, f"walker{number}", f"mod{number}"):
                with contextlib.closing(browser(proc.url, login)) as http:
                    if login is not None and login.startswith("mod"):  # the moderators' routes too
                        granted = subprocess.run([sys.executable, "-m", "patience", "admin", "--database-url",
                                                  database_url, "grant", login, "moderator"],
                                                 capture_output=True, text=True, timeout=60, check=False)
                        assert granted.returncode == 0, granted.stderr
                        assert http.get("/mod").status_code == 200
                    failed += walk_http(http)
                    if login is not None:
                        failed += walk_socket(proc.url, http)
            assert not failed, failed[:10]
        for proc in procs:
            proc.stop()
            assert not tracebacks(proc), tracebacks(proc)[:3]
