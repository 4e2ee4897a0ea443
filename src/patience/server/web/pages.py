"""The pages: the start and game pages (static files), and the arena's pages: one shared
``<head>`` and header, each page's own part from ``web/NAME.html``, and the match history, which
the server renders itself (with 400 and 404 pages for bad requests).

A page is :func:`shell` around its body: the ``<head>`` (title, icon, style sheet, the page's
script), and for the pages with the big title, the header with it and the navigation that
``arena.js`` fills in. The words in the pages are English; the scripts put every ``data-t``
text, and the tab's title (``data-t-doc``), into the browser's language.

>>> '<title data-t-doc="board.title">Leaderboard · Patience Arena</title>' in shell(PAGES["leaderboard"], "")
True
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response

from patience.duel import FORMATS
from patience.errors import PatienceError
from patience.games import get_game
from patience.server.identity import browser_id, with_cookie
from patience.server.storage.league import HISTORY_PAGE, History, find_players, match_history
from patience.server.storage.roles import is_closed_name

__all__ = ["CSP", "PAGES", "WEB_DIR", "Page", "matches_page", "not_found_page", "page_of", "play_page", "shell",
           "start_page"]

WEB_DIR = Path(__file__).resolve().parents[2] / "web"
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


@dataclass(frozen=True)
class Page:
    """A page of the arena: its title (English), its script in ``web/js``, the class of its body, the
    text key of its big title (None: the page's own part brings a header of its own, as the play-like
    pages do) and the text key of the tab's title (default: the big title's), which the script puts
    into the page's language (and may make more precise: a player's name, a tournament's)."""

    title: str
    script: str
    body_class: str
    heading: str | None = None
    title_key: str | None = None

    @property
    def words(self) -> str | None:
        """The text key of the tab's title."""
        return self.title_key or self.heading


PAGES: dict[str, Page] = {
    "duel": Page("Duel", "duel", "play duel", title_key="duel.title"),
    "match": Page("Match", "replay", "play replay", title_key="replay.title"),
    "account": Page("Account", "account", "start arena-page", "account.title"),
    "profile": Page("Player", "profile", "start arena-page", "profile.title"),
    "leaderboard": Page("Leaderboard", "leaderboard", "start arena-page", "board.title"),
    "daily": Page("Deal of the day", "daily", "start arena-page", "daily.title"),
    "playnow": Page("Your games", "playnow", "start arena-page", "playnow.title"),
    "tournament": Page("Tournaments", "tournament", "start arena-page", "tour.title"),
    "matches": Page("Matches", "matches", "start arena-page", "matches.title"),
    "lost": Page("Page not found", "lost", "start arena-page", "lost.title"),
    "mod": Page("Moderation", "mod", "start arena-page", "mod.title"),  # moderators only: see web/fairplay.py
}

_HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="theme-color" content="#174f33">
<title{words}>{title} · Patience Arena</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="manifest" href="/manifest.webmanifest">
<link rel="apple-touch-icon" href="/static/icons/icon-192.png">
<link rel="stylesheet" href="/static/css/app.css">
<script src="/static/js/prefs.js"></script>
<script type="module" src="/static/js/{script}.js"></script>
</head>
<body class="{body_class}">
"""

_HERO = """<header class="hero">
  <div><h1 id="page-title" data-t="{key}">{title}</h1></div>
  <nav id="nav" class="arena-nav"></nav>
