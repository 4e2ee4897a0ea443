"""Duels: the lobby (pools, challenges), live matches with their move log, the private deal stock."""

from patience.server.arena.matches import LiveMatch
from patience.server.arena.routing import Arena

__all__ = ["Arena", "LiveMatch"]
