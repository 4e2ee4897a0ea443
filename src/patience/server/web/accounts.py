"""The HTTP side of accounts: the sign-up, sign-in, sign-out and name forms, ``/api/me``, and the account
page's forms (password, sessions, e-mail, export, closing, a forgotten password).

Every handler answers JSON to ``fetch`` (``Accept: application/json``) and redirects a plain form
post back to the page. A form counts only with this browser's CSRF token and from this site.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from patience.server.accounts import SESSION_DAYS, AccountError, User
from patience.server.identity import SESSION_COOKIE, browser_id, client_address, current_user, with_cookie
from patience.server.web.forms import accounts_of, fail, form, wants_json

if TYPE_CHECKING:
    from patience.server.mail import Mailer

__all__ = ["account_api", "close_post", "email_post", "end_session_post", "export_get", "forgot_post", "me_api",
           "name_post", "password_post", "reset_check_post", "reset_post", "signin_post", "signout_post", "signup_post"]

log = logging.getLogger("patience.accounts")


def _safe_next(value: Any) -> str:
    """Where to go after the form: a path of this site only (never another site)."""
    text = str(value or "")
    if not text.startswith("/") or text.startswith("//") or "\\" in text or urlsplit(text).netloc:
        return "/duel"
    return text


def _done(request: Request, user: User | None, next_path: str) -> Response:
    if wants_json(request):
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


async def _signed_in_form(request: Request, mode: str) -> tuple[dict[str, str], User] | Response:
    """The posted form (CSRF checked) and the account signed in, else the answer that refuses it."""
    got = await form(request, mode)
    if isinstance(got, Response):
        return got
    user = await current_user(request)
    if user is None:
        return fail(request, AccountError("sign_in", "sign in first", 401), "signin")
    return got[0], user


def _form_post(mode: str, *, signed_in: bool = False) -> Callable[[Callable[[Request, dict[str, str], Any],
                                                                          Awaitable[Response]]],
                                                                 Callable[[Request], Awaitable[Response]]]:
    """An endpoint for a posted form ``mode``: the form counts only with this browser's CSRF token (and,
    with ``signed_in``, while an account is signed in); then ``handle(request, fields, who)`` answers it,
    ``who`` being the browser's id (or, with ``signed_in``, the account), and an :class:`AccountError`
    it raises is answered as that form's mistake."""
    def wrap(handle: Callable[[Request, dict[str, str], Any], Awaitable[Response]]
             ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            got = await (_signed_in_form(request, mode) if signed_in else form(request, mode))
            if isinstance(got, Response):
                return got
            fields, who = got
            try:
                return await handle(request, fields, who)
            except AccountError as exc:
                return fail(request, exc, mode)
        endpoint.__name__ = endpoint.__qualname__ = handle.__name__
        endpoint.__doc__ = handle.__doc__
        return endpoint
    return wrap


@_form_post("signup")
async def signup_post(request: Request, fields: dict[str, str], browser: str) -> Response:
    user, token = await accounts_of(request).sign_up(fields.get("login", ""), fields.get("name", ""),
                                                     fields.get("password", ""), browser, client_address(request),
                                                     request.headers.get("user-agent"))
    return _set_session(request, _done(request, user, _safe_next(fields.get("next"))), token)


@_form_post("signin")
async def signin_post(request: Request, fields: dict[str, str], browser: str) -> Response:
    user, token = await accounts_of(request).sign_in(fields.get("login", ""), fields.get("password", ""), browser,
                                                     client_address(request), request.cookies.get(SESSION_COOKIE),
                                                     request.headers.get("user-agent"))
    return _set_session(request, _done(request, user, _safe_next(fields.get("next"))), token)


@_form_post("signin")
async def signout_post(request: Request, _fields: dict[str, str], _browser: str) -> Response:
    token = request.cookies.get(SESSION_COOKIE)
    await anyio.to_thread.run_sync(accounts_of(request).sign_out, token)
    await accounts_of(request).signed_out(token)  # the pages signed in with it are signed in no more
    return _set_session(request, _done(request, None, "/"), None)


@_form_post("name", signed_in=True)
async def name_post(request: Request, fields: dict[str, str], user: User) -> Response:
    user = await accounts_of(request).change_name(user.id, fields.get("name", ""))
    return _done(request, user, _safe_next(fields.get("next") or "/account"))


async def me_api(request: Request) -> Response:
    """Who is signed in on this browser, and the CSRF token for its forms."""
    browser, new = browser_id(request)
    user = await current_user(request)
    token = await anyio.to_thread.run_sync(accounts_of(request).csrf_token, browser)
    me: dict[str, Any] = {"user": user.to_dict() if user else None, "csrf": token,
                          "mail": accounts_of(request).mailer is not None}
    if user is not None:  # the badge of results of Play now that came in since the player last looked
        me["playnow_unseen"] = await request.app.state.arena.playnow.unseen(user.id)
    response = JSONResponse(me, headers={"Cache-Control": "no-store"})
    return with_cookie(response, browser, new)


# -- the account page --------------------------------------------------------------------------------


def _ok(request: Request, extra: dict[str, Any] | None = None, next_path: str = "/account") -> Response:
    if wants_json(request):
        return JSONResponse({"ok": True, **(extra or {})})
    return RedirectResponse(next_path, status_code=303)


async def account_api(request: Request) -> Response:
    """What the account page shows of the account signed in: its sessions and its (private) e-mail address."""
    user = await current_user(request)
    if user is None:
        return JSONResponse({"ok": False, "error": "sign_in", "msg": "sign in first"}, status_code=401,
                            headers={"Cache-Control": "no-store"})
    accounts = accounts_of(request)
    token = request.cookies.get(SESSION_COOKIE)
    sessions = await anyio.to_thread.run_sync(accounts.sessions, user.id, token)
    email = await anyio.to_thread.run_sync(accounts.email_of, user.id)
    return JSONResponse({"ok": True, "user": user.to_dict(), "sessions": sessions, "email": email,
                         "mail": accounts.mailer is not None}, headers={"Cache-Control": "no-store"})


@_form_post("password", signed_in=True)
async def password_post(request: Request, fields: dict[str, str], user: User) -> Response:
    await accounts_of(request).change_password(user.id, fields.get("old", ""), fields.get("new", ""),
                                               request.cookies.get(SESSION_COOKIE), client_address(request))
    return _ok(request)


@_form_post("sessions", signed_in=True)
async def end_session_post(request: Request, fields: dict[str, str], user: User) -> Response:
    accounts = accounts_of(request)
    token = request.cookies.get(SESSION_COOKIE)
    mine = [s for s in await anyio.to_thread.run_sync(accounts.sessions, user.id, token) if s["current"]]
    if not await accounts.end_session(user.id, fields.get("session", "")):
        raise AccountError("no_session", "no such session", 404)
    if mine and mine[0]["id"] == fields.get("session"):  # this browser's own: signed out here
        return _set_session(request, _ok(request, {"signed_out": True}, "/account"), None)
    return _ok(request)


@_form_post("email", signed_in=True)
async def email_post(request: Request, fields: dict[str, str], user: User) -> Response:
    email = await accounts_of(request).set_email(user.id, fields.get("email", ""), fields.get("password", ""),
                                                 client_address(request))
    return _ok(request, {"email": email})


async def export_get(request: Request) -> Response:
    """The account's data as a JSON file to download (see :mod:`patience.server.storage.export`)."""
    user = await current_user(request)
    if user is None:
        return JSONResponse({"ok": False, "error": "sign_in", "msg": "sign in first"}, status_code=401)
    data = await anyio.to_thread.run_sync(accounts_of(request).export, user.id)
    if data is None:
        return JSONResponse({"ok": False, "error": "no_user", "msg": "no such account"}, status_code=404)
    body = await anyio.to_thread.run_sync(lambda: json.dumps(data, ensure_ascii=False, indent=1).encode())
    name = f"patience-arena-{user.login}.json"
    return Response(body, media_type="application/json", headers={
        "Content-Disposition": f"attachment; filename=\"{name}\"; filename*=UTF-8''{quote(name)}",
        "Cache-Control": "no-store"})


@_form_post("close", signed_in=True)
async def close_post(request: Request, fields: dict[str, str], user: User) -> Response:
    await accounts_of(request).close(user.id, fields.get("password", ""), client_address(request))
    return _set_session(request, _ok(request, {"closed": True}, "/"), None)


_sending: set[asyncio.Task[None]] = set()  # mails on their way (a task nobody holds may be collected)

RESET_TEXT = {
    "en": ("Patience Arena: set a new password",
           "Someone (you, we hope) asked for a new password for your account on Patience Arena.\n\n"
           "Set it here within {minutes} minutes (the link works once):\n\n{link}\n\n"
           "Every browser signed in to the account is signed out. If you did not ask, ignore this mail: "
           "your password stays as it is.\n"),
    "de": ("Patience Arena: neues Passwort",
           "Jemand (hoffentlich du) hat für dein Konto bei Patience Arena ein neues Passwort angefordert.\n\n"
           "Setze es hier innerhalb von {minutes} Minuten (der Link gilt einmal):\n\n{link}\n\n"
           "Jeder angemeldete Browser wird abgemeldet. Wenn du es nicht warst, beachte diese Mail nicht: "
           "dein Passwort bleibt, wie es ist.\n"),
    "it": ("Patience Arena: nuova password",
           "Qualcuno (speriamo tu) ha chiesto una nuova password per il tuo account su Patience Arena.\n\n"
           "Impostala qui entro {minutes} minuti (il link vale una volta):\n\n{link}\n\n"
           "Ogni browser collegato all'account viene disconnesso. Se non sei stato tu, ignora questa mail: "
           "la password resta com'è.\n"),
}


def _reset_sender(request: Request, lang: str, mailer: Mailer) -> Any:
    from patience.server.accounts import RESET_MINUTES

    accounts = accounts_of(request)
    subject, text = RESET_TEXT.get(lang, RESET_TEXT["en"])

    def send(email: str, token: str) -> None:
        link = f"{accounts.public_url.rstrip('/')}/account?reset={token}"
        body = text.format(minutes=RESET_MINUTES, link=link)

        async def go() -> None:
            try:
                await anyio.to_thread.run_sync(mailer.send, email, subject, body)
            except Exception as exc:
                log.warning("reset mail not sent: %s", type(exc).__name__ + ": " + str(exc)[:200])

        task = asyncio.create_task(go())
        _sending.add(task)
        task.add_done_callback(_sending.discard)
    return send


@_form_post("forgot")
async def forgot_post(request: Request, fields: dict[str, str], _browser: str) -> Response:
    """Send a reset link to the account's e-mail address, if it has one: the same answer either way."""
    accounts = accounts_of(request)
    mailer = accounts.mailer
    if mailer is None:
        raise AccountError("no_mail", "this server sends no mail", 404)
    lang = fields.get("lang", "en")
    await accounts.request_reset(fields.get("who", ""), client_address(request), _reset_sender(request, lang, mailer))
    return _ok(request, {"sent": True}, "/account?sent=1")


@_form_post("reset")
async def reset_check_post(request: Request, fields: dict[str, str], _browser: str) -> Response:
    """Whether the reset link's token still sets a password (``works``): the page says at once that a used or
    old link does not, before its form. A form post (CSRF checked), so that the token is in no address."""
    return _ok(request, {"works": await accounts_of(request).reset_link_works(fields.get("token", ""))})


@_form_post("reset")
async def reset_post(request: Request, fields: dict[str, str], _browser: str) -> Response:
    await accounts_of(request).reset_password(fields.get("token", ""), fields.get("password", ""),
                                              client_address(request))
    # signed out everywhere, this browser too: the player signs in with the new password
    return _set_session(request, _ok(request, {"reset": True}, "/account?reset_done=1"), None)
