"""Headers every HTTP answer carries: no sniffing, no referrer leaks, no framing by other sites, HSTS
over HTTPS, static files revalidated."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HeadersMiddleware"]


class HeadersMiddleware:
    """Headers every HTTP answer carries: no sniffing, no referrer leaks, static files revalidated."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith("/static/")
        https = scope.get("scheme") == "https"  # behind a proxy: with --forwarded-allow-ips

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"same-origin"))
                headers.append((b"x-frame-options", b"DENY"))
                if https:
                    headers.append((b"strict-transport-security", b"max-age=31536000"))
                if static:
                    headers.append((b"cache-control", b"no-cache"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
