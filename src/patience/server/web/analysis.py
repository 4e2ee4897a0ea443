"""The analysis API: ask for a finished game's analysis, and read it (docs/analysis.md).

``POST /api/analysis/{kind}/{id}`` (a form with the CSRF token) queues it, ``GET`` reads it; ``kind`` is

- ``match``: a duel's, Play now's or a tournament's match, ``id`` the match (both games: one analysis a side);
- ``daily``: a game of the deal of the day, ``id`` the game;
- ``game``: a solo game, ``id`` the game (its player's only: any other asker is told there is no such game).

Secrets: an analysis exists only once the deal is no longer secret — a match once it is over (Play now: once
both games are), a day's game once its UTC day is over, a solo game once it has ended. Before, both verbs
answer 403 ``secret`` and nothing is queued or shown. Cost: a job that exists already is read, never made
twice; a new one counts against the asker's :data:`DAILY_LIMIT` (a match's, rated, against the site's
:data:`RATED_DAILY_BUDGET` instead); the work itself is done by the worker processes
(:mod:`patience.server.analysis`), never on the event loop.
"""

from __future__ import annotations

from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from patience.server.identity import browser_id, current_user
from patience.server.storage import analysis as db
from patience.server.storage.store import Store
from patience.server.web.forms import accounts_of, form

__all__ = ["DAILY_LIMIT", "RATED_DAILY_BUDGET", "analysis_api", "analysis_ask", "game_replay_api"]

NO_STORE = {"Cache-Control": "no-store"}
DAILY_LIMIT = 20  # analyses a player may have computed a day (UTC), of solo games and days' games
RATED_DAILY_BUDGET = db.RATED_DAILY_BUDGET  # analyses of rated matches' games the site computes a day
RATED = db.RATED  # the asker the budget of rated matches is counted under (the queue at a match's end too)


def _error(code: str, message: str, status: int) -> Response:
    return JSONResponse({"error": code, "msg": message}, status_code=status, headers=NO_STORE)


def _store(request: Request) -> Store:
    return request.app.state.store  # type: ignore[no-any-return]


def _key(kind: str, ref: str, side: int) -> str:
    return f"match:{ref}:{side}" if kind == "match" else f"{kind}:{ref}"


async def _resolve(request: Request, browser: str, kind: str | None = None) -> db.Source | Response:
    """The game asked about, if the asker may know of its analysis now; else the answer that refuses."""
    kind, ref = kind or request.path_params["kind"], request.path_params["id"]
    if kind not in db.KINDS:
        return _error("bad_kind", f"an analysis is of a {', '.join(db.KINDS)}", 404)
    if not ref or len(ref) > 40 or not ref.replace("-", "").replace("_", "").isalnum():
        return _error("not_found", f"no such {kind}", 404)
    engine = _store(request).engine
    found = await anyio.to_thread.run_sync(db.source, engine, kind, ref)
    if kind == "game" and (found is None or not found.over):
        await request.app.state.hub.save()  # a game that just ended (or began) is in the database as it is now
        found = await anyio.to_thread.run_sync(db.source, engine, kind, ref)
    if found is None or (kind == "daily" and found.day is None):
        return _error("not_found", f"no such {kind}", 404)
    if kind == "game":
        mine = [browser]
        user = await current_user(request)
        if user is not None:
            mine += await anyio.to_thread.run_sync(accounts_of(request).browsers, user.id)
        if found.shared or found.browser_id not in mine:  # another's game: nothing of it, not even that it is
            return _error("not_found", "no such game of yours (a day's game or Play now's is asked for as such)", 404)
        if not found.over:
            return _error("secret", "a game is analysed once it is over", 403)
    elif kind == "daily":
        assert found.day is not None
        if not request.app.state.daily.is_over(found.day):
            return _error("secret", "a game of the deal of the day is analysed once the day is over (UTC)", 403)
        if not found.over:
            return _error("not_found", "that game of the day did not end", 404)
    elif not found.over:
        return _error("secret", "a match is analysed once it is over (Play now: once both games are)", 403)
    return found


