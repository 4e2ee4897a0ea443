"""Fair play's JSON API (docs/fairplay.md): a signed-in player reports an account; moderators (the role
``moderator`` or ``admin``, given with ``patience admin grant``) read the queue and an account's evidence
and act on it. Every moderator address answers 404 to anyone else, as if it did not exist."""

from __future__ import annotations

import anyio
from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from patience.server.identity import current_user
from patience.server.storage import fairplay as fp
from patience.server.storage.roles import RoleRow, close_account
from patience.server.storage.store import Store, UserRow
from patience.server.web import pages
from patience.server.web.forms import form

__all__ = ["REPORTS_PER_HOUR", "mod_account", "mod_action", "mod_page", "mod_queue", "report_post"]

NO_STORE = {"Cache-Control": "no-store"}
REPORTS_PER_HOUR = 10  # reports of one account an hour
REPORT_WINDOW_S = 3600.0
NOTE_CHARS = 500


def _error(code: str, message: str, status: int) -> Response:
    return JSONResponse({"error": code, "msg": message}, status_code=status, headers=NO_STORE)


def _store(request: Request) -> Store:
    return request.app.state.store  # type: ignore[no-any-return]


def _exists(store: Store, user_id: str) -> bool:
    with store.engine.connect() as connection:
        return connection.scalar(select(UserRow.id).where(UserRow.id == user_id)) is not None


async def report_post(request: Request) -> Response:
    """``POST /api/report`` (a form with the CSRF token: ``account``, ``category`` bot|name|other, ``note``
    optional, at most 500 characters): 200 ``{"ok": true}``; 401 signed out, 400 bad fields, 404 no such
    account, 429 ``too_many_reports`` (10 an hour an account, with ``retry_after`` seconds)."""
    got = await form(request, "report")
    if isinstance(got, Response):
        return got
    fields, _ = got
    user = await current_user(request)
    if user is None:
        return _error("sign_in", "sign in to report an account", 401)
    account, category, note = fields.get("account", ""), fields.get("category", ""), fields.get("note", "").strip()
    if category not in fp.REPORT_CATEGORIES:
        return _error("bad_category", f"the categories are {', '.join(fp.REPORT_CATEGORIES)}", 400)
    if len(note) > NOTE_CHARS:
        return _error("bad_note", f"a note has at most {NOTE_CHARS} characters", 400)
    if account == user.id:
        return _error("bad_account", "you cannot report yourself", 400)
    store = _store(request)
    if not account or len(account) > 24 or not await anyio.to_thread.run_sync(_exists, store, account):
        return _error("not_found", "no such account", 404)
    wait = await request.app.state.bus.hit(f"rate:report:{user.id}", REPORT_WINDOW_S, REPORTS_PER_HOUR)
    if wait:
        return JSONResponse({"error": "too_many_reports", "msg": f"at most {REPORTS_PER_HOUR} reports an hour",
                             "retry_after": int(wait) + 1}, status_code=429, headers=NO_STORE)
    await anyio.to_thread.run_sync(fp.add_report, store.engine, user.id, account, category, note or None)
    return JSONResponse({"ok": True}, headers=NO_STORE)


def _is_moderator(store: Store, user_id: str) -> bool:
    with store.engine.connect() as connection:
        return connection.scalar(select(RoleRow.role).where(RoleRow.user_id == user_id,
                                                            RoleRow.role.in_(("moderator", "admin")))) is not None


async def _moderator(request: Request) -> str | None:
    user = await current_user(request)
    if user is None or not await anyio.to_thread.run_sync(_is_moderator, _store(request), user.id):
        return None
    return user.id


def _hidden() -> Response:
    return _error("not_found", "no such page", 404)


_MOD_PAGE = pages.page_of("mod")


async def mod_page(request: Request) -> Response:
    """``GET /mod``: the moderation page (``web/mod.html``, ``js/mod.js``); the 404 page for everyone else."""
    if await _moderator(request) is None:
        return await pages.not_found_page(request, Exception("no such page"))
    return await _MOD_PAGE(request)  # type: ignore[no-any-return]


async def mod_queue(request: Request) -> Response:
    """``GET /api/mod/queue``: accounts flagged for review or reported, highest score first."""
    if await _moderator(request) is None:
        return _hidden()
    rows = await anyio.to_thread.run_sync(fp.queue, _store(request).engine)
    return JSONResponse({"accounts": rows}, headers=NO_STORE)


async def mod_account(request: Request) -> Response:
    """``GET /api/mod/account/{id}``: an account's standing, score, rated games with evidence, reports, audit."""
    if await _moderator(request) is None:
        return _hidden()
    found = await anyio.to_thread.run_sync(fp.account_view, _store(request).engine, request.path_params["id"])
    if found is None:
        return _error("not_found", "no such account", 404)
    return JSONResponse(found, headers=NO_STORE)


async def mod_action(request: Request) -> Response:
    """``POST /api/mod/account/{id}`` (a form with the CSRF token: ``action`` mark_bot|clear|close, ``note``
    required): the account's state after it. Marking gives its opponents' points back."""
    moderator = await _moderator(request)
    if moderator is None:
        return _hidden()
    got = await form(request, "mod")
    if isinstance(got, Response):
        return got
    fields, _ = got
    action, note = fields.get("action", ""), fields.get("note", "").strip()
    if action not in fp.ACTIONS:
        return _error("bad_action", f"the actions are {', '.join(fp.ACTIONS)}", 400)
    if not note:
        return _error("bad_note", "say why in a note", 400)
    store = _store(request)
    user_id = request.path_params["id"]
    found = await anyio.to_thread.run_sync(fp.account_view, store.engine, user_id)
    if found is None:
        return _error("not_found", "no such account", 404)
    state = await anyio.to_thread.run_sync(fp.act, store.engine, user_id, action, note[:2000], moderator)
    if state == "marked":  # its open matches close, its rematches and links too, on every process
        await request.app.state.arena.marked(user_id)
    if action == "close" and not found["user"]["login"].startswith("~"):
        await anyio.to_thread.run_sync(close_account, store, found["user"]["login"])
    return JSONResponse({"id": user_id, "state": state}, headers=NO_STORE)
