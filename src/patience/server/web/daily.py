"""The deal of the day's JSON API: the day's leaderboard, starting (or going on with) one's attempt, and,
once the day is over, its key and the best games' records (see :mod:`patience.server.arena.daily`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from patience.daily import DAILY, check_day
from patience.errors import BadInputError
from patience.server.arena.daily import AttemptOver, DailyDeals
from patience.server.identity import current_user
from patience.server.web.forms import form

__all__ = ["daily_api", "daily_mine_api", "daily_record_api", "daily_replay_api", "daily_start"]

NO_STORE = {"Cache-Control": "no-store"}


def _daily(request: Request) -> DailyDeals:
    return request.app.state.daily  # type: ignore[no-any-return]


def _error(code: str, message: str, status: int) -> Response:
    return JSONResponse({"error": code, "msg": message}, status_code=status, headers=NO_STORE)


def _game(request: Request) -> str | None:
    game = str(request.path_params["game"])
    return game if game in DAILY else None


async def daily_api(request: Request) -> Response:
    """``GET /api/daily/{game}?day=YYYY-MM-DD``: the day's leaderboard (today's by default); the key and
    the games to replay only once the day is over."""
    game = _game(request)
    if game is None:
        return _error("bad_game", f"games with a deal of the day: {', '.join(DAILY)}", 400)
    daily = _daily(request)
    try:
        day = check_day(request.query_params.get("day") or daily.today())
        if day > daily.today():
            raise BadInputError("that day has not begun yet")
        board = await daily.board(game, day)
    except BadInputError as exc:
        return _error("bad_day", str(exc), 400)
    board["games"] = list(DAILY)  # the games that have a deal of the day, for the page's tabs
    user = await current_user(request)
    if user is not None:
        board["mine"] = next((row["rank"] for row in board["entries"] if row["user"] == user.id), None)
        if not board["over"]:  # a practice deal of one's own while the day lasts (docs/fairplay.md)
            board["practice"] = await daily.practice(game, user.id)
    return JSONResponse(board, headers=NO_STORE)


async def daily_mine_api(request: Request) -> Response:
    """``GET /api/daily/mine?month=YYYY-MM``: the signed-in player's streaks (current and best: consecutive
    UTC days with an attempt at any game's deal of the day) and the month's days played with each game's
    outcome (this month by default). 400 for a month not written YYYY-MM, 401 signed out."""
    user = await current_user(request)
    if user is None:
        return _error("sign_in", "sign in to see your days", 401)
    try:
        mine = await _daily(request).mine(user.id, request.query_params.get("month"))
    except BadInputError as exc:
        return _error("bad_month", str(exc), 400)
    return JSONResponse(mine, headers=NO_STORE)


async def daily_start(request: Request) -> Response:
    """``POST /api/daily/{game}/start`` (a form with the CSRF token): the id of the solo game of this
    player's attempt at today's deal, to join on the websocket, and whether it is a practice deal of its own
    (an account without the board's entry rule, or marked: docs/fairplay.md). 401 signed out, 409 once it
    has ended."""
    got = await form(request, "daily")
    if isinstance(got, Response):
        return got
    _, browser = got
    game = _game(request)
    if game is None:
        return _error("bad_game", f"games with a deal of the day: {', '.join(DAILY)}", 400)
    user = await current_user(request)
    if user is None:
        return _error("sign_in", "sign in to play the deal of the day", 401)
    daily = _daily(request)
    try:
        game_id = await daily.start(game, user.id, browser)
    except AttemptOver as exc:
        return _error("attempt_over", str(exc), 409)
    except BadInputError as exc:
        return _error("elsewhere", str(exc), 409)
    practice = await daily.practice(game, user.id)  # an account without the entry rule, or marked
    return JSONResponse({"id": game_id, "game": game, "day": daily.today(), "practice": practice is not None},
                        headers=NO_STORE)


async def _day_over(request: Request) -> tuple[str, str] | Response:
    """The game and the day of a request about a day that is over, or the error response: 400 for a
    game or day that is not one, 403 while the day goes on (its deal and games are secret until then)."""
    game = _game(request)
    if game is None:
        return _error("bad_game", f"games with a deal of the day: {', '.join(DAILY)}", 400)
    try:
        day = check_day(request.path_params["day"])
    except BadInputError as exc:
        return _error("bad_day", str(exc), 400)
    if not _daily(request).is_over(day):
        return _error("not_over", "the day's deal and its games are shown once the day is over (UTC)", 403)
    return game, day


async def daily_replay_api(request: Request) -> Response:
    """``GET /api/daily/{game}/{day}/replay/{id}``: one finished attempt of a day that is over, step by step
    for the replay viewer (``/match?daily=GAME/DAY/ID``). 403 while the day goes on."""
    over = await _day_over(request)
    if isinstance(over, Response):
        return over
    try:
        view = await _daily(request).replay(*over, str(request.path_params["id"])[:40])
    except BadInputError as exc:
        return _error("not_found", str(exc), 404)
    return JSONResponse(view, headers=NO_STORE)


async def daily_record_api(request: Request) -> Response:
    """``GET /api/daily/{game}/{day}/record``: a day that is over as a ``patience-daily`` record (key,
    commitment, the best games' records), for :func:`patience.daily.verify_daily` and the replays.
    403 while the day goes on."""
    over = await _day_over(request)
    if isinstance(over, Response):
        return over
    try:
        record = await _daily(request).revealed(*over)
    except BadInputError as exc:
        return _error("not_found", str(exc), 404)
    return JSONResponse(record, headers=NO_STORE)
