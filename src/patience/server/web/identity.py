"""Who a request comes from: the browser (a random id in an HttpOnly cookie) and its account.

A browser's games and statistics are kept under its id; the signed-in account is found from the
session cookie (:class:`patience.server.accounts.Accounts` keeps only the token's hash).
"""

from __future__ import annotations

import re
import secrets

import anyio
from starlette.requests import HTTPConnection
from starlette.responses import Response

from patience.server.accounts import Accounts, User

__all__ = ["COOKIE", "SESSION_COOKIE", "accounts_of", "browser_id", "current_user", "with_cookie"]

COOKIE = "patience_id"
SESSION_COOKIE = "patience_session"
_ID = re.compile(r"^[A-Za-z0-9_-]{16,40}$")
_YEAR = 365 * 24 * 3600


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


def accounts_of(conn: HTTPConnection) -> Accounts:
    return conn.app.state.accounts  # type: ignore[no-any-return]


async def current_user(conn: HTTPConnection) -> User | None:
    """The account signed in on this browser, if any."""
    token = conn.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    return await anyio.to_thread.run_sync(accounts_of(conn).user_for, token)
