"""The web app of Patience Arena: play in the browser (``patience serve``).

- :mod:`patience.server.app`: the routes, pages, HTTP API and the play socket;
- :mod:`patience.server.protocol`: the websocket messages, one class per type;
- :mod:`patience.server.hub`: live games (versions, acks, clock, saving);
- :mod:`patience.server.store`: the database (SQLAlchemy, Alembic migrations);
- :mod:`patience.server.explain` and :mod:`patience.server.hints`: translation keys, the hint.
"""

from patience.server.app import create_app

__all__ = ["create_app"]
