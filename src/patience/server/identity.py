"""Who a request comes from: its address, its browser (a random id in an HttpOnly cookie) and its account.

Pure helpers every room may use, the transport's guards first: they import neither the accounts
service nor the web pages.

- An *address* counts in limits as :func:`address_group` says: an IPv4 address itself, an IPv6
  address's /64 (one host has a whole /64 to pick from). :func:`client_address` reads it from a
  request or a websocket (behind a proxy named by ``--forwarded-allow-ips``, the one it forwards).
- A browser's games and statistics are kept under its id (:func:`browser_id`, :func:`with_cookie`); its
  sessions are shown by a short name drawn from its User-Agent (:func:`browser_label`).
- The signed-in :class:`User` is found from the session cookie by the app's :class:`Sessions` (the
  accounts service, :class:`patience.server.accounts.Accounts`, which keeps only the token's hash); what
  the accounts refuse is an :class:`AccountError`.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import anyio
from starlette.requests import HTTPConnection
from starlette.responses import Response

__all__ = ["COOKIE", "SESSION_COOKIE", "AccountError", "Sessions", "User", "address_group", "browser_id",
           "browser_label", "client_address", "current_user", "sessions_of", "with_cookie"]

COOKIE = "patience_id"
SESSION_COOKIE = "patience_session"
_ID = re.compile(r"^[A-Za-z0-9_-]{16,40}$")
_YEAR = 365 * 24 * 3600


@functools.lru_cache(maxsize=65_536)  # pure, and asked for every connection accepted: a flood repeats few addresses
def address_group(address: str) -> str:
    """The unit the limits count an address in: an IPv4 address itself, an IPv6 address's /64 (one
    host or household has a whole /64 to pick from), anything else as it is.

    >>> address_group("203.0.113.7"), address_group("2001:db8:1:2:a:b:c:d"), address_group("::ffff:192.0.2.1")
    ('203.0.113.7', '2001:db8:1:2::/64', '192.0.2.1')
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def client_address(conn: HTTPConnection) -> str:
    """The client's address (behind a proxy named by ``--forwarded-allow-ips``, the one it forwards)."""
    return conn.client.host if conn.client else "?"


class AccountError(ValueError):
    """A sign-up or sign-in that cannot be done: ``code`` for programs (and translations), the text for people."""

    def __init__(self, code: str, message: str, status: int = 400, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class User:
    """An account as the rooms see it: its id, its login name (private: it signs in) and its display name."""

    id: str
    login: str
    name: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "login": self.login, "name": self.name}


class Sessions(Protocol):
    """What the rooms ask of the accounts about a session token (the app's ``state.accounts``)."""

    def user_for(self, token: str | None) -> User | None:
        """The user a session token belongs to, if the session is still open."""

    def watch(self, token: str | None, signed_out: Callable[[], None]) -> Callable[[], None]:
        """Call ``signed_out`` when the session of ``token`` ends (on any process); returns the undo."""


def browser_id(conn: HTTPConnection) -> tuple[str, bool]:
    """The browser's id from its cookie, or a new one (then ``True``: the cookie must be set)."""
    known = conn.cookies.get(COOKIE, "")
    if _ID.match(known):
        return known, False
    return secrets.token_urlsafe(18), True


def with_cookie(response: Response, browser: str, new: bool) -> Response:
    if new:
        response.set_cookie(COOKIE, browser, max_age=10 * _YEAR, httponly=True, samesite="lax", path="/")
    return response


def sessions_of(conn: HTTPConnection) -> Sessions:
    return conn.app.state.accounts  # type: ignore[no-any-return]


async def current_user(conn: HTTPConnection) -> User | None:
    """The account signed in on this browser, if any."""
    token = conn.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    return await anyio.to_thread.run_sync(sessions_of(conn).user_for, token)


_BROWSERS = (("Edg/", "Edge"), ("OPR/", "Opera"), ("SamsungBrowser/", "Samsung Internet"), ("Firefox/", "Firefox"),
             ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("Chrome/", "Chrome"), ("Safari/", "Safari"))
_SYSTEMS = (("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("Windows", "Windows"),
            ("Mac OS X", "macOS"), ("Macintosh", "macOS"), ("CrOS", "ChromeOS"), ("Linux", "Linux"))


def browser_label(agent: str | None) -> str | None:
    """A short name for a browser from its User-Agent, kept with its session (the rest is not kept).

    >>> browser_label("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
    'Firefox on Linux'
    >>> browser_label("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    ...               "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")
    'Safari on iPhone'
    >>> browser_label("python-httpx/0.27.0")
    'python-httpx/0.27.0'
    """
    if not agent:
        return None
    text = str(agent)
    name = next((label for mark, label in _BROWSERS if mark in text), None)
    system = next((label for mark, label in _SYSTEMS if mark in text), None)
    if name is None:  # a program: its first word, printable and short
        word = text.split(" ", 1)[0]
        return "".join(c for c in word if c.isprintable())[:40] or None
    return f"{name} on {system}" if system else name
