"""The web app of Patience Arena: play in the browser (``patience serve``).

- :mod:`patience.server.app`: the routes, and the one place where the services are made and tied;
- :mod:`patience.server.web`: the pages, the account forms and the HTTP API;
- :mod:`patience.server.transport`: the door (connection caps, time limits) and the play socket;
- :mod:`patience.server.protocol`: the websocket messages, one class per type;
- :mod:`patience.server.solo`: live solo games (versions, acks, clock, saving, hints, fair play);
- :mod:`patience.server.arena`: duels live (the lobby, matches, the move log written before telling);
- :mod:`patience.server.accounts`: sign up, sign in, sessions, CSRF tokens, sign-in rate limits;
- :mod:`patience.server.identity`: who a request comes from (address, browser, account);
- :mod:`patience.server.storage`: the database (its schema, engine, the stores of each room, Alembic migrations);
- :mod:`patience.server.explain` and :mod:`patience.server.solo.hints`: translation keys, the hint."""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    # the app is imported when it is asked for, not with every room of the server: the transport's guards
    # (patience.server.transport.door) load without the accounts, the database or argon2
    if name == "create_app":
        from patience.server.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
