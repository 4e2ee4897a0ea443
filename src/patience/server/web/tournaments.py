"""The tournaments' JSON API: the list (to come, going on, lately ended) with the duel formats one may
choose, making a tournament, and one tournament with its standings (live on the websocket: ``tour``;
see :mod:`patience.server.arena.tournaments`)."""

from __future__ import annotations

import dataclasses
import functools

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from patience.duel import FORMATS, LIMITS, Format
from patience.errors import BadInputError
from patience.server.accounts import AccountError
from patience.server.arena.tournaments import check_password, new_tournament
from patience.server.storage.tournaments import list_tournaments, make_tournament
from patience.server.web.accounts import _form
from patience.server.web.identity import current_user
from patience.tournament import MAX_MINUTES, MIN_MINUTES

__all__ = ["tournament_api", "tournaments_api", "tournaments_make"]

NO_STORE = {"Cache-Control": "no-store"}


def _error(code: str, message: str, status: int) -> Response:
    return JSONResponse({"error": code, "msg": message}, status_code=status, headers=NO_STORE)


def _now_ms(request: Request) -> int:
    return int(request.app.state.arena.wall() * 1000)


async def tournaments_api(request: Request) -> Response:
    """``GET /api/tournaments``: the tournaments to come and going on, then those ended in the last day;
    the duel formats and the lengths a new one may have; for a signed-in player, whether they ``joined``
    each."""
    now_ms = _now_ms(request)
    user = await current_user(request)
    listed = await anyio.to_thread.run_sync(functools.partial(
        list_tournaments, request.app.state.store.engine, now_ms, user_id=user.id if user is not None else None))
    formats = [Format(game, variant, limit).key for game, variants in FORMATS.items() for variant in variants
               for limit in LIMITS]
    return JSONResponse({"tournaments": listed, "formats": formats, "minutes": [MIN_MINUTES, MAX_MINUTES],
                         "now_ms": now_ms}, headers=NO_STORE)


async def tournaments_make(request: Request) -> Response:
    """``POST /api/tournaments`` (a form with the CSRF token: ``name``, ``format``, ``minutes``, ``start_ms``
    (0 or empty: now), ``password`` (optional)): the new tournament's id. 401 signed out, 400 bad input."""
    got = await _form(request, "tournament")
    if isinstance(got, Response):
        return got
    fields, _ = got
    user = await current_user(request)
    if user is None:
        return _error("sign_in", "sign in to make a tournament", 401)
    now_ms = _now_ms(request)
    try:
        minutes = int(fields.get("minutes", "") or "0")
        start_ms = int(fields.get("start_ms", "") or "0")
        made = new_tournament(fields.get("name", ""), fields.get("format", ""), minutes, start_ms, now_ms, user.id)
        password = check_password(fields.get("password", ""))
    except ValueError:
        return _error("bad_tournament", "the length and the start are whole numbers", 400)
    except BadInputError as exc:
        return _error("bad_tournament", str(exc), 400)
    if password:
        try:  # the accounts' hashing: off the event loop, a bounded number at once
            made = dataclasses.replace(made, password=await request.app.state.accounts.hashing.hash(password))
        except AccountError as exc:
            headers = {**NO_STORE, "Retry-After": str(exc.retry_after)} if exc.retry_after else NO_STORE
            return JSONResponse({"error": exc.code, "msg": str(exc)}, status_code=exc.status, headers=headers)
    await anyio.to_thread.run_sync(make_tournament, request.app.state.store.engine, made)
    return JSONResponse({"id": made.id, "url": f"/tournament?id={made.id}"}, headers=NO_STORE)


async def tournament_api(request: Request) -> Response:
    """``GET /api/tournaments/{id}``: a tournament and its standings (as the websocket's ``tour``)."""
    user = await current_user(request)
    view = await request.app.state.arena.tournaments.view(str(request.path_params["id"])[:16],
                                                           user.id if user is not None else None)
    if view is None:
        return _error("not_found", "there is no such tournament", 404)
    return JSONResponse(msgspec.to_builtins(view), headers=NO_STORE)
