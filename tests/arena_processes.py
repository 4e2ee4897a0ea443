"""Real ``patience serve`` processes on loopback ports, and players that talk to them as a browser does.

Used by the tests of an arena of several processes (and by benchmarks/duels.py): each process is
started with the command a person would type, on PostgreSQL and Redis, and killed with SIGKILL
when a test wants an owner to die.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import redis
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

PASSWORD = "correct horse battery"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServeProcess:
    """``patience serve`` in a process of its own, on a free port."""

    def __init__(self, database_url: str, redis_url: str | None, log_dir: Path, name: str,
                 extra: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        command = [sys.executable, "-m", "patience", "serve", "--port", str(self.port), "--database-url",
                   database_url, "--deal-stock", "0", *extra]
        if redis_url is not None:
            command += ["--redis-url", redis_url]
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                     env={"PATIENCE_ANALYSIS_WORKERS": "0", **os.environ, "PYTHONUNBUFFERED": "1"})
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self, seconds: float = 60.0) -> None:  # ready at once when idle; a loaded machine takes longer
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} ended with {self.proc.returncode}: {self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).text == "ok":
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"{self.name} did not start: {self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text()[-3000:]

    def kill(self) -> None:
        """SIGKILL: no goodbye, no lease given back, nothing flushed."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


