"""The one-line text form of a position, and reading it back.

``teppich rows=5 cols=6 | fs:AS fh:AH,2H ... c1:7D c2:- s:qs,4h passes=1``: the game, the
options that differ from the defaults, then every pile (``-`` when empty; face-down cards in
lower case) and the counters.
"""

from __future__ import annotations

from typing import Any

from patience.errors import BadInputError

__all__ = ["parse_position_text", "position_text"]


def position_text(position: dict[str, Any]) -> str:
    head = [position["game"], *(f"{k}={_word(v)}" for k, v in position["options"].items())]
    piles = [f"{name}:{','.join(cards) or '-'}" for name, cards in position["piles"].items()]
    counters = [f"{k}={v}" for k, v in position.get("counters", {}).items()]
    return " ".join(head) + " | " + " ".join(piles + counters)


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def parse_position_text(text: str) -> dict[str, Any]:
    """The position data of :func:`position_text` output (validated later by the game)."""
    head, bar, body = text.partition("|")
    words = head.split()
    if not bar or not words:
        raise BadInputError("a position reads 'GAME [KEY=VALUE ...] | PILE:CARDS ...'")
    options: dict[str, str] = {}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq:
            raise BadInputError(f"not an option: {word!r}")
        options[key] = value
    piles: dict[str, list[str]] = {}
    counters: dict[str, int] = {}
    for word in body.split():
        if ":" in word:
            name, _, cards = word.partition(":")
            piles[name] = [] if cards == "-" else cards.split(",")
        elif "=" in word:
            key, _, value = word.partition("=")
            try:
                counters[key] = int(value)
            except ValueError:
                raise BadInputError(f"counter {key} is a whole number, not {value!r}") from None
        else:
            raise BadInputError(f"not a pile or counter: {word!r}")
    return {"game": words[0], "options": options, "piles": piles, "counters": counters}
