"""Drawing a player's view in a terminal: suit symbols, red suits in red where colour is on (rich's styles).

Only layout lives here; it draws what :meth:`State.view` gives (face-down cards are ``None``)
and knows no rule.
"""

from __future__ import annotations

from typing import Any, TextIO

from rich.color import ColorSystem
from rich.style import Style

__all__ = ["Painter", "draw_view"]

_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_FOUNDATIONS = ("fs", "fh", "fd", "fc")
_RED, _DIM, _BOLD = Style(color="red"), Style(dim=True), Style(bold=True)


class Painter:
    """Turns card texts into display forms, styled by rich (red suits in red) when the terminal has colour."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    @classmethod
    def for_stream(cls, stream: TextIO) -> Painter:
        """Colour where rich finds a terminal that has it (not a pipe, not TERM=dumb, no NO_COLOR)."""
        from rich.console import Console

        console = Console(file=stream)
        return cls(console.color_system is not None and not console.no_color)

    def _paint(self, text: str, style: Style) -> str:
        return style.render(text, color_system=ColorSystem.STANDARD) if self.colour else text

    def card(self, text: str | None, width: int = 3) -> str:
        if text is None:
            return self._paint("##".rjust(width), _DIM)
        shown = (text[:-1] + _SYMBOL[text[-1]]).rjust(width)
        return self._paint(shown, _RED) if text[-1] in "HD" else shown

    def dim(self, text: str) -> str:
        return self._paint(text, _DIM)

    def bold(self, text: str) -> str:
        return self._paint(text, _BOLD)


def _top(cards: list[str | None]) -> str | None:
    return cards[-1] if cards else None


def _foundations(view: dict[str, Any], p: Painter) -> str:
    parts = []
    for name in _FOUNDATIONS:
        cards = view["piles"][name]
        parts.append(p.card(cards[-1]) if cards else p.dim("  -"))
    return "Foundations " + " ".join(parts)


def _stock_waste(view: dict[str, Any], p: Painter, stock_word: str, passes_of: int | None) -> str:
    piles = view["piles"]
    text = f"{stock_word} s[{len(piles['s'])}]"
    if passes_of:
        text += f" pass {view['counters'].get('passes', 1)} of {passes_of}"
    if "w" in piles:
        waste = piles["w"]
        text += f"   waste w: {p.card(_top(waste)) if waste else p.dim('-')}"
        if len(waste) > 1:
            text += p.dim(f" ({len(waste)})")
    return text


def _draw_carpet(view: dict[str, Any], p: Painter) -> list[str]:
    opts = view["options"]
    rows, cols = opts["rows"], opts["cols"]
    lines = [_foundations(view, p), ""]
    for r in range(rows):
        cells = []
        for c in range(cols):
            name = f"c{r * cols + c + 1}"
            cards = view["piles"][name]
            shown = p.card(cards[0]) if cards else p.dim("  ·")
            cells.append(p.dim(f"{name:>4}") + " " + shown)
        lines.append("  ".join(cells))
    lines.append("")
    passes = opts.get("waste_passes") if opts.get("waste") else None
    lines.append(_stock_waste(view, p, "stock", passes))
    return lines


def _draw_reloaded(view: dict[str, Any], p: Painter) -> list[str]:
    piles = view["piles"]
    lines = [_stock_waste(view, p, "stock", None) + "    " + _foundations(view, p), ""]
    names = [f"t{i}" for i in range(1, 8)]
    lines.append(" ".join(p.dim(f"{n:>4}") for n in names))
    depth = max(len(piles[n]) for n in names)
    for row in range(max(depth, 1)):
        cells = []
        for n in names:
            cards = piles[n]
            if row < len(cards):
                cells.append(" " + p.card(cards[row]))
            else:
                cells.append(p.dim("   ·") if row == 0 else "    ")
        lines.append(" ".join(cells).rstrip())
    return lines


def _draw_faecher(view: dict[str, Any], p: Painter) -> list[str]:
    piles = view["piles"]
    lines = [_foundations(view, p), ""]
    fan = []
    for i in range(1, 10):
        cards = piles[f"v{i}"]
        fan.append(p.dim(f"v{i}") + " " + (p.card(cards[0]) if cards else p.dim("  ·")))
    lines.append("Fan       " + "  ".join(fan))
    reserves = []
    for i in range(1, 5):
        cards = piles[f"r{i}"]
        shown = " ".join(p.card(c).strip() for c in cards) if cards else p.dim("·")
        reserves.append(p.dim(f"r{i}") + " " + shown)
    lines.append("Reserves  " + "   ".join(reserves))
    lines.append("")
    lines.append(_stock_waste(view, p, "talon", view["options"].get("passes")))
    return lines


_DRAWERS = {"teppich": _draw_carpet, "reloaded": _draw_reloaded, "faecher": _draw_faecher}


def draw_view(view: dict[str, Any], painter: Painter) -> str:
    """The board of a player's view as lines of text."""
    return "\n".join(_DRAWERS[view["game"]](view, painter))