def worker_redis_db(db: int, worker: str | None = None, count: int | None = None) -> int:
    """The Redis database that stands for ``db`` in this pytest process: ``db`` itself in a run of one
    process; under pytest-xdist (``-n``: ``worker`` "gw0", "gw1", ... of ``count``, from the environment
    when not given), one of the databases 1..15 that are this worker's alone, so that no worker empties
    or shares another's (a worker runs one module at a time; a module's numbers stay apart as far as
    its share allows).

    >>> worker_redis_db(12, ""), [worker_redis_db(db, "gw1", 3) for db in (9, 12, 13)]
    (12, [14, 8, 11])
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "") if worker is None else worker
    if not worker.startswith("gw"):
        return db
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) if count is None else count
    share = [n for n in range(1, 16) if (n - 1) % count == int(worker[2:])]
    if not share:
        raise RuntimeError(f"{count} pytest-xdist workers: more than the 15 spare Redis databases, one each")
    return share[db % len(share)]


def fresh_redis(redis_server: str, db: int) -> str:
    """The address of database ``db`` of the test Redis at ``redis_server``, emptied (each module of
    multi-process tests has one of its own; under pytest-xdist, see :func:`worker_redis_db`)."""
    url = redis_server.rsplit("/", 1)[0] + f"/{worker_redis_db(db)}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    return url


@contextlib.contextmanager
def serving(database_url: str, redis_url: str, folder: Path,
            names: Sequence[str] = ("one", "two")) -> Iterator[list[ServeProcess]]:
    """``patience serve`` processes of one arena, ready; stopped at the end whatever happened."""
    procs = [ServeProcess(database_url, redis_url, folder, name) for name in names]
    try:
        for proc in procs:
            proc.wait_ready()
        yield procs
    finally:
        for proc in procs:
            proc.stop()


class Player:
    """A person with an account and one duel page, on the server at ``url``; with ``address`` (a
    loopback address such as 127.0.3.7), every connection of theirs comes from it, as from a home
    of their own (the server's budgets count per address)."""

    def __init__(self, url: str, login: str, address: str | None = None) -> None:
        self.login = login
        self.address = address
        self.http = self._client(url)
        token = self.http.get("/api/me").json()["csrf"]
        answer = self.http.post("/account/signup", data={"csrf": token, "login": login, "name": login.title(),
                                                         "password": PASSWORD},
                                headers={"accept": "application/json"})
        assert answer.status_code == 200, answer.text
        self.user_id: str = answer.json()["user"]["id"]
        self.ws: ClientConnection | None = None
        self.cid = f"page-{login}"
        self.ack = 0
        self.v = 0
        self.side = 0
        self.match_id: str | None = None
        self.starts_at = 0.0  # when the match's clocks start (the countdown after "match found"), on time.monotonic
        self.got: list[dict[str, Any]] = []

    def _client(self, url: str, cookies: httpx.Cookies | None = None) -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=self.address) if self.address else None
        return httpx.Client(base_url=url, timeout=10.0, cookies=cookies, transport=transport)

    def move_to(self, url: str) -> None:
        """Go on with the same cookies on another server process (as after a load balancer's choice)."""
        cookies = self.http.cookies
        self.http.close()
        self.http = self._client(url, cookies)

    def open(self) -> None:
        base = str(self.http.base_url).replace("http://", "ws://").rstrip("/")
        cookie = "; ".join(f"{name}={value}" for name, value in self.http.cookies.items())
        where = {"source_address": (self.address, 0)} if self.address else {}
        self._opened = connect(f"{base}/ws", additional_headers={"Cookie": cookie}, open_timeout=10, **where)
        self.ws = self._opened.__enter__()

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(ConnectionClosed, OSError):
                self._opened.__exit__(None, None, None)
            self.ws = None

    def send(self, t: str, d: dict[str, Any] | None = None) -> None:
        assert self.ws is not None
        self.ws.send(json.dumps({"t": t, "d": d or {}}))

    def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        assert self.ws is not None
        msg = json.loads(self.ws.recv(timeout=timeout))
        self.got.append(msg)
        d = msg["d"]
        if msg["t"] == "duel":
            self.match_id, self.v, self.side = d["id"], d["v"], d["you"]
            self.starts_at = time.monotonic() + d.get("starts_in", 0) / 1000
        elif msg["t"] == "dev":
            self.v = max(self.v, d["v"])
        return msg  # type: ignore[no-any-return]

    def until(self, wanted: Callable[[dict[str, Any]], bool], timeout: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.login}: the wanted message did not come (last: {self.got[-3:]})")
            try:
                msg = self.recv(timeout=left)
            except TimeoutError:
                continue
            if wanted(msg):
                return msg

    def intent(self, t: str, timeout: float = 15.0, **d: Any) -> dict[str, Any]:
        """Send an intent and wait for its answer (the page's own version, a rejection or an error); as a
        person does, only once the match's countdown is over."""
        time.sleep(max(0.0, self.starts_at - time.monotonic()))
        self.ack += 1
        ack = self.ack
        self.send(t, {"ack": ack, **d})
        return self.until(lambda m: m["t"] in ("dev", "rej", "err") and m["d"].get("ack") == ack, timeout)

    def seek(self, fmt: str) -> None:
        self.send("seek", {"format": fmt, "cid": self.cid})

    def join(self, match_id: str, v: int = 0) -> None:
        self.send("match", {"id": match_id, "v": v, "cid": self.cid})

    def rejoin(self, match_id: str, attempts: int = 5) -> dict[str, Any]:
        """Show the match again from its start, on a new connection if this one has died (as a page does)."""
        for _ in range(attempts):
            try:
                if not self.alive():
                    self.close()
                    self.open()
                self.join(match_id, 0)
                return self.until(lambda m: m["t"] == "duel", timeout=20)["d"]  # type: ignore[no-any-return]
            except (ConnectionClosed, OSError):
                self.close()
                time.sleep(0.3)
                self.open()
        raise AssertionError(f"{self.login} could not join match {match_id} again")

    def alive(self) -> bool:
        try:
            assert self.ws is not None
            self.ws.ping().wait(2)
            return True
        except (ConnectionClosed, TimeoutError, AssertionError):
            return False


def meet(first: Player, second: Player, fmt: str) -> str:
    """Open both players' pages; the first waits in pool ``fmt``, the second joins it: the id of
    their match, once both pages have it."""
    for player in (first, second):
        player.open()
    first.seek(fmt)
    first.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == fmt)
    second.seek(fmt)
    match_id: str = second.until(lambda m: m["t"] == "duel")["d"]["id"]
    assert first.until(lambda m: m["t"] == "duel")["d"]["id"] == match_id
    return match_id
