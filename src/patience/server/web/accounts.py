"""The HTTP side of accounts: the sign-up, sign-in, sign-out and name forms, and ``/api/me``.

Every handler answers JSON to ``fetch`` (``Accept: application/json``) and redirects a plain form
post back to the page. A form counts only with this browser's CSRF token and from this site.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from patience.server.accounts import SESSION_DAYS, AccountError, User
from patience.server.web.identity import SESSION_COOKIE, accounts_of, browser_id, current_user, with_cookie

__all__ = ["me_api", "name_post", "signin_post", "signout_post", "signup_post"]


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _safe_next(value: Any) -> str:
    """Where to go after the form: a path of this site only (never another site)."""
    text = str(value or "")
    if not text.startswith("/") or text.startswith("//") or "\\" in text or urlsplit(text).netloc:
        return "/duel"
    return text


def _same_site(request: Request) -> bool:
    origin = request.headers.get("origin")
    if not origin or origin == "null":
        return origin is None
    return urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()


def _fail(request: Request, exc: AccountError, mode: str) -> Response:
    if _wants_json(request):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return JSONResponse({"ok": False, "error": exc.code, "msg": str(exc), "retry_after": exc.retry_after},
                            status_code=exc.status, headers=headers)
    query = {"mode": mode, "error": exc.code}
    if exc.retry_after:
        query["wait"] = str(exc.retry_after)
    return RedirectResponse(f"/account?{urlencode(query)}", status_code=303)


def _done(request: Request, user: User | None, next_path: str) -> Response:
    if _wants_json(request):
        return JSONResponse({"ok": True, "user": user.to_dict() if user else None, "next": next_path})
    return RedirectResponse(next_path, status_code=303)


def _set_session(request: Request, response: Response, token: str | None) -> Response:
    secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    if token is None:
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=secure)
    else:
        response.set_cookie(SESSION_COOKIE, token, max_age=SESSION_DAYS * 86400, path="/", httponly=True,
                            samesite="lax", secure=secure)
    return response


MAX_FORM_BYTES = 8192


def _address(request: Request) -> str:
    """The client's address (behind a proxy named by ``--forwarded-allow-ips``, the one it forwards)."""
    return request.client.host if request.client else "?"


async def _read_form(request: Request) -> dict[str, str]:
    """An URL-encoded form body (what the pages post); anything else, or too long, reads as empty."""
    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return {}
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return {}
    try:
        pairs = parse_qsl(body.decode(), keep_blank_values=True, max_num_fields=16, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {key: value for key, value in pairs if len(value) <= 1000}


async def _form(request: Request, mode: str) -> tuple[dict[str, str], str] | Response:
    """The posted form if its CSRF token is this browser's, else the 403 answer."""
    browser, new = browser_id(request)
    fields = await _read_form(request)
    if new or not _same_site(request) or not accounts_of(request).csrf_ok(browser, fields.get("csrf")):
        return _fail(request, AccountError("csrf", "the form is stale or from another site: reload the page", 403),
                     mode)
    return fields, browser


async def signup_post(request: Request) -> Response:
    got = await _form(request, "signup")
    if isinstance(got, Response):
        return got
    fields, browser = got
    try:
        user, token = await accounts_of(request).sign_up(fields.get("login", ""), fields.get("name", ""),
                                                         fields.get("password", ""), browser, _address(request))
    except AccountError as exc:
        return _fail(request, exc, "signup")
    return _set_session(request, _done(request, user, _safe_next(fields.get("next"))), token)


async def signin_post(request: Request) -> Response:
    got = await _form(request, "signin")
    if isinstance(got, Response):
        return got
    fields, browser = got
    try:
        user, token = await accounts_of(request).sign_in(fields.get("login", ""), fields.get("password", ""), browser,
                                                         _address(request), request.cookies.get(SESSION_COOKIE))
    except AccountError as exc:
        return _fail(request, exc, "signin")
    return _set_session(request, _done(request, user, _safe_next(fields.get("next"))), token)


async def signout_post(request: Request) -> Response:
    got = await _form(request, "signin")
    if isinstance(got, Response):
        return got
    token = request.cookies.get(SESSION_COOKIE)
    await anyio.to_thread.run_sync(accounts_of(request).sign_out, token)
    await accounts_of(request).signed_out(token)  # the pages signed in with it are signed in no more
    return _set_session(request, _done(request, None, "/"), None)


async def name_post(request: Request) -> Response:
    got = await _form(request, "name")
    if isinstance(got, Response):
        return got
    fields, _ = got
    user = await current_user(request)
    if user is None:
        return _fail(request, AccountError("sign_in", "sign in first", 401), "signin")
    try:
        user = await anyio.to_thread.run_sync(accounts_of(request).rename, user.id, fields.get("name", ""))
    except AccountError as exc:
        return _fail(request, exc, "name")
    return _done(request, user, _safe_next(fields.get("next") or "/account"))


async def me_api(request: Request) -> Response:
    """Who is signed in on this browser, and the CSRF token for its forms."""
    browser, new = browser_id(request)
    user = await current_user(request)
    token = await anyio.to_thread.run_sync(accounts_of(request).csrf_token, browser)
    me: dict[str, Any] = {"user": user.to_dict() if user else None, "csrf": token}
    if user is not None:  # the badge of results of Play now that came in since the player last looked
        me["playnow_unseen"] = await request.app.state.arena.playnow.unseen(user.id)
    response = JSONResponse(me, headers={"Cache-Control": "no-store"})
    return with_cookie(response, browser, new)
