"""``patience serve --forwarded-allow-ips``: behind a proxy, the sign-in limits count the player's address
that the proxy forwards; without the option, no forwarding header is believed."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from arena_processes import ServeProcess
from patience.server.storage.store import sqlite_url


def wrong_sign_ins(url: str, forwarded_for: str, times: int) -> list[int]:
    with httpx.Client(base_url=url) as client:
        csrf = client.get("/api/me").json()["csrf"]
        return [client.post("/account/signin", data={"csrf": csrf, "login": "nobody", "password": f"guess-{i}"},
                            headers={"accept": "application/json", "x-forwarded-for": forwarded_for}).status_code
                for i in range(times)]


@pytest.mark.parametrize("trusted", [True, False])
def test_the_forwarded_address_counts_only_from_a_trusted_proxy(tmp_path: Path, trusted: bool) -> None:
    extra = ("--forwarded-allow-ips", "127.0.0.1") if trusted else ()
    server = ServeProcess(sqlite_url(tmp_path / "db.sqlite3"), None, tmp_path, "serve", extra)
    try:
        server.wait_ready()
        assert wrong_sign_ins(server.url, "203.0.113.9", 21)[-1] == 429  # 20 failures an address
        # another player behind the same proxy: its own address when the proxy is trusted
        assert wrong_sign_ins(server.url, "198.51.100.2", 1) == ([401] if trusted else [429])
    finally:
        server.stop()
