"""The fair-play rule the services hold to: a marked account plays no rated game (docs/fairplay.md).

Duels (a seek, a challenge, an accept, a rematch, a tournament's join), Play now and the deal of the day
read the mark here, from the database at the moment of the action, on whatever process: nothing is cached
when a page connects, so a mark counts at once everywhere. A refusal says the mark's category.
"""

from __future__ import annotations

import anyio
from sqlalchemy.engine import Engine

from patience.server.live import Peer
from patience.server.storage.fairplay import marked_category

__all__ = ["MARKED", "mark_of", "refusal", "refused", "told"]

MARKED = "marked"  # the error code of a refusal


async def mark_of(engine: Engine, user_id: str) -> str | None:
    """The category of ``user_id``'s mark, read now (None: not marked)."""
    return await anyio.to_thread.run_sync(marked_category, engine, user_id)


def refusal(category: str | None) -> str | None:
    """What an account marked in ``category`` is told when it would play a rated game (None: not marked)."""
    if category is None:
        return None
    return f"this account is marked ({category}): it plays no rated games"


async def refused(engine: Engine, user_id: str) -> str | None:
    """Why ``user_id`` may play no rated game now (:func:`refusal`), or None if they may."""
    return refusal(await mark_of(engine, user_id))


def told(peer: Peer, category: str | None) -> bool:
    """Is an account marked in ``category`` (None: not marked)? Then its page is told it plays no rated game."""
    why = refusal(category)
    if why is None:
        return False
    peer.error(MARKED, why)
    return True
