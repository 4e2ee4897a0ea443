"""The games, by id and alias: ``get_game("carpet")`` is the Teppich state class."""

from __future__ import annotations

import unicodedata

from patience.errors import BadInputError
from patience.games.base import DRAW, REDEAL, Event, GameInfo, Move, Outcome, State
from patience.games.carpet import Carpet, CarpetOptions
from patience.games.faecher import Faecher, FaecherOptions
from patience.games.reloaded import Reloaded, ReloadedOptions

__all__ = [
    "DRAW",
    "GAMES",
    "REDEAL",
    "Carpet",
    "CarpetOptions",
    "Event",
    "Faecher",
    "FaecherOptions",
    "GameInfo",
    "Move",
    "Outcome",
    "Reloaded",
    "ReloadedOptions",
    "State",
    "game_ids",
    "get_game",
]

GAMES: dict[str, type[State]] = {cls.INFO.id: cls for cls in (Carpet, Reloaded, Faecher)}


def _fold(name: str) -> str:
    text = unicodedata.normalize("NFKD", name.strip().lower())
    return "".join(ch for ch in text if ch.isalnum())


_ALIASES: dict[str, str] = {}
for _id, _cls in GAMES.items():
    for _name in (_id, *_cls.INFO.aliases, *_cls.INFO.names.values()):
        _ALIASES[_fold(_name)] = _id


def game_ids() -> list[str]:
    return list(GAMES)


def get_game(name: str) -> type[State]:
    """The state class of a game given by id or alias (``teppich``, ``carpet``, ``fächer``...)."""
    game_id = _ALIASES.get(_fold(name)) if isinstance(name, str) else None
    if game_id is None:
        raise BadInputError(f"unknown game {name!r} (games: {', '.join(GAMES)})")
    return GAMES[game_id]
