"""The deployment of docs/deploy.md, run for real: nginx (Debian's) with deploy/nginx.conf in front of
two ``patience serve`` processes on PostgreSQL and Redis. Two players meet and play through the
proxy; the process that owns their match is killed, and the match goes on behind the same address.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from arena_processes import Player, ServeProcess, free_port, fresh_redis

pytestmark = pytest.mark.slow

CONFIG = Path(__file__).resolve().parents[1] / "deploy" / "nginx.conf"
FORMAT = "reloaded/standard/300"


@pytest.fixture
def proxied(postgres_url: str, redis_server: str, tmp_path: Path) -> Iterator[tuple[str, list[ServeProcess], str]]:
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        pytest.fail("nginx is not installed: apt-get install -y nginx (scripts/test does)", pytrace=False)
    arena_redis = fresh_redis(redis_server, 10)
    procs = [ServeProcess(postgres_url, arena_redis, tmp_path, name) for name in ("one", "two")]
    port = free_port()
    upstreams = "\n        ".join(f"server 127.0.0.1:{p.port} max_fails=1 fail_timeout=3s;" for p in procs)
    text = CONFIG.read_text().replace("@LISTEN@", f"127.0.0.1:{port}").replace("@UPSTREAMS@", upstreams)
    # this test's own files: temporary folders and logs in tmp_path rather than /var
    own = "\n    ".join(f"{kind}_temp_path {tmp_path / kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                           "uwsgi", "scgi"))
    text = text.replace("http {", f"http {{\n    {own}\n    access_log off;", 1)
    (tmp_path / "nginx.conf").write_text(text)
    command = [nginx, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g",
               f"daemon off; pid {tmp_path / 'nginx.pid'}; error_log {tmp_path / 'nginx-error.log'};"]
    check = subprocess.run([*command, "-t"], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    server = subprocess.Popen(command)
    try:
        for proc in procs:
            proc.wait_ready()
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).text == "ok":
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "nginx-error.log").read_text()
            time.sleep(0.1)
        yield url, procs, arena_redis
    finally:
        server.terminate()
        server.wait(timeout=10)
        for proc in procs:
            proc.stop()


def test_a_duel_through_nginx_goes_on_when_a_process_dies(proxied: tuple[str, list[ServeProcess], str]) -> None:
    url, procs, arena_redis = proxied
    tag = secrets.token_hex(3)
    anna, bruno = Player(url, f"anna{tag}"), Player(url, f"bruno{tag}")
    for player in (anna, bruno):
        player.open()
    anna.seek(FORMAT)
    anna.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)
    bruno.seek(FORMAT)
    match_id = bruno.until(lambda m: m["t"] == "duel")["d"]["id"]
    anna.until(lambda m: m["t"] == "duel")
    for player in (anna, bruno):
        for _ in range(3):
            assert player.intent("stock")["t"] == "dev"
    lease = redis.Redis.from_url(arena_redis).get(f"patience:match:{match_id}")
    assert lease is not None
    owner = next(p for p in procs if f"-{p.proc.pid}-" in lease.decode())
    owner.kill()
    for player in (anna, bruno):  # whichever socket died comes back through the same address, as a page does
        back = player.rejoin(match_id)
        assert back["status"]["moves"] == 3 and back["opp"]["moves"] == 3
    for player in (anna, bruno):
        assert player.intent("stock", timeout=20)["d"]["status"]["moves"] == 4
        player.intent("giveup")
    end = anna.until(lambda m: m["t"] == "dev" and m["d"]["end"] is not None)["d"]["end"]
    assert end["outcomes"] == ["given_up", "given_up"]
    assert httpx.get(f"{url}/api/matches/{match_id}").json()["state"] == "over"
