"""Translation keys for the engine's sentences, so that the browser can say them in its language.

The engine explains itself in English (a rejected move's reason, a ledger line's reason). For
each sentence form this module knows, :func:`why` gives a key and the sentence's parameters;
the browser has a template per key in each language and shows the English text for any other.

>>> why("7♣ cannot go on 8♣: colours must alternate")
Why(k='alt_colour', p={'card': '7♣', 'top': '8♣'})
>>> why("nothing like it") is None
True
"""

from __future__ import annotations

import re

from patience.server.protocol import Why

__all__ = ["why"]

_CARD = r"(?:10|[2-9AJQK])[♠♥♦♣]"
_SUIT = r"[♠♥♦♣]"

_FORMS: list[tuple[str, str]] = [
    # rejected moves
    (r"(?P<card>§C) cannot go on (?P<top>§C): colours must alternate", "alt_colour"),
    (r"(?P<card>§C) cannot go on (?P<top>§C): the tableau builds down by one rank", "down_rank"),
    (r"(?P<card>§C) cannot go on (?P<top>§C): reserve piles build in suit", "reserve_suit"),
    (r"(?P<card>§C) cannot go on (?P<top>§C): reserve piles build down by one rank", "reserve_rank"),
    (r"only a King \(or a run headed by one\) may fill an empty pile, not (?P<card>§C)", "king_only"),
    (r"(?P<card>§C) goes only on the (?P<suit>§S) foundation", "found_suit"),
    (r"the (?P<suit>§S) foundation is complete", "found_complete"),
    (r"(?P<card>§C) cannot start a foundation: it starts with (?P<need>§C)", "found_start"),
    (r"(?P<card>§C) cannot go on the foundation: (?P<need>§C) comes next", "found_next"),
    (r"the stock is empty: redeal to turn the waste over", "stock_empty_redeal"),
    (r"the stock is empty", "stock_empty"),
    (r"the stock is not empty yet", "stock_not_empty"),
    (r"the waste is empty: nothing to turn over", "waste_empty_turn"),
    (r"the stock may be gone through (?P<n>\d+) times? only", "passes"),
    (r"a card cannot move onto its own pile", "own_pile"),
    (r"fan place (?P<pile>\w+) is empty.*", "fan_empty"),
    (r"reserve pile (?P<pile>\w+) is empty", "reserve_empty"),
    (r"only a reserve pile's top card moves to another reserve pile", "reserve_top_only"),
    (r"a reserve pile goes to the foundation whole \((?P<n>\d+) cards\) or by its top card", "reserve_whole"),
    (r"the waste is empty", "waste_empty"),
    (r"(?:talon|stock) cards are turned onto the waste first.*", "draw_first"),
    (r"cards never leave the foundations.*", "never_leave_foundation"),
    (r"cards (?:move|go to a foundation) one at a time.*", "one_at_a_time"),
    (r"cards never go back to the fan", "never_to_fan"),
    (r"no card may be put on the (?:talon|stock) or the waste", "not_on_stock"),
    (r"cards go only to the foundations in Teppich.*", "carpet_only_foundation"),
    (r"the stock only fills carpet gaps.*", "carpet_no_draw"),
    (r"carpet place (?P<pile>\w+) is empty", "carpet_empty"),
    (r"pile (?P<pile>\w+) is empty", "pile_empty"),
    (r"pile (?P<pile>\w+) has (?P<k>\d+) face-up cards? not (?P<n>\d+)", "face_up_count"),
    (r"pile (?P<pile>\w+) has (?P<k>\d+) face-up cards?, not (?P<n>\d+)", "face_up_count"),
    (r"only the waste's top card can move", "waste_top_only"),
    (r"foundation (?P<pile>\w+) is empty", "foundation_empty"),
    (r"only a foundation's top card can move", "foundation_top_only"),
    (r"a card from a foundation may only go back to the tableau", "foundation_to_tableau"),
    (r"this game has no undo", "no_undo_game"),
    (r"there is no move to undo", "no_undo_move"),
    (r"at most (?P<n>\d+) moves? back: make a move first", "undo_row"),
    (r"the game is over.*", "game_over"),
    (r"the table changed in another window.*", "stale"),
    # ledger lines
    (r"(?P<n>\d+) aces start the foundations", "l_start"),
    (r"(?P<card>§C) onto its foundation", "l_foundation"),
    (r"(?P<card>§C) onto a foundation \((?P<a>-?\d+) × (?P<b>\d+)\)", "l_foundation_x"),
    (r"(?P<card>§C) onto a foundation from a reserve pile", "l_foundation_reserve"),
    (r"(?P<card>§C) onto a foundation", "l_foundation"),
    (r"(?P<card>§C) turned face up", "l_reveal"),
    (r"(?P<card>§C) from the waste onto the tableau \((?P<a>-?\d+) × (?P<b>\d+)\)", "l_waste_tableau"),
    (r"(?P<card>§C) back from a foundation", "l_from_foundation"),
    (r"the stock turned over again", "l_redeal"),
    (r"(?P<s>\d+) s of play", "l_time"),
    (r"points of (?P<move>\S+) taken back", "l_take_back"),
    (r"undo of (?P<move>\S+)", "l_undo"),
    (r"the fan emptied", "l_fan_emptied"),
    (r"solved in (?P<steps>\d+) steps: (?P<a>\d+) \+ (?P<b>\d+) / \d+", "l_solved_steps"),
    (r"solved", "l_solved"),
    (r"what is left of the pool after (?P<s>\d+) s", "l_pool"),
    (r"the score never ends below 0", "l_floor"),
]

_COMPILED = [(re.compile("^" + form.replace("§C", _CARD).replace("§S", _SUIT) + "$"), key)
             for form, key in _FORMS]
_ILLEGAL = re.compile(r"^illegal move (?P<move>\S+): (?P<reason>.+)$")


def why(sentence: str) -> Why | None:
    """The translation key and parameters of one of the engine's sentences, or None."""
    illegal = _ILLEGAL.match(sentence)
    if illegal is not None:
        inner = why(illegal["reason"])
        params = {"move": illegal["move"]}
        if inner is not None:
            params.update(inner.p)
            params["rk"] = inner.k
        return Why("l_illegal", params)
    for pattern, key in _COMPILED:
        match = pattern.match(sentence)
        if match is not None:
            return Why(key, {k: v for k, v in match.groupdict().items() if v is not None})
    return None
