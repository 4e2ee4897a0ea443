"""Solo games: live games with versions and acks, their clock and saving, hints."""

from patience.server.solo.hub import Hub, LiveGame

__all__ = ["Hub", "LiveGame"]
