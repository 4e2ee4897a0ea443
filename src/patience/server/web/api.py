"""The JSON API: the games and their options, a browser's statistics, the health check, and the
duel side (leaderboards, profiles, match history, a match with its replay frames)."""

from __future__ import annotations

import time
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from patience.games import GAMES
from patience.options import describe_options
from patience.server.identity import browser_id, current_user, with_cookie
from patience.server.solo.hub import Hub
from patience.server.storage.fairplay import fairplay_of
from patience.server.storage.league import DUEL_GAMES, leaderboard, match_view, profile, recent_matches
from patience.server.storage.store import Store
from patience.server.storage.tournaments import player_tournaments
from patience.server.web.forms import accounts_of
from patience.solve.rates import rates_by_variant

__all__ = ["games_api", "health", "leaderboard_api", "match_api", "matches_api", "profile_api", "stats_api"]


async def games_api(request: Request) -> Response:
    """The games: id, names, named variants with their published win rates (patience.solve.rates) and every
    option with its default and meaning."""
    games = []
    rates = rates_by_variant()
    for cls in GAMES.values():
        info = cls.INFO
        games.append({
            "id": info.id,
            "names": dict(info.names),
            "variants": {name: dict(opts) for name, opts in (getattr(info, "variants", {}) or {}).items()},
            "rates": rates.get(info.id, {}),
            "options": [{"name": name, "default": default, "doc": doc}
                        for name, default, doc in describe_options(info.options)],
        })
    return JSONResponse({"games": games})


async def stats_api(request: Request) -> Response:
    """This browser's statistics per game, and its games still going on."""
    browser, new = browser_id(request)
    hub: Hub = request.app.state.hub
    store: Store = request.app.state.store
    await hub.save()  # a game that just ended counts at once
    # a signed-in player's figures are the account's: the games of every browser linked to it
    user = await current_user(request)
    browsers = [browser]
    if user is not None:
        browsers += await anyio.to_thread.run_sync(accounts_of(request).browsers, user.id)
    stats = await anyio.to_thread.run_sync(store.stats, browsers)
    unfinished = await anyio.to_thread.run_sync(store.unfinished, browser)
    body: dict[str, Any] = {
        "stats": {game: figures.to_dict() for game, figures in stats.items()},
        "unfinished": [{"id": g.id, "game": g.game, "variant": g.variant, "seed": g.seed, "moves": g.moves,
                        "score": g.score, "ms": g.ms} for g in unfinished],
    }
    response = JSONResponse(body, headers={"Cache-Control": "no-store"})
    return with_cookie(response, browser, new)


HEALTH_SECONDS = 1.0  # the write of the health check is made at most this often; the answer is kept between


async def health(request: Request) -> Response:
    """``ok`` when the database accepts a write (a full disk or a read-only file says so: 503)."""
    state = request.app.state
    now = time.monotonic()
    checked: tuple[float, str | None] | None = getattr(state, "health_checked", None)
    if checked is None or now - checked[0] >= HEALTH_SECONDS:
        try:
            await anyio.to_thread.run_sync(_store(request).accepts_write)
            checked = (now, None)
        except Exception as exc:  # whatever the database says, the check says it in one line
            said = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
            checked = (now, said[0][:200])
        state.health_checked = checked
    if checked[1] is not None:
        return PlainTextResponse(f"the database accepts no write: {checked[1]}", status_code=503)
    return PlainTextResponse("ok")


def _store(request: Request) -> Store:
    return request.app.state.store  # type: ignore[no-any-return]


def _not_found(what: str) -> Response:
    return JSONResponse({"error": "not_found", "msg": f"no such {what}"}, status_code=404)


async def leaderboard_api(request: Request) -> Response:
    game = request.query_params.get("game", "reloaded")
    if game not in DUEL_GAMES:
        return JSONResponse({"error": "bad_game", "msg": f"duel games: {', '.join(DUEL_GAMES)}"}, status_code=400)
    board = await anyio.to_thread.run_sync(leaderboard, _store(request).engine, game)
    return JSONResponse({"game": game, "players": board}, headers={"Cache-Control": "no-store"})


async def profile_api(request: Request) -> Response:
    engine = _store(request).engine
    found = await anyio.to_thread.run_sync(profile, engine, request.path_params["user"])
    if found is None:
        return _not_found("player")
    # fair play: the mark and its category, and the rating points given back (docs/fairplay.md)
    found["fairplay"] = await anyio.to_thread.run_sync(fairplay_of, engine, found["user"]["id"])
    found["tournaments"] = await anyio.to_thread.run_sync(
        player_tournaments, engine, found["user"]["id"], int(request.app.state.arena.wall() * 1000))
    return JSONResponse(found, headers={"Cache-Control": "no-store"})


async def matches_api(request: Request) -> Response:
    user = request.query_params.get("user") or None
    before = request.query_params.get("before")
    before_ms = None
    if before:
        if not (before.isascii() and before.isdigit() and len(before) <= 15):
            return JSONResponse({"error": "bad_before", "msg": "before is a time in milliseconds since the epoch"},
                                status_code=400)
        before_ms = int(before)
    rows = await anyio.to_thread.run_sync(lambda: recent_matches(_store(request).engine, user, 30, before_ms))
    return JSONResponse({"matches": rows}, headers={"Cache-Control": "no-store"})


async def match_api(request: Request) -> Response:
    found = await anyio.to_thread.run_sync(match_view, _store(request).engine, request.path_params["id"])
    if found is None:
        return _not_found("match")
    return JSONResponse(found, headers={"Cache-Control": "no-store"})