</header>
"""


def _points(value: int) -> str:
    """A score as the pages write it: a true minus sign (−50)."""
    return f"−{-value}" if value < 0 else str(value)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def shell(page: Page, body: str, *, title: str | None = None) -> str:
    """The whole document of ``page`` with ``body`` in it."""
    shown = title or page.title
    words = f' data-t-doc="{_e(page.words)}"' if page.words and title is None else ""
    out = _HEAD.format(title=_e(shown), words=words, script=_e(page.script), body_class=_e(page.body_class))
    if page.heading is not None:
        out += _HERO.format(key=_e(page.heading), title=_e(shown))
    return out + body.rstrip("\n") + "\n</body>\n</html>\n"


def _respond(request: Request, text: str, status: int = 200) -> Response:
    browser, new = browser_id(request)
    response = HTMLResponse(text, status_code=status, headers={"Content-Security-Policy": CSP,
                                                                "Cache-Control": "no-cache"})
    return with_cookie(response, browser, new)


async def start_page(request: Request) -> Response:
    return _file_page(request, "index.html")


async def play_page(request: Request) -> Response:
    return _file_page(request, "play.html")


def _file_page(request: Request, name: str) -> Response:
    browser, new = browser_id(request)
    response = FileResponse(WEB_DIR / name, media_type="text/html; charset=utf-8")
    response.headers["Content-Security-Policy"] = CSP
    response.headers["Cache-Control"] = "no-cache"
    return with_cookie(response, browser, new)


def page_of(name: str) -> Callable[[Request], Any]:
    """The handler of a page whose own part is the file ``web/NAME.html`` (the page asks the API for its data)."""
    page = PAGES[name]

    async def handler(request: Request) -> Response:
        body = await anyio.Path(WEB_DIR / f"{name}.html").read_text(encoding="utf-8")
        return _respond(request, shell(page, body))

    handler.__name__ = f"{name}_page"
    return handler


async def not_found_page(request: Request, exc: Exception) -> Response:
    """Any address that is no page: a 404 page in the site's look, with the way back to the games."""
    body = ('<main class="page-body">\n<section class="panel lost" role="alert">\n'
            '<p data-t="lost.page">There is no page at this address.</p>\n'
            '<p><a class="btn primary" href="/" data-t="lost.home">All games</a></p>\n</section>\n</main>\n')
    return _respond(request, shell(PAGES["lost"], body), 404)


# -- the match history -----------------------------------------------------------------------------

_PAGE_NUMBER = re.compile(r"[0-9]{1,9}")
_OUTCOMES = {"won": "Won!", "no_moves": "No move left", "time_out": "Time is up", "given_up": "Given up"}


class _BadRequest(Exception):
    def __init__(self, status: int, code: str, message: str, params: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.params = dict(params)


def _query(request: Request) -> tuple[str, str | None, int]:
    """``player``, ``game`` (a duel game's id) and ``page`` (1, 2, …) of the address, or _BadRequest."""
    params = request.query_params
    player = " ".join(params.get("player", "").split())[:100]
    game_text = params.get("game", "").strip()
    game: str | None = None
    if game_text:
        try:
            game = get_game(game_text).INFO.id
        except PatienceError:
            game = None
        if game not in FORMATS:
            raise _BadRequest(400, "bad_game", f"{game_text[:40]!r} is not a duel game (duel games: "
                              f"{', '.join(FORMATS)})", {"game": game_text[:40]})
    page_text = params.get("page", "1").strip()
    if not _PAGE_NUMBER.fullmatch(page_text) or int(page_text) < 1:
        raise _BadRequest(400, "bad_page", f"a page number is a whole number from 1 up, not {page_text[:20]!r}",
                          {"page": page_text[:20]})
    return player, game, int(page_text)


def _href(player: str, game: str | None, page: int) -> str:
    query = {key: value for key, value in (("player", player), ("game", game or "")) if value}
    if page > 1:
        query["page"] = str(page)
    return "/matches" + (f"?{urlencode(query)}" if query else "")


def _when(ms: int | None) -> str:
    if ms is None:
        return ""
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))
    return f'<time datetime="{iso}">{time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))}</time>'


def _name(name: str) -> str:
    """The rest of a link's start tag and its text for a player's name; a closed account's mark (in no
    language) is in ``data-player`` too, for the script to write it in the page's language."""
    return f' data-player="{_e(name)}">{_e(name)}' if is_closed_name(name) else f">{_e(name)}"


def _side(match: Mapping[str, Any], side: int) -> str:
    player = match["players"][side]
    outcome = (match.get("outcomes") or [None, None])[side]
    won = match["winner"] == side
    parts = [f'<a href="/profile?u={_e(player["id"])}"{_name(player["name"])}</a>',
             f'<strong class="final">{_e(_points(match["finals"][side]))}</strong>']
    if won:
        parts.append('<span class="winner" data-t="matches.winner">winner</span>')
    if outcome:
        parts.append(f'<span class="small" data-outcome="{_e(outcome)}">{_e(_OUTCOMES.get(outcome, outcome))}</span>')
    return f'<td class="player-cell{" won" if won else ""}" data-side="{side}">{" ".join(parts)}</td>'


def _row(match: Mapping[str, Any]) -> str:
    fmt = f"{match['game']}/{match['variant']}/{match['limit_s']}"
    name = get_game(match["game"]).INFO.names["en"]
    return (f'<tr data-match="{_e(match["id"])}"><td>{_when(match["ended_ms"])}</td>'
            f'<td data-format="{_e(fmt)}">{_e(name)} · {_e(match["variant"])} · {match["limit_s"] // 60} min</td>'
            f'{_side(match, 0)}{_side(match, 1)}'
            f'<td><a class="replay" href="/match?id={_e(match["id"])}" data-t="matches.replay">Replay</a></td></tr>')


