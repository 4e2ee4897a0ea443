"""The web app of Patience Arena: play in the browser (``patience serve``).

- :mod:`patience.server.app`: the routes, pages, HTTP API and the play socket;
- :mod:`patience.server.protocol`: the websocket messages, one class per type;
- :mod:`patience.server.solo.hub`: live games (versions, acks, clock, saving);
- :mod:`patience.server.accounts`: sign up, sign in, sessions, CSRF tokens, sign-in rate limits;
- :mod:`patience.server.arena`: duels live (the lobby, matches, the move log written before telling);
- :mod:`patience.server.storage.league`: ratings, matches and the pages' data drawn from them;
- :mod:`patience.server.storage.store`: the database (SQLAlchemy, Alembic migrations);
- :mod:`patience.server.explain` and :mod:`patience.server.solo.hints`: translation keys, the hint.
"""

from patience.server.app import create_app

__all__ = ["create_app"]
