"""The tournaments' JSON API: the list (to come, going on, lately ended) with the duel formats one may
choose, making a tournament, and one tournament with its standings (live on the websocket: ``tour``;
see :mod:`patience.server.arena.tournaments`)."""

from __future__ import annotations

import functools

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from patience.duel import FORMATS, LIMITS, Format
from patience.server.accounts import AccountError
from patience.server.arena.tournaments import (
    AHEAD_DAYS,
    NAME_LONGEST,
    OPEN_PER_ACCOUNT,
    PASSWORD_LONGEST,
    FormError,
    Refused,
    check_password,
    new_tournament,
    whole_number,
)
from patience.server.identity import client_address, current_user
from patience.server.storage.tournaments import list_tournaments
from patience.server.web.forms import form
from patience.tournament import MAX_MINUTES, MIN_MINUTES

__all__ = ["tournament_api", "tournaments_api", "tournaments_make"]

NO_STORE = {"Cache-Control": "no-store"}


def _error(code: str, message: str, status: int) -> Response:
    return JSONResponse({"error": code, "msg": message}, status_code=status, headers=NO_STORE)


def _now_ms(request: Request) -> int:
    return int(request.app.state.arena.wall() * 1000)


async def tournaments_api(request: Request) -> Response:
    """``GET /api/tournaments``: the tournaments to come and going on (the site's first), then those ended
    in the last day; the duel formats, the lengths and the other limits of a new one (for the form's
    messages); for a signed-in player, whether they ``joined`` each."""
    now_ms = _now_ms(request)
    user = await current_user(request)
    listed = await anyio.to_thread.run_sync(functools.partial(
        list_tournaments, request.app.state.store.engine, now_ms, user_id=user.id if user is not None else None))
    formats = [Format(game, variant, limit).key for game, variants in FORMATS.items() for variant in variants
               for limit in LIMITS]
    limits = {"name": [3, NAME_LONGEST], "ahead_days": AHEAD_DAYS, "password": PASSWORD_LONGEST,
              "open": OPEN_PER_ACCOUNT}
    return JSONResponse({"tournaments": listed, "formats": formats, "minutes": [MIN_MINUTES, MAX_MINUTES],
                         "limits": limits, "now_ms": now_ms}, headers=NO_STORE)


async def tournaments_make(request: Request) -> Response:
    """``POST /api/tournaments`` (a form with the CSRF token: ``name``, ``format``, ``minutes``, ``start_ms``
    (0 or empty: now), ``password`` (optional)): the new tournament's id. 401 signed out; 400 a mistake
    of the form, its code naming which (``bad_name``, ``bad_format``, ``bad_minutes``, ``bad_start``,
    ``long_password``); 429 too many (``too_many_open``, ``too_many_tournaments``, ``busy``: see
    :mod:`patience.server.arena.tournaments`)."""
    got = await form(request, "tournament")
    if isinstance(got, Response):
        return got
    fields, _ = got
    user = await current_user(request)
    if user is None:
        return _error("sign_in", "sign in to make a tournament", 401)
    now_ms = _now_ms(request)
    try:
        minutes = whole_number(fields.get("minutes", ""), "bad_minutes", "a tournament's length in minutes")
        start_ms = whole_number(fields.get("start_ms", ""), "bad_start", "a tournament's start")
        made = new_tournament(fields.get("name", ""), fields.get("format", ""), minutes, start_ms, now_ms, user.id)
        password = check_password(fields.get("password", ""))
    except FormError as exc:
        return _error(exc.code, str(exc), 400)
    try:
        made = await request.app.state.arena.tournaments.make(made, client_address(request), password,
                                                             request.app.state.accounts.hashing)
    except (Refused, AccountError) as exc:
        headers = {**NO_STORE, "Retry-After": str(exc.retry_after)} if exc.retry_after else NO_STORE
        return JSONResponse({"error": exc.code, "msg": str(exc), "retry_after": exc.retry_after}, status_code=429,
                            headers=headers)
    return JSONResponse({"id": made.id, "url": f"/tournament?id={made.id}"}, headers=NO_STORE)


async def tournament_api(request: Request) -> Response:
    """``GET /api/tournaments/{id}``: a tournament and its standings (as the websocket's ``tour``)."""
    user = await current_user(request)
    view = await request.app.state.arena.tournaments.view(str(request.path_params["id"])[:16],
                                                           user.id if user is not None else None)
    if view is None:
        return _error("not_found", "there is no such tournament", 404)
    return JSONResponse(msgspec.to_builtins(view), headers=NO_STORE)
