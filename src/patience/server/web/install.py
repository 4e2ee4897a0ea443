"""The installable app: the web app manifest, and the service worker that keeps the static files.

The worker is served from the site's root (``/sw.js``) so that its scope is the whole site. It keeps
the static files (``/static/...``: scripts, style sheet, icons) and the offline page, nothing else:
no page (pages may carry a player's data) and no API answer ever goes into its cache; the play
socket is not touched. Its cache is named after a hash of the static files, so a new version of
any file is a new worker, which drops the old cache when it takes over.

>>> manifest()["start_url"], manifest()["display"]
('/', 'standalone')
>>> "patience-" in worker_script() and "/static/offline.html" in worker_script()
True
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from patience.server.web.pages import WEB_DIR

__all__ = ["OFFLINE", "STATIC_KINDS", "manifest", "manifest_route", "static_files", "worker_route",
           "worker_script"]

OFFLINE = "/static/offline.html"
STATIC_KINDS = {".js", ".css", ".svg", ".png", ".html"}
THEME = "#174f33"


@functools.cache
def static_files() -> tuple[str, ...]:
    """The addresses of the static files the worker keeps (the game pages' own HTML files are pages: not kept,
    except the offline page)."""
    out = []
    for path in sorted(WEB_DIR.rglob("*")):
        if not path.is_file() or path.suffix not in STATIC_KINDS:
            continue
        rel = path.relative_to(WEB_DIR).as_posix()
        if path.suffix == ".html" and f"/static/{rel}" != OFFLINE:
            continue
        out.append(f"/static/{rel}")
    return tuple(out)


@functools.cache
def version() -> str:
    """A hash of every kept file: the name of the worker's cache."""
    digest = hashlib.sha256()
    for address in static_files():
        digest.update(address.encode())
        digest.update((WEB_DIR / address.removeprefix("/static/")).read_bytes())
    return digest.hexdigest()[:16]


def manifest() -> dict[str, Any]:
    return {
        "name": "Patience Arena",
        "short_name": "Patience",
        "description": "Three patience games with exact rules and honest scores; duels and tournaments.",
        "id": "/",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": THEME,
        "theme_color": THEME,
        "icons": [
            {"src": "/static/icons/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
            {"src": "/static/icons/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
            {"src": "/static/icons/maskable-512.png", "sizes": "512x512", "type": "image/png", "purpose": "maskable"},
        ],
    }


_WORKER = """// Patience Arena's service worker: the static files from its cache (the app opens at once), pages from
// the network (the offline page when there is none). No page and no API answer is ever kept.
const CACHE = "patience-%(version)s";
const FILES = %(files)s;
const OFFLINE = "%(offline)s";

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith("patience-") && k !== CACHE)
      .map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/static/")) {
    // a kept file from the cache; any other static file from the network, not kept
    event.respondWith(caches.open(CACHE).then((cache) => cache.match(url.pathname))
      .then((hit) => hit || fetch(request)));
  } else if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.open(CACHE).then((cache) => cache.match(OFFLINE))));
  }
});
"""


def worker_script() -> str:
    return _WORKER % {"version": version(), "files": json.dumps(list(static_files())), "offline": OFFLINE}


async def manifest_route(request: Request) -> Response:
    return Response(json.dumps(manifest()), media_type="application/manifest+json",
                    headers={"Cache-Control": "no-cache"})


async def worker_route(request: Request) -> Response:
    return Response(worker_script(), media_type="text/javascript; charset=utf-8",
                    headers={"Cache-Control": "no-cache", "Service-Worker-Allowed": "/"})
