"""Duels: the lobby (pools, challenges), live matches with their move log, the private deal stock."""

from patience.server.arena.lobby import Arena
from patience.server.arena.matches import LiveMatch

__all__ = ["Arena", "LiveMatch"]
