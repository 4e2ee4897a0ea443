"""The forms the pages post, read in one place: an URL-encoded body of bounded size, the CSRF token
of this browser, from this site only; a refusal answered as JSON to ``fetch`` or by a redirect back to
the account page. Every module of ``web/`` that takes a form uses :func:`form`.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from patience.server.accounts import AccountError, Accounts
from patience.server.identity import browser_id
from patience.server.web.edge import BAD_TEXT, refused_bytes

__all__ = ["MAX_FORM_BYTES", "accounts_of", "fail", "form", "read_form", "same_site", "wants_json"]


def accounts_of(conn: HTTPConnection) -> Accounts:
    """The app's accounts service."""
    return conn.app.state.accounts  # type: ignore[no-any-return]


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def same_site(request: Request) -> bool:
    origin = request.headers.get("origin")
    if not origin or origin == "null":
        return origin is None
    return urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()


def fail(request: Request, exc: AccountError, mode: str) -> Response:
    if wants_json(request):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return JSONResponse({"ok": False, "error": exc.code, "msg": str(exc), "retry_after": exc.retry_after},
                            status_code=exc.status, headers=headers)
    query = {"mode": mode, "error": exc.code}
    if exc.retry_after:
        query["wait"] = str(exc.retry_after)
    return RedirectResponse(f"/account?{urlencode(query)}", status_code=303)


MAX_FORM_BYTES = 8192


async def read_form(request: Request) -> dict[str, str]:
    """An URL-encoded form body (what the pages post); anything else, or too long, reads as empty. A field
    that holds NUL or a lone surrogate (no database keeps either) is an :class:`AccountError` ``bad_text``."""
    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return {}
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return {}
    if refused_bytes(body):
        raise AccountError("bad_text", f"the form: {BAD_TEXT}", 400)
    try:
        pairs = parse_qsl(body.decode(), keep_blank_values=True, max_num_fields=16, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {key: value for key, value in pairs if len(value) <= 1000}


async def form(request: Request, mode: str) -> tuple[dict[str, str], str] | Response:
    """The posted form if its CSRF token is this browser's, else the 403 answer."""
    browser, new = browser_id(request)
    try:
        fields = await read_form(request)
    except AccountError as exc:
        return fail(request, exc, mode)
    if new or not same_site(request) or not accounts_of(request).csrf_ok(browser, fields.get("csrf")):
        return fail(request, AccountError("csrf", "the form is stale or from another site: reload the page", 403),
                     mode)
    return fields, browser


