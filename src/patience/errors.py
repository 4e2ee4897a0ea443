"""The errors the package raises; every message is one line that says what is wrong."""

from __future__ import annotations

__all__ = ["BadInputError", "GameOverError", "IllegalMoveError", "PatienceError", "RecordError"]


class PatienceError(Exception):
    """Base class of every error the package raises on purpose."""


class BadInputError(PatienceError, ValueError):
    """Input that cannot be read: an unknown game or option, malformed move text, a bad card."""


class IllegalMoveError(PatienceError):
    """A well-formed move that the rules do not allow in this position; ``reason`` says why."""

    def __init__(self, move: str, reason: str) -> None:
        super().__init__(f"illegal move {move}: {reason}")
        self.move = move
        self.reason = reason


class GameOverError(PatienceError):
    """An action on a game that has already ended."""


class RecordError(PatienceError, ValueError):
    """A game record that is corrupt, of an unknown version, or does not replay to its result."""
