"""Text from outside, checked once where it comes in: a character no database keeps is refused there.

PostgreSQL refuses a NUL in text, and neither database can store a lone surrogate (half of a
UTF-16 pair, which no UTF-8 text encodes); a query that met one would fail as a server error. So
:class:`TextGuard` answers a request whose path, query or headers hold one, percent-encoded or not,
with a 400 (``bad_text``) before any handler runs, and closes such a socket before it opens; the
posted forms' fields are checked as they are read (:func:`patience.server.web.forms.read_form`)
and a socket's messages as they are decoded (:func:`patience.server.protocol.decode`).
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from patience.server.protocol import refused_text

__all__ = ["BAD_TEXT", "TextGuard", "refused_bytes"]

BAD_TEXT = "text may not hold NUL or a lone surrogate"

# NUL, or the UTF-8 form of U+D800..U+DFFF (which strict UTF-8 refuses, and surrogatepass lets in)
_REFUSED_UTF8 = re.compile(rb"\x00|\xed[\xa0-\xbf]")


def refused_bytes(raw: bytes) -> bool:
    """Whether ``raw`` (percent-encoded or not) holds NUL or a lone surrogate in UTF-8.

    >>> refused_bytes(b"/api/profile/carl"), refused_bytes(b"/api/profile/%00"), refused_bytes(b"a=%ED%A0%80")
    (False, True, True)
    """
    return _REFUSED_UTF8.search(raw) is not None or _REFUSED_UTF8.search(unquote_to_bytes(raw)) is not None


def _where(scope: Scope) -> str | None:
    """The part of the request that holds a refused character, if one does."""
    if refused_text(scope.get("path", "")) or refused_bytes(scope.get("raw_path") or b""):
        return "the address"
    if refused_bytes(scope.get("query_string", b"")):
        return "the query"
    if any(b"\x00" in value for _, value in scope.get("headers", ())):
        return "a header"
    return None


class TextGuard:
    """Refuse a request or a socket whose address, query or headers hold NUL or a lone surrogate."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        where = _where(scope) if scope["type"] in ("http", "websocket") else None
        if where is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            answer = JSONResponse({"ok": False, "error": "bad_text", "msg": f"{where}: {BAD_TEXT}"}, status_code=400)
            await answer(scope, receive, send)
        else:
            await send({"type": "websocket.close", "code": 1007, "reason": f"{where}: {BAD_TEXT}"})
