"""A word one room says and a room above it hears.

Two rooms that each need the other (the hub tells Play now that a game of it ended, while Play now asks
the hub to bring a game back; fair play tells the arena of a mark, while the arena gives fair play the
evidence of its matches) would otherwise be tied after they are made. Instead the composition root
(:mod:`patience.server.app`) makes the :class:`Signal` first and gives it to both when they are made: the
lower room says the word, the room above hears it. Nothing is set on an object afterwards, and the layer
test sees both ties.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Signal"]

log = logging.getLogger("patience.server")

T = TypeVar("T")


class Signal(Generic[T]):
    """A word with a value of type ``T``: said by one room, heard by whoever listens (in the order they
    began to). A hearer that fails is logged; the others still hear the word."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._hearers: list[Callable[[T], None]] = []

    def hear(self, hearer: Callable[[T], None]) -> None:
        """Call ``hearer`` with every value said from now on."""
        self._hearers.append(hearer)

    def say(self, value: T) -> None:
        for hearer in list(self._hearers):
            try:
                hearer(value)
            except Exception:
                log.exception("a hearer of %s failed", self.name)
