"""Play now's JSON API: start (or go on with) a game of a pool, a player's matches played apart and their
results (see :mod:`patience.server.arena.apart`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from patience.duel import Format
from patience.errors import BadInputError
from patience.server.arena.apart import PlayNow, PlayNowRefused
from patience.server.identity import client_address, current_user
from patience.server.marks import MARKED, refused
from patience.server.web.forms import form

__all__ = ["playnow_api", "playnow_seen", "playnow_start"]

NO_STORE = {"Cache-Control": "no-store"}


def _playnow(request: Request) -> PlayNow:
    return request.app.state.arena.playnow  # type: ignore[no-any-return]


def _error(code: str, message: str, status: int) -> Response:
    return JSONResponse({"error": code, "msg": message}, status_code=status, headers=NO_STORE)


async def playnow_start(request: Request) -> Response:
    """``POST /api/playnow/{game}/{variant}/{limit}`` (a form with the CSRF token): the game of Play now
    to join on the websocket (``game_id``), as ``host`` or ``challenger``, with the match's commitment
    and, for a challenger, who played the deal first (never their score). 401 signed out, 400 for a
    format that is not a duel's, 409 ``too_many`` or ``elsewhere``."""
    got = await form(request, "playnow")
    if isinstance(got, Response):
        return got
    _, browser = got
    try:
        fmt = Format.from_key(f"{request.path_params['game']}/{request.path_params['variant']}/"
                              f"{request.path_params['limit']}")
    except BadInputError as exc:
        return _error("bad_format", str(exc), 400)
    user = await current_user(request)
    if user is None:
        return _error("sign_in", "sign in to play against other players", 401)
    why = await refused(request.app.state.store.engine, user.id)
    if why is not None:
        return _error(MARKED, why, 403)
    try:
        answer = await _playnow(request).play(user, fmt, browser, client_address(request))
    except PlayNowRefused as exc:
        return _error(exc.code, str(exc), 409)
    return JSONResponse(answer, headers=NO_STORE)


async def playnow_api(request: Request) -> Response:
    """``GET /api/playnow``: the signed-in player's matches of Play now, newest first, and how many
    results came in unseen. The other player's score and the key only once a match is over."""
    user = await current_user(request)
    if user is None:
        return _error("sign_in", "sign in to see your games", 401)
    return JSONResponse(await _playnow(request).yours(user.id), headers=NO_STORE)


async def playnow_seen(request: Request) -> Response:
    """``POST /api/playnow/seen`` (a form with the CSRF token): the player has seen the results that came in."""
    got = await form(request, "playnow")
    if isinstance(got, Response):
        return got
    user = await current_user(request)
    if user is None:
        return _error("sign_in", "sign in to see your games", 401)
    await _playnow(request).seen(user.id)
    return JSONResponse({"ok": True, "unseen": 0}, headers=NO_STORE)