async def _records(request: Request, found: db.Source) -> list[dict[str, Any] | None]:
    if found.kind == "match":
        return found.records
    saved = await anyio.to_thread.run_sync(_store(request).load_game, found.ref)
    return [None if saved is None else saved.record]


async def analysis_api(request: Request) -> Response:
    """``GET /api/analysis/{kind}/{id}``: ``{"kind", "id", "games": [the analysis of each side, or null]}``;
    each analysis: ``status`` (queued, running, done, failed), ``stage`` (the last stage whose results are
    in: verdict, chance), ``verdict``, ``chance``, ``cpu_s``. 403 ``secret`` while the deal is, 404 unknown."""
    browser, _ = browser_id(request)
    found = await _resolve(request, browser)
    if isinstance(found, Response):
        return found
    engine = _store(request).engine
    games = [await anyio.to_thread.run_sync(db.find, engine, _key(found.kind, found.ref, side))
             for side in range(len(found.records))]
    return JSONResponse({"kind": found.kind, "id": found.ref, "game": found.game, "games": games}, headers=NO_STORE)


async def analysis_ask(request: Request) -> Response:
    """``POST /api/analysis/{kind}/{id}`` (a form with the CSRF token): queue the analysis of each game not
    analysed yet; 202 with what ``GET`` answers. 429 ``daily_limit`` past the asker's analyses of the day
    (``limit``), 503 ``busy`` past the site's budget of rated matches' analyses."""
    got = await form(request, "analysis")
    if isinstance(got, Response):
        return got
    _, browser = got
    found = await _resolve(request, browser)
    if isinstance(found, Response):
        return found
    user = await current_user(request)
    asker = RATED if found.kind == "match" else (user.id if user is not None else f"b:{browser}")[:40]
    engine = _store(request).engine
    records = await _records(request, found)
    keys = [_key(found.kind, found.ref, side) for side in range(len(records))]
    missing = [k for k in keys if await anyio.to_thread.run_sync(db.find, engine, k) is None]
    if missing:
        used = await anyio.to_thread.run_sync(db.asked_today, engine, asker)
        if found.kind == "match" and used + len(missing) > db.RATED_DAILY_BUDGET:
            return _error("busy", "the site's analyses of rated games for today are spent: try again tomorrow", 503)
        limit = getattr(request.app.state, "analysis_limit", DAILY_LIMIT)
        if found.kind != "match" and used + len(missing) > limit:
            return JSONResponse({"error": "daily_limit", "msg": f"at most {limit} analyses a day", "limit": limit},
                                status_code=429, headers=NO_STORE)
    games: list[dict[str, Any] | None] = []
    for side, (key, record) in enumerate(zip(keys, records, strict=True)):
        if record is None:
            games.append(None)
            continue
        view, _ = await anyio.to_thread.run_sync(db.enqueue, engine, key, found.kind, found.ref, side, found.game,
                                                 record, asker)
        games.append(view)
    analyst = getattr(request.app.state, "analyst", None)
    if analyst is not None and missing:
        analyst.wake()
    return JSONResponse({"kind": found.kind, "id": found.ref, "game": found.game, "games": games},
                        status_code=202 if missing else 200, headers=NO_STORE)


async def game_replay_api(request: Request) -> Response:
    """``GET /api/games/{id}/replay``: one's own solo game that has ended, step by step for the replay viewer
    (``/match?game=ID``), in the shape of a day's game. 404 for another's game, 403 while it goes on."""
    from patience.server.storage.league import frames

    browser, _ = browser_id(request)
    found = await _resolve(request, browser, "game")
    if isinstance(found, Response):
        return found
    saved = await anyio.to_thread.run_sync(_store(request).load_game, found.ref)
    if saved is None:
        return _error("not_found", "no such game of yours", 404)
    positions = await anyio.to_thread.run_sync(frames, saved.record)
    return JSONResponse({"id": saved.id, "solo": True, "state": "over", "game": saved.game, "variant": saved.variant,
                         "options": saved.record.get("options") or {}, "players": [{"id": "", "name": ""}],
                         "record": {"seed": saved.record.get("seed"), "games": [saved.record]},
                         "frames": [positions]}, headers=NO_STORE)