def _filters(player: str, game: str | None) -> str:
    options = ['<option value="" data-t="matches.all_games">All games</option>']
    for gid in FORMATS:
        chosen = " selected" if gid == game else ""
        options.append(f'<option value="{gid}" data-game="{gid}"{chosen}>{_e(get_game(gid).INFO.names["en"])}'
                       "</option>")
    return ('<form class="filters" method="get" action="/matches">'
            f'<label><span data-t="matches.player">Player</span><input name="player" value="{_e(player)}" '
            'maxlength="100" autocomplete="off"></label>'
            f'<label><span data-t="matches.game">Game</span><select name="game">{"".join(options)}</select></label>'
            '<button type="submit" class="btn primary" data-t="matches.show">Show</button></form>\n')


def _pager(history: History, player: str, game: str | None) -> str:
    links = []
    if history.page > 1:
        links.append(f'<a class="btn solid" rel="prev" href="{_e(_href(player, game, history.page - 1))}" '
                     'data-t="matches.newer">Newer</a>')
    where = json.dumps({"page": history.page, "pages": history.pages})
    links.append(f'<span class="small" data-t="matches.page" data-p="{_e(where)}">'
                 f"page {history.page} of {history.pages}</span>")
    if history.page < history.pages:
        links.append(f'<a class="btn solid" rel="next" href="{_e(_href(player, game, history.page + 1))}" '
                     'data-t="matches.older">Older</a>')
    return f'<nav class="pager">{"".join(links)}</nav>\n'


def _history_body(history: History, player: str, game: str | None) -> str:
    if history.total:
        rows = "\n".join(_row(m) for m in history.matches)
        table = ('<table class="board-table match-table"><thead><tr><th data-t="matches.ended">Ended</th>'
                 '<th data-t="matches.format">Duel</th><th data-t="matches.side_a">Player 1</th>'
                 '<th data-t="matches.side_b">Player 2</th><th></th></tr></thead>\n'
                 f"<tbody>{rows}</tbody></table>\n")
    else:
        table = '<p data-t="matches.none">No finished matches.</p>\n'
    count = (f'<p class="small" data-t="matches.count" data-p="{_e(json.dumps({"n": history.total}))}">'
             f"Finished matches: {history.total}</p>\n")
    return (f'<main class="page-body">\n{_filters(player, game)}<section class="panel">\n{count}{table}'
            f"{_pager(history, player, game)}</section>\n</main>\n")


def _error_body(error: _BadRequest, player: str, game: str | None) -> str:
    return (f'<main class="page-body">\n{_filters(player, game)}'
            f'<p class="notice bad" role="alert" data-error="{_e(error.code)}" '
            f'data-p="{_e(json.dumps(error.params))}">{_e(error)}</p>\n'
            '<p><a class="btn solid" href="/matches" data-t="matches.all">All matches</a></p>\n</main>\n')


async def matches_page(request: Request) -> Response:
    """``GET /matches?player=NAME&game=GAME&page=N``: finished matches, newest first, 20 a page.

    ``player`` is an account's id or a display name (every account of that name); an unknown
    player is a 404 page, a game that is no duel game or a page number that is no whole number
    from 1 up a 400 page, and a page after the last a 404 page."""
    page = PAGES["matches"]
    player, game = " ".join(request.query_params.get("player", "").split())[:100], None
    try:
        player, game, number = _query(request)
        engine = request.app.state.store.engine
        ids: list[str] | None = None
        if player:
            found = await anyio.to_thread.run_sync(find_players, engine, player)
            if not found:
                raise _BadRequest(404, "no_player", f"no player {player!r}", {"player": player})
            ids = [user_id for user_id, _ in found]
            if found[0][0] == player and not is_closed_name(found[0][1]):  # an account's id (the profile's
                # link): the form shows its name (a closed account's stays its id, the name is no text to search)
                player = found[0][1]
        history = await anyio.to_thread.run_sync(
            lambda: match_history(engine, player_ids=ids, game=game, page=number, per_page=HISTORY_PAGE))
        if number > history.pages:
            raise _BadRequest(404, "no_page", f"there is no page {number}: the last is {history.pages}",
                              {"page": number, "pages": history.pages})
    except _BadRequest as error:
        return _respond(request, shell(page, _error_body(error, player, game)), error.status)
    return _respond(request, shell(page, _history_body(history, player, game)))
