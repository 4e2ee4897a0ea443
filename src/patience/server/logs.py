"""The server's log lines: readable text (the default) or one JSON object a line (``--log-format json``).

A JSON line has ``time`` (UTC, ISO 8601), ``level``, ``process`` (host name and process id),
``logger``, ``event`` (the message) and, where known, ``request`` (an id given to each HTTP request
or socket by :class:`LogContext`), ``user`` (the account a socket serves, or a log call's ``extra``),
``socket`` (a log call's ``extra``), and
``error`` (the traceback). Whatever looks like a secret is blanked in every line, in both formats:
deal keys (64 hex digits), and what follows ``password``, ``token``, ``key``, ``secret`` or
``cookie`` (as ``name=value``, ``name: value`` or a JSON field).

>>> scrub('signing in with password=hunter2 and deal ' + 'ab' * 32)
'signing in with password=[hidden] and deal [hidden]'
"""

from __future__ import annotations

import contextvars
import datetime
import json
import logging
import os
import re
import secrets
import socket
from typing import Any

__all__ = ["FORMATS", "REQUEST", "USER", "JsonFormatter", "LogContext", "TextFormatter", "log_config", "scrub"]

FORMATS = ("text", "json")

REQUEST: contextvars.ContextVar[str | None] = contextvars.ContextVar("patience_request", default=None)
"""The id of the HTTP request or socket being served (set by :class:`LogContext`)."""

USER: contextvars.ContextVar[str | None] = contextvars.ContextVar("patience_user", default=None)
"""The id of the signed-in account a socket serves (set by the play socket once it knows it)."""

_SECRET = re.compile(
    r"""(?ix)
    (?P<hex>\b[0-9a-f]{64}\b)
    | (?P<name>["']?\b(?:[a-z_]*password|[a-z_]*token|deal_?key|key|secret|cookie|session)["']?\s*[=:]\s*)
      (?P<value>"[^"]*"|'[^']*'|[^\s&;,]+)
    """)


def scrub(text: str) -> str:
    """``text`` with what looks like a secret replaced by ``[hidden]``."""
    def hide(m: re.Match[str]) -> str:
        if m.group("hex"):
            return "[hidden]"
        value = m.group("value")
        quote = value[0] if value[:1] in ("'", '"') else ""
        return f"{m.group('name')}{quote}[hidden]{quote}"
    return _SECRET.sub(hide, text)


def _process() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class TextFormatter(logging.Formatter):
    """Readable lines: time, level, the message (secrets blanked)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object a line (see the module's text)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "process": _process(),
            "logger": record.name,
            "event": scrub(record.getMessage()),
        }
        request = getattr(record, "request", None) or REQUEST.get()
        if request:
            line["request"] = str(request)
        for field in ("socket", "user"):
            value = getattr(record, field, None) or (USER.get() if field == "user" else None)
            if value is not None:
                line[field] = scrub(str(value))
        if record.exc_info:
            line["error"] = scrub(self.formatException(record.exc_info))
        elif record.exc_text:
            line["error"] = scrub(record.exc_text)
        return json.dumps(line, ensure_ascii=False)


def log_config(fmt: str = "text", level: str = "warning") -> dict[str, Any]:
    """The ``logging.config.dictConfig`` of ``patience serve`` (given to uvicorn as ``log_config``):
    the app's loggers and uvicorn's write to stderr in ``fmt``, from ``level`` up."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}")
    formatter = {"()": f"{__name__}.{'JsonFormatter' if fmt == 'json' else 'TextFormatter'}"}
    handler = {"class": "logging.StreamHandler", "formatter": "main", "stream": "ext://sys.stderr"}
    upper = level.upper()
    loggers = {name: {"handlers": ["main"], "level": upper, "propagate": False}
               for name in ("patience", "uvicorn", "uvicorn.error", "uvicorn.access", "alembic")}
    return {"version": 1, "disable_existing_loggers": False, "formatters": {"main": formatter},
            "handlers": {"main": handler}, "loggers": loggers,
            "root": {"handlers": ["main"], "level": "WARNING"}}


class LogContext:
    """ASGI middleware: each HTTP request and socket gets an id, which the log lines written while
    serving it carry as ``request``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        token = REQUEST.set(("ws-" if scope["type"] == "websocket" else "") + secrets.token_hex(6))
        try:
            await self.app(scope, receive, send)
        finally:
            REQUEST.reset(token)
